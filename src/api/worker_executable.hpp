#pragma once
// Which `cudadiag` executable the library's verification and self-test re-run as their isolated
// worker. The CLI re-runs itself (/proc/self/exe); an application embedding the library is not
// cudadiag, so the library needs the executable installed with it.

#include "core/environment.hpp"
#include "core/expected.hpp"

#include <string>

namespace cudadiag::api {

// The worker executable: `configured` when not empty; else the environment's CUDADIAG_EXECUTABLE
// when set and non-empty; else the cudadiag installed with this library (the directory holding
// libcudadiag.so, then CUDADIAG_LIBDIR_TO_BINDIR, then "cudadiag": /usr/lib/../bin/cudadiag).
// Error, naming the file and where the name came from, when that file is not an executable regular
// file. The worker must be the same version as the library; nothing else is searched (no PATH).
Expected<std::string> worker_executable(const std::string& configured, const Environment& env);

} // namespace cudadiag::api
