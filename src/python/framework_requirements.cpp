#include "python/framework_requirements.hpp"

#include "python/pep440.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <sys/utsname.h>

namespace cudadiag::python {

namespace {

// The frameworks whose requirements are checked (PEP 503 names).
constexpr std::array<std::string_view, 21> k_frameworks{
    "torch",
    "jax",
    "jaxlib",
    "jax-cuda12-plugin",
    "jax-cuda13-plugin",
    "jax-cuda12-pjrt",
    "jax-cuda13-pjrt",
    "cupy-cuda12x",
    "cupy-cuda13x",
    "tensorflow",
    "triton",
    "vllm",
    "numba-cuda",
    "cuda-python",
    "cuda-bindings",
    "cuda-core",
    "cuda-pathfinder",
    "nvmath-python",
    "cuda-toolkit",
    "torchvision",
    "torchaudio",
};

// Whether a dependency is part of the CUDA stack (the pins this check is about).
bool is_cuda_dependency(std::string_view canonical) {
  return canonical.starts_with("nvidia-") || canonical.starts_with("cuda-") || canonical.starts_with("jax") ||
         canonical.starts_with("cupy-") || canonical == "triton" || canonical == "torch" ||
         canonical == "tensorflow";
}

// Whether `marker` holds with `extra` set; nullopt when it cannot be evaluated here.
std::optional<bool> holds(const std::string& marker, MarkerEnvironment markers, const std::string& extra) {
  if (marker.empty()) {
    return true;
  }
  markers["extra"] = extra;
  const auto value = evaluate_marker(marker, markers);
  return value ? std::optional<bool>(*value) : std::nullopt;
}

} // namespace

bool is_framework(std::string_view canonical) {
  return std::find(k_frameworks.begin(), k_frameworks.end(), canonical) != k_frameworks.end();
}

MarkerEnvironment marker_environment(const PythonEnvironment& environment) {
  MarkerEnvironment markers = {{"os_name", "posix"},
                               {"sys_platform", "linux"},
                               {"platform_system", "Linux"},
                               {"platform_python_implementation", "CPython"},
                               {"implementation_name", "cpython"}};
  utsname host{};
  if (::uname(&host) == 0) {
    markers["platform_machine"] = host.machine;
    markers["platform_release"] = host.release;
  }
  if (!environment.version.empty()) {
    markers["python_version"] = environment.version;
  }
  return markers;
}

std::vector<FrameworkRequirement> checked_framework_requirements(const std::vector<Distribution>& installed,
                                                                 const MarkerEnvironment& markers) {
  std::map<std::string, const Distribution*, std::less<>> by_name;
  for (const auto& distribution : installed) {
    by_name.emplace(distribution.canonical_name, &distribution);
  }
  // The extras asked for each distribution by the unconditional requirements of the others
  // (torch's cuda-toolkit[cublas,...]): they switch on the asked distribution's extra requirements.
  std::map<std::string, std::set<std::string>, std::less<>> asked_extras;
  for (const auto& distribution : installed) {
    for (const auto& text : distribution.requires_dist) {
      const auto requirement = parse_requirement(text);
      if (requirement && !requirement->extras.empty() && holds(requirement->marker, markers, "") == true) {
        for (const auto& extra : requirement->extras) {
          asked_extras[canonical_name(requirement->name)].insert(canonical_name(extra));
        }
      }
    }
  }
  std::vector<FrameworkRequirement> checked;
  for (const auto& distribution : installed) {
    if (!is_framework(distribution.canonical_name)) {
      continue;
    }
    const auto extras_found = asked_extras.find(distribution.canonical_name);
    for (const auto& text : distribution.requires_dist) {
      const auto requirement = parse_requirement(text);
      if (!requirement || !is_cuda_dependency(canonical_name(requirement->name))) {
        continue;
      }
      std::optional<std::string> through_extra;
      auto applies = holds(requirement->marker, markers, "");
      if (applies == false && extras_found != asked_extras.end()) {
        for (const auto& extra : extras_found->second) {
          if (holds(requirement->marker, markers, extra) == true) {
            applies = true;
            through_extra = extra;
            break;
          }
        }
      }
      if (applies != true) {
        continue; // not for this environment, or not judged here
      }
      const auto specifiers = parse_specifiers(requirement->specifier);
      if (!specifiers) {
        continue;
      }
      FrameworkRequirement entry{distribution.name,      distribution.version, text, requirement->name,
                                 requirement->specifier, std::nullopt,         "",   through_extra};
      if (const auto found = by_name.find(canonical_name(requirement->name)); found != by_name.end()) {
        entry.installed = found->second->version;
        entry.installed_at = found->second->dist_info;
        entry.met = satisfies(found->second->version, *specifiers);
      }
      checked.push_back(std::move(entry));
    }
  }
  return checked;
}

std::vector<FrameworkRequirement> unmet_framework_requirements(const std::vector<Distribution>& installed,
                                                               const MarkerEnvironment& markers) {
  auto checked = checked_framework_requirements(installed, markers);
  std::erase_if(checked, [](const FrameworkRequirement& requirement) { return requirement.met; });
  return checked;
}

} // namespace cudadiag::python
