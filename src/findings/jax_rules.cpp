#include "findings/jax_rules.hpp"

#include "findings/framework_needs.hpp"
#include "linkage/framework_load.hpp"
#include "python/pep508.hpp"
#include "versions/version_sources.hpp"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>

namespace cudadiag::findings {
namespace {

// The copy JAX binds of `component` and its version: the file its plugin's closure holds
// (linkage.frameworks, `find --for jax`'s answer: the wheel _load_nvidia_libraries opened, else what
// xla_cuda_plugin.so's own load found), else the site-packages wheel (JAX's _load_nvidia_libraries),
// else what dlopen(SONAME) finds.
struct Loaded {
  std::string path;
  std::string version;
  bool bound = false; // from the plugin's closure

  // versions::compare_versions against `other`: <0 older, 0 equal, >0 newer.
  [[nodiscard]] int compare(std::string_view other) const {
    return versions::compare_versions(version, other);
  }
};
std::optional<Loaded> jax_loads(const discovery::DiscoveryResult& discovery, const linkage::Linkage* linkage,
                                std::string_view component) {
  if (linkage != nullptr) {
    const auto* spec = probes::find_component(component, probes::ComponentKind::dynamic_lib);
    for (const auto& framework : linkage->frameworks) {
      const auto name = python::canonical_name(framework.framework);
      if (spec == nullptr || !name.starts_with("jax-cuda") || !name.ends_with("-pjrt")) {
        continue;
      }
      if (const auto* bound = linkage::object_named(framework.closure.closure, spec->file_names)) {
        if (const auto release = release_of_file(discovery, component, bound->path);
            release && versions::is_dotted_digits(*release)) {
          return Loaded{bound->path, *release, true};
        }
      }
    }
  }
  for (const auto& result : discovery.components) {
    if (result.spec == nullptr || result.spec->kind != probes::ComponentKind::dynamic_lib ||
        result.spec->name != component) {
      continue;
    }
    const auto& choice =
        result.selected && result.selected->via.pathfinder_step == probes::PathfinderStep::site_packages
            ? result.selected
            : result.loader;
    if (!choice || choice->candidate >= result.candidates.size()) {
      return std::nullopt;
    }
    const auto& candidate = result.candidates[choice->candidate];
    if (!candidate.version || !versions::is_dotted_digits(candidate.version->version)) {
      return std::nullopt;
    }
    return Loaded{choice->via.path, candidate.version->version};
  }
  return std::nullopt;
}

// A version in the integer JAX's check prints (jaxlib/cuda/versions_helpers.cc): CUDA runtime
// major*1000 + minor*10, cuBLAS major*10000 + minor*100 + patch, cuSPARSE major*1000 + minor*100 +
// patch.
std::string jax_integer(std::string_view component, std::string_view version) {
  int numbers[3] = {0, 0, 0};
  std::size_t index = 0;
  for (std::size_t at = 0; at < version.size() && index < 3; ++index) {
    const auto dot = version.find('.', at);
    const auto part = version.substr(at, dot == std::string_view::npos ? std::string_view::npos : dot - at);
    numbers[index] = std::atoi(std::string(part).c_str());
    at = dot == std::string_view::npos ? version.size() : dot + 1;
  }
  if (component == "cudart") {
    return std::to_string(numbers[0] * 1000 + numbers[1] * 10);
  }
  if (component == "cublas") {
    return std::to_string(numbers[0] * 10000 + numbers[1] * 100 + numbers[2]);
  }
  return std::to_string(numbers[0] * 1000 + numbers[1] * 100 + numbers[2]);
}

} // namespace

std::vector<Finding> evaluate_jax_checks(const discovery::DiscoveryResult& discovery,
                                         const verify::Verification& verification, const Environment& env,
                                         const linkage::Linkage* linkage) {
  std::vector<Finding> out;
  const auto plugin =
      std::find_if(discovery.frameworks.begin(), discovery.frameworks.end(), [](const auto& build) {
        const auto name = python::canonical_name(build.framework);
        return name.starts_with("jax-cuda") && name.ends_with("-pjrt");
      });
  if (plugin == discovery.frameworks.end() || env.non_empty("JAX_SKIP_CUDA_CONSTRAINTS_CHECK")) {
    return out;
  }
  const std::string jax = plugin->framework + " " + plugin->version;
  const auto raise = [&](const Loaded& loaded, std::string_view component, const std::string& rule,
                         Severity severity) {
    out.push_back(make_finding(
        "framework.version_rule",
        jax + (severity == Severity::error ? " refuses to start" : " warns at startup") + ": " + rule + " (" +
            std::string(component) + " " + loaded.version + ", " + loaded.path + ")",
        {std::string(component)},
        {{"framework", plugin->framework},
         {"framework_version", plugin->version},
         {"component", std::string(component)},
         {"version", loaded.version},
         {"path", loaded.path},
         {"rule", rule}},
        severity));
  };
  // The absolute floors (min_supported_version).
  struct Floor {
    std::string_view component;
    std::string_view name; // as the rule names it
    std::string_view jax;  // as JAX's message names it
    std::string_view minimum;
  };
  for (const auto& floor :
       {Floor{"cudart", "CUDA runtime", "CUDA", "12.1"}, Floor{"cublas", "cuBLAS", "cuBLAS", "12.1"},
        Floor{"cusparse", "cuSPARSE", "cuSPARSE", "12.1"}}) {
    if (const auto loaded = jax_loads(discovery, linkage, floor.component);
        loaded && loaded->compare(floor.minimum) < 0) {
      const auto minimum = jax_integer(floor.component, floor.minimum);
      raise(*loaded, floor.component,
            "JAX needs " + std::string(floor.name) + " " + std::string(floor.minimum) +
                " or newer (\"Unable to use CUDA because of the following issues with CUDA components: "
                "Outdated " +
                std::string(floor.jax) + " installation found. ... Minimum supported: " + minimum +
                " Installed version: " + jax_integer(floor.component, loaded->version) +
                " The local installation version must be no lower than " + minimum + ".\")" +
                (loaded->bound ? "; the copy its plugin binds" : ""),
            Severity::error);
    }
  }
  const auto cudnn = jax_loads(discovery, linkage, "cudnn");
  const auto cublas = jax_loads(discovery, linkage, "cublas");
  if (cudnn && cudnn->compare("9.10.0") >= 0 && cudnn->compare("9.10.1") < 0) {
    raise(
        *cudnn, "cudnn",
        "cuDNN 9.10.0 broke binary backward compatibility (reordered enum values of block-scale data types); "
        "JAX asks for 9.10.1 or newer",
        Severity::error);
  }
  const auto gpus = verification.devices.size();
  if (cudnn && cublas && cudnn->compare("9.10.1") < 0 && cublas->compare("12.9") >= 0 && gpus > 1) {
    raise(*cudnn, "cudnn",
          "cuDNN older than 9.10.1 with cuBLAS " + cublas->version + " (12.9 or newer) on " +
              std::to_string(gpus) +
              " GPUs computes some multi-GPU matmuls wrongly; JAX asks for cuDNN 9.10.1 or newer",
          Severity::error);
  }
  const bool tmem_gpu =
      std::any_of(verification.devices.begin(), verification.devices.end(), [](const auto& device) {
        if (!device.driver || !device.driver->compute_capability) {
          return false;
        }
        const auto cc = versions::major_minor(*device.driver->compute_capability);
        return cc && (cc->first == 10 || cc->first == 11);
      });
  if (cublas && tmem_gpu && cublas->compare("12.8") >= 0 && cublas->compare("13.2") < 0) {
    raise(*cublas, "cublas",
          "cuBLAS 12.8 up to 13.2 frees Tensor Memory twice in many kernels on compute capability 10.x and "
          "11.x GPUs: "
          "a cuBLAS kernel running concurrently with another one (another stream) can silently corrupt data",
          Severity::warning);
  }
  return out;
}

} // namespace cudadiag::findings
