#include "verify/nvrtc_builtins_preload.hpp"

#include "core/filesystem.hpp"

#include <algorithm>
#include <string_view>

namespace cudadiag::verify {

namespace {

bool is_number(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// "13.0" from "libnvrtc.so.13.0.88" as cuda-pathfinder reads it (the first two dot-separated parts
// after "libnvrtc.so.", both digits); empty when the name has no such parts.
std::string major_minor_of(std::string_view file_name) {
  constexpr std::string_view k_prefix = "libnvrtc.so.";
  if (file_name.starts_with(k_prefix)) {
    file_name.remove_prefix(k_prefix.size());
  }
  const auto first_dot = file_name.find('.');
  if (first_dot == std::string_view::npos) {
    return {};
  }
  const auto major = file_name.substr(0, first_dot);
  const auto rest = file_name.substr(first_dot + 1);
  const auto minor = rest.substr(0, rest.find('.'));
  return is_number(major) && is_number(minor) ? std::string(major) + "." + std::string(minor) : std::string();
}

} // namespace

std::optional<std::string> pathfinder_builtins_preload(const std::string& nvrtc_path,
                                                       probes::PathfinderStep found_via) {
  using probes::PathfinderStep;
  if (found_via == PathfinderStep::conda || found_via == PathfinderStep::system_search ||
      found_via == PathfinderStep::none) {
    return std::nullopt;
  }
  const auto real = fs::real_path(nvrtc_path);
  if (!real) {
    return std::nullopt;
  }
  const std::string directory = fs::parent(*real);
  const std::string_view file_name =
      std::string_view(*real).substr(std::min(real->size(), directory.size() + 1));
  std::string version;
  if (found_via == PathfinderStep::site_packages) {
    constexpr std::string_view k_cuda13_wheel = "libnvrtc.so.13";
    if (file_name != k_cuda13_wheel && !file_name.starts_with("libnvrtc.so.13.")) {
      return std::nullopt;
    }
    version = "13.0";
  } else {
    version = major_minor_of(file_name);
  }
  if (version.empty()) {
    return std::nullopt;
  }
  std::string sibling = fs::join(directory, "libnvrtc-builtins.so." + version);
  return fs::is_regular_file(sibling) ? std::optional(std::move(sibling)) : std::nullopt;
}

std::optional<std::string> cuda_python_builtins_preload(const discovery::DiscoveryResult& discovery,
                                                        const std::string& nvrtc_path) {
  for (const auto& component : discovery.components) {
    if (component.spec != nullptr && component.spec->kind == probes::ComponentKind::dynamic_lib &&
        component.spec->name == "nvrtc") {
      const auto& selected = component.selected;
      return selected && selected->via.path == nvrtc_path
                 ? pathfinder_builtins_preload(nvrtc_path, selected->via.pathfinder_step)
                 : std::nullopt;
    }
  }
  return std::nullopt;
}

} // namespace cudadiag::verify
