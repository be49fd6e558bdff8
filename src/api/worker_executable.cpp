#include "api/worker_executable.hpp"

#include "core/filesystem.hpp"

#include <dlfcn.h>

#ifndef CUDADIAG_LIBDIR_TO_BINDIR
#error                                                                                                       \
    "CUDADIAG_LIBDIR_TO_BINDIR (the relative path from the library directory to the bin directory) must be defined"
#endif

namespace cudadiag::api {
namespace {

// The directory this library was loaded from, or "" when the loader cannot say.
std::string library_directory() {
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(&worker_executable), &info) == 0 || info.dli_fname == nullptr) {
    return {};
  }
  auto resolved = fs::real_path(info.dli_fname);
  return resolved ? fs::parent(*resolved) : std::string();
}

Expected<std::string> checked(std::string path, std::string_view origin) {
  if (!fs::is_executable_file(path)) {
    return Error{"the cudadiag worker executable " + path + " (" + std::string(origin) +
                 ") is not an executable file; set the \"executable\" option or CUDADIAG_EXECUTABLE"};
  }
  return path;
}

} // namespace

Expected<std::string> worker_executable(const std::string& configured, const Environment& env) {
  if (!configured.empty()) {
    return checked(configured, "from the options");
  }
  if (auto from_env = env.non_empty("CUDADIAG_EXECUTABLE")) {
    return checked(*from_env, "from CUDADIAG_EXECUTABLE");
  }
  const auto directory = library_directory();
  if (directory.empty()) {
    return Error{"cannot tell where libcudadiag was loaded from to find the cudadiag worker executable; "
                 "set the \"executable\" option or CUDADIAG_EXECUTABLE"};
  }
  return checked(fs::lexically_normal(fs::join(fs::join(directory, CUDADIAG_LIBDIR_TO_BINDIR), "cudadiag")),
                 "installed with the library");
}

} // namespace cudadiag::api
