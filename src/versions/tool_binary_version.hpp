#pragma once
// The CUDA release a toolkit binary (ptxas, nvcc, nvdisasm, ...) comes from, read from the text its
// `--version` prints, which is stored in the file: "Cuda compilation tools, release 12.8, V12.8.93".
// The binary is never run: Triton's bundled ptxas, for one, is a file of a Python wheel that
// discovery must be able to describe on a machine where running it would be wrong (another
// architecture, a noexec mount) or slow.

#include "core/expected.hpp"

#include <cstddef>
#include <string>

namespace cudadiag::versions {

struct ToolRelease {
  std::string release; // "12.8": the toolkit release
  std::string version; // "12.8.93": the tool's own version (after the "V")
};

// At most this many bytes of a binary are read looking for the string (ptxas 13.0 is 37 MB; its
// string lies 26 MB in).
inline constexpr std::size_t k_tool_release_read_limit = std::size_t{256} << 20U;

// The first "Cuda compilation tools, release R, VX" in the file, read 64 KiB first, then in reads
// that double up to 1 MiB (the string may straddle two reads). Error when the file cannot be read,
// is not a regular file, or holds no such string (with a well-formed release and version) in its
// first k_tool_release_read_limit bytes.
Expected<ToolRelease> cuda_tool_release(const std::string& path);

} // namespace cudadiag::versions
