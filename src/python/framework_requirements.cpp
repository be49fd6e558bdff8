#include "python/framework_requirements.hpp"

#include "python/pep440.hpp"

#include <algorithm>
#include <array>
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

namespace {

// The extras `marker` compares `extra` with (`extra == "with-cuda"`, `'cuda12' == extra`), as PEP 503 names.
std::set<std::string> extras_named(std::string_view marker) {
  std::set<std::string> names;
  const auto skip_spaces = [&](std::size_t at) {
    while (at < marker.size() && (marker[at] == ' ' || marker[at] == '\t')) {
      ++at;
    }
    return at;
  };
  for (auto at = marker.find("extra"); at != std::string_view::npos; at = marker.find("extra", at + 5)) {
    // extra == "name"
    auto next = skip_spaces(at + 5);
    if (marker.substr(next, 2) == "==") {
      next = skip_spaces(next + 2);
      if (next < marker.size() && (marker[next] == '"' || marker[next] == '\'')) {
        const auto close = marker.find(marker[next], next + 1);
        if (close != std::string_view::npos) {
          names.insert(canonical_name(marker.substr(next + 1, close - next - 1)));
        }
      }
      continue;
    }
    // "name" == extra
    auto back = at;
    while (back > 0 && (marker[back - 1] == ' ' || marker[back - 1] == '\t')) {
      --back;
    }
    if (back >= 2 && marker.substr(back - 2, 2) == "==") {
      back -= 2;
      while (back > 0 && (marker[back - 1] == ' ' || marker[back - 1] == '\t')) {
        --back;
      }
      if (back > 0 && (marker[back - 1] == '"' || marker[back - 1] == '\'')) {
        const auto open = marker.rfind(marker[back - 1], back - 2);
        if (back >= 2 && open != std::string_view::npos) {
          names.insert(canonical_name(marker.substr(open + 1, back - 2 - open)));
        }
      }
    }
  }
  return names;
}

// A distribution's parsed Requires-Dist lines (the unparsable ones left out).
std::vector<Requirement> parsed_requirements(const Distribution& distribution) {
  std::vector<Requirement> parsed;
  for (const auto& text : distribution.requires_dist) {
    if (auto requirement = parse_requirement(text)) {
      parsed.push_back(std::move(*requirement));
    }
  }
  return parsed;
}

// The names of what the extra `extra` of a distribution adds beyond its unconditional requirements.
std::set<std::string> own_distributions(const std::vector<Requirement>& requirements,
                                        const MarkerEnvironment& markers, const std::string& extra) {
  std::set<std::string> always;
  std::set<std::string> added;
  for (const auto& requirement : requirements) {
    if (holds(requirement.marker, markers, "") == true) {
      always.insert(canonical_name(requirement.name));
    } else if (holds(requirement.marker, markers, extra) == true) {
      added.insert(canonical_name(requirement.name));
    }
  }
  std::erase_if(added, [&](const std::string& name) { return always.count(name) != 0; });
  return added;
}

} // namespace

std::map<std::string, std::set<std::string>, std::less<>>
requested_extras(const std::vector<Distribution>& installed, const MarkerEnvironment& markers) {
  std::set<std::string, std::less<>> names;
  std::vector<std::vector<Requirement>> requirements;
  std::vector<std::set<std::string>> mentioned; // the extras each distribution's markers name
  for (const auto& distribution : installed) {
    names.insert(distribution.canonical_name);
    requirements.push_back(parsed_requirements(distribution));
    mentioned.emplace_back();
    for (const auto& requirement : requirements.back()) {
      mentioned.back().merge(extras_named(requirement.marker));
    }
  }
  // First the extras an applying requirement asks for, followed through the extras so asked.
  std::map<std::string, std::set<std::string>, std::less<>> asked;
  for (bool changed = true; changed;) {
    changed = false;
    for (std::size_t i = 0; i < installed.size(); ++i) {
      const auto& mine = asked[installed[i].canonical_name];
      for (const auto& requirement : requirements[i]) {
        if (requirement.extras.empty()) {
          continue;
        }
        bool applies = holds(requirement.marker, markers, "") == true;
        for (auto extra = mine.begin(); !applies && extra != mine.end(); ++extra) {
          applies = holds(requirement.marker, markers, *extra) == true;
        }
        if (applies) {
          for (const auto& extra : requirement.extras) {
            changed |= asked[canonical_name(requirement.name)].insert(canonical_name(extra)).second;
          }
        }
      }
    }
  }
  // Then the extras whose own distributions are all installed. They do not ask in turn: jax's
  // `cuda12` and `cuda12-local` add the same distribution (the plugin) and differ only in asking
  // for its `with-cuda`, so which one was installed shows only at the next level, by the same rule.
  auto requested = asked;
  for (std::size_t i = 0; i < installed.size(); ++i) {
    auto& mine = requested[installed[i].canonical_name];
    for (const auto& extra : mentioned[i]) {
      if (mine.count(extra) != 0) {
        continue;
      }
      const auto own = own_distributions(requirements[i], markers, extra);
      if (!own.empty() && std::all_of(own.begin(), own.end(),
                                      [&](const std::string& name) { return names.count(name) != 0; })) {
        mine.insert(extra);
      }
    }
  }
  std::erase_if(requested, [](const auto& entry) { return entry.second.empty(); });
  return requested;
}

