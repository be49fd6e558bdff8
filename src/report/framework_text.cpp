#include "report/framework_text.hpp"

#include "core/filesystem.hpp"
#include "core/text.hpp"
#include "python/pep508.hpp"
#include "report/json_report.hpp"
#include "report/text_layout.hpp"

#include <filesystem>
#include <map>

namespace cudadiag::report {
namespace {

// "torch 2.11.0 (CUDA 13.0; sm_80 sm_90)" facts of one distribution, from discovery.frameworks.
std::string build_facts(const python::FrameworkBuild& build) {
  std::string code;
  for (const auto& gpu : build.gpu_code.value_or(std::vector<elf::GpuCode>{})) {
    code += " " + gpu.name();
  }
  return (build.tool.empty() ? "" : to_valid_utf8(build.tool) + " ") + "built for CUDA " +
         to_valid_utf8(build.cuda) + (code.empty() ? "" : " (" + code.substr(1) + ")");
}

// Whether CUDA Python (cuda-pathfinder) picks a copy of `component` here.
bool python_selects(const Report& report, std::string_view component) {
  for (const auto& result : report.discovery.components) {
    if (result.spec != nullptr && result.spec->name == component &&
        result.spec->kind == probes::ComponentKind::dynamic_lib) {
      return result.selected.has_value();
    }
  }
  return false;
}

// The framework's closure as rows: each catalog library, its version, its copy, how it is reached,
// and whether it is the file CUDA Python selects.
std::string loads_table(const Report& report, const linkage::FrameworkLinkage& framework, TextStyle style) {
  const auto& answer = framework.closure;
  const auto& closure = answer.closure;
  std::string out;
  std::size_t preloaded = 0;
  if (framework.import_model) {
    for (const auto& preload : framework.import_model->preloads) {
      preloaded += preload.outcome == "loaded" || preload.outcome == "already loaded" ? 1U : 0U;
    }
  }
  std::string head =
      fs::basename(framework.library) + " " +
      (framework.loads() ? paint(style, k_green, "loads") : paint(style, k_red, "fails to load"));
  if (framework.import_model) {
    const auto& opened = *framework.import_model;
    head += "; " + opened.statement + " (" + opened.model + ") " +
            (preloaded == 0 ? std::string("preloads nothing") : "preloads " + std::to_string(preloaded)) +
            ": " + opened.branch;
    if (opened.import_error) {
      head += "; " + paint(style, k_red, *opened.import_error);
    }
  }
  out += wrap(to_valid_utf8(escape_controls(head, style)), style.width, "    ", "      ");
  TextTable table;
  table.indent = 6;
  table.flexible = 2;
  for (std::size_t i = 0; i < closure.objects.size(); ++i) {
    const auto& facts = answer.facts[i];
    if (facts.component.empty()) {
      continue;
    }
    const auto& object = closure.objects[i];
    const auto shown = std::filesystem::path(object.path).lexically_normal().string();
    table.rows.push_back(std::vector<std::string>{
        facts.component, facts.version.empty() ? std::string("-") : facts.version,
        escape_controls(to_valid_utf8(shown), style), std::string(loader::to_string(object.route)),
        facts.selected                            ? std::string("= CUDA Python's")
        : python_selects(report, facts.component) ? paint(style, k_yellow, "not CUDA Python's")
                                                  : std::string("CUDA Python finds none")});
  }
  out += render_table(table, style.width, style.color);
  return out;
}

} // namespace

std::string render_frameworks_section(const Report& report, TextStyle style) {
  const auto& discovery = report.discovery;
  if (discovery.frameworks.empty()) {
    return {};
  }
  std::string out = "\n" + paint(style, k_bold, "Python frameworks") + "\n";
  // One block per distribution, in discovery's order; a distribution listed twice (Triton's two
  // ptxas) is one block.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const python::FrameworkBuild*>> builds;
  for (const auto& build : discovery.frameworks) {
    const auto key = build.framework + " " + build.version;
    if (builds[key].empty()) {
      order.push_back(key);
    }
    builds[key].push_back(&build);
  }
  for (const auto& key : order) {
    const auto& first = *builds[key].front();
    std::string line = to_valid_utf8(key) + ":";
    for (std::size_t i = 0; i < builds[key].size(); ++i) {
      line += (i == 0 ? " " : ", ") + build_facts(*builds[key][i]);
    }
    int met = 0;
    int checked = 0;
    for (const auto& requirement : discovery.framework_requirements) {
      if (requirement.framework == first.framework && requirement.framework_version == first.version) {
        met += requirement.met ? 1 : 0;
        checked += 1;
      }
    }
    if (checked > 0) {
      line += "; CUDA pins met " + std::to_string(met) + " of " + std::to_string(checked);
    }
    // The pins not judged, by reason: "12 not judged: its extra [with-cuda] is not requested: ...".
    std::map<std::string, int> unjudged;
    for (const auto& requirement : discovery.framework_requirements_not_judged) {
      if (requirement.framework == first.framework && requirement.framework_version == first.version) {
        ++unjudged[requirement.reason];
      }
    }
    for (const auto& [reason, count] : unjudged) {
      line += "; " + std::to_string(count) + (count == 1 ? " pin" : " pins") + " not judged (" + reason + ")";
    }
    std::vector<std::string> ids;
    for (const auto& finding : report.findings) {
      const auto* named = finding.evidence.string("framework");
      if (named != nullptr && python::canonical_name(*named) == python::canonical_name(first.framework)) {
        ids.push_back(finding.id);
      }
    }
    if (!ids.empty()) {
      line += "; findings: " + join(ids, ", ");
    }
    out += wrap(line, style.width, "  ", "    ");
    bool modelled = false;
    for (const auto& framework : report.linkage.frameworks) {
      if (framework.framework == first.framework && framework.version == first.version) {
        out += loads_table(report, framework, style);
        modelled = true;
      }
    }
    const auto name = python::canonical_name(first.framework);
    if (!modelled && (name.starts_with("cupy-") || name == "cuda-core" || name == "numba-cuda")) {
      out += wrap("loads through cuda-pathfinder: the components' \"selected\" copies", style.width, "    ",
                  "      ");
    }
  }
  return out;
}

} // namespace cudadiag::report
