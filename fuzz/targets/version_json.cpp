#include "targets.hpp"
#include "versions/tool_binary_version.hpp"
#include "versions/version_sources.hpp"

#include <array>

namespace cudadiag::fuzz {

int version_json(const std::uint8_t* data, std::size_t size) {
  const auto toolkit = fresh_dir("toolkit");
  write_file(toolkit + "/version.json", std::string_view(reinterpret_cast<const char*>(data), size));
  constexpr std::array<std::string_view, 2> k_keys = {"cuda_nvrtc", "libcublas"};
  static_cast<void>(versions::version_from_toolkit_json(toolkit, k_keys));
  static_cast<void>(versions::toolkit_version(toolkit));
  // The same bytes as a toolkit binary whose "Cuda compilation tools, release R, VX" is looked for
  // (Triton's ptxas): a version found must be digits and dots.
  write_file(toolkit + "/ptxas", std::string_view(reinterpret_cast<const char*>(data), size));
  if (const auto release = versions::cuda_tool_release(toolkit + "/ptxas")) {
    for (const auto& text : {release.value().release, release.value().version}) {
      check(!text.empty() && text.find_first_not_of("0123456789.") == std::string::npos,
            "a tool release is digits and dots");
    }
  }
  return 0;
}

} // namespace cudadiag::fuzz