FrameworkPins judge_framework_requirements(const std::vector<Distribution>& installed,
                                           const MarkerEnvironment& markers) {
  std::map<std::string, const Distribution*, std::less<>> by_name;
  for (const auto& distribution : installed) {
    by_name.emplace(distribution.canonical_name, &distribution);
  }
  const auto requested = requested_extras(installed, markers);
  FrameworkPins pins;
  for (const auto& distribution : installed) {
    if (!is_framework(distribution.canonical_name)) {
      continue;
    }
    const auto extras_found = requested.find(distribution.canonical_name);
    const auto requirements = parsed_requirements(distribution);
    for (std::size_t line = 0; line < distribution.requires_dist.size(); ++line) {
      const auto& text = distribution.requires_dist[line];
      const auto requirement = parse_requirement(text);
      if (!requirement || !is_cuda_dependency(canonical_name(requirement->name))) {
        continue;
      }
      std::optional<std::string> through_extra;
      auto applies = holds(requirement->marker, markers, "");
      if (applies == false && extras_found != requested.end()) {
        for (const auto& extra : extras_found->second) {
          if (holds(requirement->marker, markers, extra) == true) {
            applies = true;
            through_extra = extra;
            break;
          }
        }
      }
      if (applies != true) {
        // Not for this environment, or not judged here: say which and why.
        std::string reason;
        if (!applies) {
          reason = "its marker cannot be evaluated here";
        } else {
          for (const auto& extra : extras_named(requirement->marker)) {
            if (holds(requirement->marker, markers, extra) == true) {
              const auto own = own_distributions(requirements, markers, extra);
              const auto present = std::count_if(
                  own.begin(), own.end(), [&](const std::string& name) { return by_name.count(name) != 0; });
              reason = "its extra [" + extra + "] is not requested: nothing installed asks for " +
                       distribution.name + "[" + extra + "], and " + std::to_string(present) + " of the " +
                       std::to_string(own.size()) + " distributions it adds are installed";
              break;
            }
          }
        }
        if (!reason.empty()) {
          pins.not_judged.push_back(
              {distribution.name, distribution.version, text, requirement->name, reason});
        }
        continue;
      }
      const auto specifiers = parse_specifiers(requirement->specifier);
      if (!specifiers) {
        pins.not_judged.push_back({distribution.name, distribution.version, text, requirement->name,
                                   "its version specifier cannot be parsed"});
        continue;
      }
      FrameworkRequirement entry{distribution.name,      distribution.version, text, requirement->name,
                                 requirement->specifier, std::nullopt,         "",   through_extra};
      if (const auto found = by_name.find(canonical_name(requirement->name)); found != by_name.end()) {
        entry.installed = found->second->version;
        entry.installed_at = found->second->dist_info;
        entry.met = satisfies(found->second->version, *specifiers);
      }
      pins.checked.push_back(std::move(entry));
    }
  }
  return pins;
}

std::vector<FrameworkRequirement> checked_framework_requirements(const std::vector<Distribution>& installed,
                                                                 const MarkerEnvironment& markers) {
  return judge_framework_requirements(installed, markers).checked;
}

std::vector<FrameworkRequirement> unmet_framework_requirements(const std::vector<Distribution>& installed,
                                                               const MarkerEnvironment& markers) {
  auto checked = checked_framework_requirements(installed, markers);
  std::erase_if(checked, [](const FrameworkRequirement& requirement) { return requirement.met; });
  return checked;
}

} // namespace cudadiag::python
