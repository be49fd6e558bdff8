#include "findings/framework_load_rules.hpp"

#include "core/filesystem.hpp"
#include "core/text.hpp"
#include "linkage/torch_import.hpp"

#include <algorithm>
#include <string>

namespace cudadiag::findings {
namespace {

bool is_driver_library(std::string_view name) {
  return name == "libcuda.so.1" || name == "libcuda.so" || name == "libnvidia-ml.so.1";
}

// The SONAME-like base of a file name: "libcudart.so.11.0" -> "libcudart.so".
std::string_view library_stem(std::string_view name) {
  const auto at = name.find(".so");
  return at == std::string_view::npos ? name : name.substr(0, at + 3);
}

// A preload glob that picked another release of the library the load then missed (libcudart.so.11.0
// for libcudart.so.12): the cause pytorch/pytorch#147001 describes. Once loaded, that file stands
// in for nothing: its SONAME is not the one needed.
const linkage::FrameworkPreload* glob_that_picked_wrong(const linkage::FrameworkImport& import_model,
                                                        std::string_view missing_name) {
  for (const auto& preload : import_model.preloads) {
    const auto picked = fs::basename(preload.path);
    if (!preload.path.empty() && library_stem(picked) == library_stem(missing_name) &&
        picked != missing_name) {
      return &preload;
    }
  }
  return nullptr;
}

std::string uninstall_clause(const std::string& path) {
  if (const auto wheel = owning_wheel_distribution(path)) {
    return "`pip uninstall " + *wheel + "`";
  }
  return "remove " + path;
}

} // namespace

std::vector<Finding> evaluate_framework_loads(const linkage::Linkage& linkage) {
  std::vector<Finding> out;
  for (const auto& framework : linkage.frameworks) {
    if (framework.loads()) {
      continue;
    }
    const auto& closure = framework.closure.closure;
    const bool driver_only =
        closure.broken.empty() && closure.missing_versions.empty() && closure.unresolved.empty() &&
        !closure.root_error && !closure.missing.empty() &&
        std::all_of(closure.missing.begin(), closure.missing.end(),
                    [](const auto& missing) { return is_driver_library(missing.name); }) &&
        !(framework.import_model && framework.import_model->import_error);
    if (driver_only) {
      continue;
    }
    const std::string who = framework.framework + " " + framework.version;
    std::string message;
    std::string error;
    Evidence evidence = {
        {"framework", framework.framework}, {"version", framework.version}, {"library", framework.library}};
    if (framework.import_model && framework.import_model->import_error) {
      error = *framework.import_model->import_error;
      message = "`" + framework.import_model->statement + "` (" + who + ") fails before it loads " +
                fs::basename(framework.library) + ": " + error + " (" + framework.import_model->branch + ").";
      evidence["import_branch"] = framework.import_model->branch;
      evidence["model"] = framework.import_model->model;
    } else {
      error = linkage::dlerror_text(closure);
      message = who + "'s " + fs::basename(framework.library) + " does not load: \"" + error + "\"" +
                (framework.framework == "torch" ? ": `import torch` fails."
                                                : ": the framework cannot use the GPU.");
    }
    evidence["error"] = error;
    std::string remedy;
    const std::string missing_name = closure.missing.empty() ? std::string() : closure.missing.front().name;
    if (!missing_name.empty()) {
      evidence["missing"] = missing_name;
    }
    const auto* wrong = framework.framework == "torch" && framework.import_model && !missing_name.empty()
                            ? glob_that_picked_wrong(*framework.import_model, missing_name)
                            : nullptr;
    if (wrong != nullptr) {
      message +=
          " torch's preload glob " + wrong->pattern + " picked " + wrong->path +
          (wrong->passed_over.empty() ? std::string(" (the first sys.path entry with a match)")
                                      : " first (the order the directory lists its files), passing over " +
                                            join(wrong->passed_over, ", ")) +
          ": pytorch/pytorch#147001.";
      evidence["picked"] = wrong->path;
      evidence["passed_over"] = wrong->passed_over;
      remedy = uninstall_clause(wrong->path) + ": the copy torch needs, " + missing_name +
               ", is then the only match";
    } else if (!missing_name.empty()) {
      remedy = "install the CUDA wheels " + framework.framework + " " + framework.version +
               " pins (`pip install --force-reinstall '" + framework.framework + "==" + framework.version +
               "'`) in the environment it runs in, or make " + missing_name +
               " reachable where its loader looks (its RUNPATH, LD_LIBRARY_PATH, ld.so.cache)";
    } else {
      remedy = "reinstall the CUDA wheels " + framework.framework + " " + framework.version +
               " pins (`pip install --force-reinstall '" + framework.framework + "==" + framework.version +
               "'`) so that each library it loads is the release it was built against";
    }
    auto finding = make_finding("framework.load_fails", std::move(message), {}, std::move(evidence));
    finding.remedy = std::move(remedy);
    out.push_back(std::move(finding));
  }
  return out;
}

} // namespace cudadiag::findings
