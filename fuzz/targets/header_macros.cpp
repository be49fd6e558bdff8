// An include directory: part 1 is <cuda/version>, part 2 <thrust/version.h>, part 3
// <cub/version.cuh>, part 4 <cuda_runtime_api.h> (also read as <cuda.h>).
#include "targets.hpp"
#include "versions/version_sources.hpp"

namespace cudadiag::fuzz {

int header_macros(const std::uint8_t* data, std::size_t size) {
  const auto parts = split_input(data, size, 4);
  const auto include = fresh_dir("include");
  write_file(include + "/cuda/version", parts[0]);
  write_file(include + "/cuda/std/version", parts[0]);
  write_file(include + "/thrust/version.h", parts[1]);
  write_file(include + "/cub/version.cuh", parts[2]);
  write_file(include + "/cuda_runtime_api.h", parts[3]);
  write_file(include + "/cuda.h", parts[3]);
  static_cast<void>(versions::cccl_version_from_headers(include));
  static_cast<void>(versions::cuda_version_from_header(include, "cuda_runtime_api.h", "CUDART_VERSION"));
  static_cast<void>(versions::cuda_version_from_header(include, "cuda.h", "CUDA_VERSION"));
  return 0;
}

} // namespace cudadiag::fuzz
