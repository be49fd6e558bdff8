#include "targets.hpp"
#include "versions/version_sources.hpp"

#include <array>

namespace cudadiag::fuzz {

int version_json(const std::uint8_t* data, std::size_t size) {
  const auto toolkit = fresh_dir("toolkit");
  write_file(toolkit + "/version.json", std::string_view(reinterpret_cast<const char*>(data), size));
  constexpr std::array<std::string_view, 2> k_keys = {"cuda_nvrtc", "libcublas"};
  static_cast<void>(versions::version_from_toolkit_json(toolkit, k_keys));
  static_cast<void>(versions::toolkit_version(toolkit));
  return 0;
}

} // namespace cudadiag::fuzz
