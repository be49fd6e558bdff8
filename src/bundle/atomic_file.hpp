#pragma once
// Writing an output file (bundle, JUnit XML, HTML) so that nothing half-written is ever left at
// the target path: a reader sees the old file, no file, or the complete new one.

#include "core/expected.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace cudadiag::bundle {

// Writes `content` to `path` with permissions `mode`: the bytes go to a temporary file in the same
// directory, are flushed to disk (fsync), and the file is renamed over `path`. On any failure the
// temporary file is removed, `path` is untouched, and the Error names the path and the reason
// ("cannot write /x/out.tar.gz: Permission denied"). A directory at `path` is an error.
std::optional<Error> write_file_atomically(const std::string& path, std::string_view content,
                                           unsigned mode = 0644);

} // namespace cudadiag::bundle
