// A conda prefix with one record: part 1 is the JSON, part 2 the version-build part of its file
// name (conda-meta/cuda-nvrtc-<part 2>.json).
#include "targets.hpp"
#include "versions/version_sources.hpp"

#include <array>

namespace cudadiag::fuzz {

int conda_meta(const std::uint8_t* data, std::size_t size) {
  const auto parts = split_input(data, size, 2);
  const auto prefix = fresh_dir("conda");
  write_file(prefix + "/conda-meta/cuda-nvrtc-" + file_name_part(parts[1]) + ".json", parts[0]);
  constexpr std::array<std::string_view, 2> k_names = {"cuda-nvrtc", "cuda-nvrtc-dev"};
  static_cast<void>(versions::version_from_conda_meta(prefix, k_names));
  return 0;
}

} // namespace cudadiag::fuzz
