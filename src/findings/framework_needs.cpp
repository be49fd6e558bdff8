#include "findings/framework_needs.hpp"

#include "core/filesystem.hpp"
#include "linkage/framework_load.hpp"
#include "python/pep440.hpp"
#include "python/pep508.hpp"
#include "versions/version_sources.hpp"

#include <algorithm>
#include <array>
#include <charconv>

namespace cudadiag::findings {
namespace {

// The first three numbers of a dotted version ("9.5.1.17" -> 9, 5, 1; "9.10" -> 9, 10, 0);
// nullopt when it does not start with digits.
std::optional<std::array<int, 3>> three_numbers(std::string_view version) {
  if (!versions::is_dotted_digits(version)) {
    return std::nullopt;
  }
  std::array<int, 3> numbers{0, 0, 0};
  std::size_t index = 0;
  const char* at = version.data();
  const char* end = version.data() + version.size();
  while (at < end && index < numbers.size()) {
    const auto [next, error] = std::from_chars(at, end, numbers[index]);
    if (error != std::errc()) {
      return std::nullopt;
    }
    ++index;
    at = next < end && *next == '.' ? next + 1 : end;
  }
  return numbers;
}

// A version tuple as Python prints it: "(9, 5, 1)".
std::string as_tuple(const std::array<int, 3>& numbers) {
  return "(" + std::to_string(numbers[0]) + ", " + std::to_string(numbers[1]) + ", " +
         std::to_string(numbers[2]) + ")";
}

bool is_cudnn_wheel(std::string_view canonical) {
  return canonical.starts_with("nvidia-cudnn-cu");
}

// torch's `==` pin on its nvidia-cudnn-cuNN wheel, from the primary environment's checked pins.
const python::FrameworkRequirement* torch_cudnn_pin(const discovery::DiscoveryResult& discovery) {
  for (const auto& requirement : discovery.framework_requirements) {
    if (python::canonical_name(requirement.framework) == "torch" &&
        is_cudnn_wheel(python::canonical_name(requirement.dependency)) &&
        requirement.specifier.starts_with("==") && requirement.specifier.find(',') == std::string::npos) {
      return &requirement;
    }
  }
  return nullptr;
}

} // namespace

std::optional<TorchCudnnVerdict> torch_cudnn_check(std::string_view torch_version, std::string_view compiled,
                                                   std::string_view runtime, const Environment& env) {
  const auto built = three_numbers(compiled);
  const auto found = three_numbers(runtime);
  if (!built || !found) {
    return std::nullopt;
  }
  TorchCudnnVerdict verdict;
  if ((*found)[0] != (*built)[0]) {
    verdict.compatible = false;
  } else if ((*found)[0] < 7) {
    verdict.compatible = (*found)[1] == (*built)[1];
  } else {
    verdict.compatible = (*found)[1] >= (*built)[1];
  }
  if (verdict.compatible) {
    verdict.words = "torch accepts it: its cuDNN check (torch.backends.cudnn) asks for the major " +
                    std::to_string((*built)[0]) +
                    " it was built with and, from cuDNN 7 on, a minor of at least " +
                    std::to_string((*built)[1]) + " (the patch level is not compared)";
    return verdict;
  }
  // The 1.x wording until pytorch/pytorch#80877 (July 2022, first released in 1.13).
  const auto release = versions::major_minor(torch_version);
  const bool torch1 = release && release->first == 1;
  const bool linked_wording = release && *release < std::pair(1, 13);
  if (!torch1 && env.get("PYTORCH_SKIP_CUDNN_COMPATIBILITY_CHECK") == "1") {
    verdict.skipped = true;
    verdict.words =
        "torch would refuse it (\"cuDNN version incompatibility\"), but "
        "PYTORCH_SKIP_CUDNN_COMPATIBILITY_CHECK=1 skips the check: cuDNN calls may fail or misbehave";
    return verdict;
  }
  if (linked_wording) {
    verdict.words = "cuDNN version incompatibility: PyTorch was compiled against " + as_tuple(*built) +
                    " but linked against " + as_tuple(*found);
    return verdict;
  }
  verdict.words =
      "cuDNN version incompatibility: PyTorch was compiled  against " + as_tuple(*built) +
      " but found runtime version " + as_tuple(*found) +
      ". PyTorch already comes bundled with cuDNN. One option to resolving this error is to ensure "
      "PyTorch can find the bundled cuDNN. ";
  if (const auto path = env.get("LD_LIBRARY_PATH")) {
    if (path->find("cuda") != std::string::npos || path->find("cudnn") != std::string::npos) {
      verdict.words +=
          "Looks like your LD_LIBRARY_PATH contains incompatible version of cudnn. Please either "
          "remove it from the path or install cudnn " +
          as_tuple(*built);
    } else {
      verdict.words += "one possibility is that there is a conflicting cuDNN in LD_LIBRARY_PATH.";
    }
  }
  return verdict;
}

std::optional<PinJudgement> judge_unmet_pin(const python::FrameworkRequirement& requirement,
                                            const Environment& env) {
  if (!requirement.installed || python::canonical_name(requirement.framework) != "torch" ||
      !is_cudnn_wheel(python::canonical_name(requirement.dependency)) ||
      !requirement.specifier.starts_with("==") || requirement.specifier.find(',') != std::string::npos) {
    return std::nullopt;
  }
  const auto verdict = torch_cudnn_check(requirement.framework_version, requirement.specifier.substr(2),
                                         *requirement.installed, env);
  if (!verdict) {
    return std::nullopt;
  }
  PinJudgement judgement;
  judgement.rule = "torch.backends.cudnn: same major, minor at least the compile-time one";
  if (verdict->compatible) {
    judgement.severity = Severity::info;
    judgement.why = "; the pin is what pip installed, not what torch checks: " + verdict->words;
  } else if (verdict->skipped) {
    judgement.severity = Severity::warning;
    judgement.why = "; " + verdict->words;
  } else {
    judgement.severity = Severity::error;
    judgement.why = "; torch raises at its first cuDNN call: \"" + verdict->words + "\"";
  }
  return judgement;
}

// The release of the file `path` as discovery read it for `component` (compared by real path);
// nullopt when discovery has no comparable version of that file.
std::optional<std::string> release_of_file(const discovery::DiscoveryResult& discovery,
                                           std::string_view component, const std::string& path) {
  const auto real = fs::real_path(path);
  const std::string wanted = real ? *real : path;
  for (const auto& result : discovery.components) {
    if (result.spec == nullptr || result.spec->name != component) {
      continue;
    }
    for (const auto& candidate : result.candidates) {
      if (candidate.realpath && *candidate.realpath == wanted && candidate.version &&
          !version_in_other_numbering(candidate) && versions::is_dotted_digits(candidate.version->version)) {
        return candidate.version->version;
      }
    }
  }
  return std::nullopt;
}

bool specifiers_overlap(std::string_view first, std::string_view second) {
  const auto a = python::parse_specifiers(first);
  const auto b = python::parse_specifiers(second);
  if (!a || !b) {
    return true;
  }
  std::vector<std::string> tried;
  for (const auto* set : {&*a, &*b}) {
    for (const auto& clause : *set) {
      auto version = clause.version;
      if (version.ends_with(".*")) {
        version.resize(version.size() - 2);
      }
      tried.push_back(version);
      tried.push_back(version + ".1");
    }
  }
  if (tried.empty()) {
    return true; // two empty sets: any release
  }
  return std::any_of(tried.begin(), tried.end(), [&](const std::string& version) {
    return python::satisfies(version, *a) && python::satisfies(version, *b);
  });
}

std::vector<PinConflict> pin_conflicts(const std::vector<python::FrameworkRequirement>& checked) {
  std::vector<PinConflict> conflicts;
  for (std::size_t i = 0; i < checked.size(); ++i) {
    for (std::size_t j = i + 1; j < checked.size(); ++j) {
      const auto& first = checked[i];
      const auto& second = checked[j];
      if (python::canonical_name(first.framework) == python::canonical_name(second.framework) ||
          python::canonical_name(first.dependency) != python::canonical_name(second.dependency) ||
          specifiers_overlap(first.specifier, second.specifier)) {
        continue;
      }
      conflicts.push_back({&first, &second});
    }
  }
  return conflicts;
}

std::vector<std::string> releases_whose_pin_fits(std::string_view framework, std::string_view dependency,
                                                 std::string_view specifier) {
  // Pins read from released METADATA files (the fixtures named).
  struct KnownPin {
    std::string_view framework;
    std::string_view version;
    std::string_view dependency;
    std::string_view pin;
  };
  static constexpr KnownPin k_pins[] = {
      {"torch", "2.8.0", "nvidia-cudnn-cu12", "==9.10.2.21"},  // tests/fixtures/releases/torch-2.8.0
      {"torch", "2.11.0", "nvidia-cudnn-cu13", "==9.19.0.56"}, // tests/fixtures/python_metadata
      {"jax-cuda12-plugin", "0.11.2", "nvidia-cudnn-cu12", "<10.0,>=9.10.2.21"}, // tests/fixtures/releases
      {"jax-cuda13-plugin", "0.11.2", "nvidia-cudnn-cu13", "<10.0,>=9.12.0.46"}, // tests/fixtures/releases
  };
  std::vector<std::string> fits;
  for (const auto& known : k_pins) {
    if (known.framework == python::canonical_name(framework) &&
        known.dependency == python::canonical_name(dependency) && specifiers_overlap(known.pin, specifier)) {
      fits.push_back(std::string(known.framework) + " " + std::string(known.version) + " (" +
                     std::string(known.dependency) + std::string(known.pin) + ")");
    }
  }
  return fits;
}

std::vector<Finding> evaluate_bound_needs(const discovery::DiscoveryResult& discovery,
                                          const linkage::Linkage& linkage, const Environment& env) {
  std::vector<Finding> out;
  const auto* pin = torch_cudnn_pin(discovery);
  const auto* spec = probes::find_component("cudnn", probes::ComponentKind::dynamic_lib);
  if (pin == nullptr || spec == nullptr) {
    return out;
  }
  for (const auto& framework : linkage.frameworks) {
    if (framework.framework != "torch") {
      continue;
    }
    const auto* bound = linkage::object_named(framework.closure.closure, spec->file_names);
    if (bound == nullptr) {
      continue;
    }
    const auto owner = owning_wheel_distribution(bound->path);
    if (owner && python::canonical_name(*owner) == python::canonical_name(pin->dependency)) {
      continue; // the pinned distribution's own file: python.requirement_unmet judges its release
    }
    const auto release = release_of_file(discovery, "cudnn", bound->path);
    if (!release) {
      continue;
    }
    const auto compiled = pin->specifier.substr(2);
    const auto verdict = torch_cudnn_check(framework.version, compiled, *release, env);
    if (!verdict || (verdict->compatible && three_numbers(compiled) == three_numbers(*release))) {
      continue;
    }
    const std::string who = "torch " + framework.version;
    const std::string where = " binds cuDNN " + *release + " (" + bound->path + "), not the " +
                              pin->dependency + pin->specifier + " it pins";
    std::string message;
    std::optional<Severity> severity;
    if (verdict->compatible) {
      message = who + where + "; " + verdict->words;
      severity = Severity::info;
    } else if (verdict->skipped) {
      message = who + where + "; " + verdict->words;
      severity = Severity::warning;
    } else {
      message = who + where + "; it raises at its first cuDNN call: \"" + verdict->words + "\"";
    }
    auto finding = make_finding("framework.version_rule", std::move(message), {"cudnn"},
                                {{"framework", framework.framework},
                                 {"framework_version", framework.version},
                                 {"component", "cudnn"},
                                 {"version", *release},
                                 {"path", bound->path},
                                 {"needs", pin->dependency + pin->specifier},
                                 {"rule", "torch.backends.cudnn: same major, minor at least " + compiled}},
                                severity);
    if (!verdict->compatible) {
      finding.remedy = "Make torch bind the cuDNN it pins: remove the directory of " + bound->path +
                       " from LD_LIBRARY_PATH (or from the loader's path), or install cuDNN " + compiled +
                       " or a newer minor of cuDNN " + std::to_string((*three_numbers(compiled))[0]) +
                       " there.";
    }
    out.push_back(std::move(finding));
  }
  return out;
}

} // namespace cudadiag::findings
