// A site-packages directory with one dist-info: part 1 is METADATA, part 2 the version part of
// the directory name (nvidia_cuda_nvrtc-<part 2>.dist-info).
#include "targets.hpp"
#include "versions/version_sources.hpp"

#include <array>

namespace cudadiag::fuzz {

int dist_info(const std::uint8_t* data, std::size_t size) {
  const auto parts = split_input(data, size, 2);
  const auto site = fresh_dir("site");
  write_file(site + "/nvidia_cuda_nvrtc-" + file_name_part(parts[1]) + ".dist-info/METADATA", parts[0]);
  constexpr std::array<std::string_view, 2> k_names = {"nvidia-cuda-nvrtc", "nvidia_cuda_nvrtc_cu12"};
  static_cast<void>(versions::version_from_dist_info(site, k_names));
  return 0;
}

} // namespace cudadiag::fuzz
