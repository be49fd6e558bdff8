#include "report/text_report.hpp"

#include "report/json_report.hpp"

#include <algorithm>
#include <array>
#include <cstdio>

namespace cudadiag::report {
namespace {

std::string kind_label(probes::ComponentKind kind) {
  switch (kind) {
  case probes::ComponentKind::dynamic_lib: return "lib";
  case probes::ComponentKind::headers: return "headers";
  case probes::ComponentKind::binary: return "binary";
  }
  return "?";
}

std::string version_of(const discovery::Candidate* candidate) {
  return candidate != nullptr && candidate->version ? candidate->version->version : "-";
}

std::string verdict(const Report& report, TextStyle style) {
  const auto& summary = report.summary;
  std::string counts = std::to_string(summary.errors) + " error(s), " + std::to_string(summary.warnings) +
                       " warning(s), " + std::to_string(summary.infos) + " note(s)";
  const auto status = summary.status();
  const auto color = status == "error" ? k_red : status == "warning" ? k_yellow : k_green;
  std::string label = status == "error" ? "PROBLEMS FOUND" : status == "warning" ? "WARNINGS" : "OK";
  std::size_t found = 0;
  for (const auto& component : report.discovery.components) {
    found += component.status == discovery::ComponentStatus::found ? 1 : 0;
  }
  return paint(style, k_bold, "cudadiag " CUDADIAG_VERSION ": ") + paint(style, color, label) + " — " + counts +
         "; " + std::to_string(found) + "/" + std::to_string(report.discovery.components.size()) +
         " components found" +
         (report.verification.ran ? "; core libraries loaded in isolated workers" : " (files inspected only; nothing was loaded)") +
         "\n";
}

std::string components_table(const Report& report, TextStyle style) {
  std::string out = "\n" + paint(style, k_bold, "Components") + "  (path: what CUDA Python loads; native: what dlopen/PATH gives, when different)\n";
  out += "  " + pad("NAME", 11) + pad("KIND", 9) + pad("VERSION", 12) + pad("FOUND VIA", 17) + "PATH\n";
  for (const auto& component : report.discovery.components) {
    const auto* python = component.selected_candidate();
    const auto* native = component.loader_candidate();
    const auto* shown = python != nullptr ? python : native;
    const auto& choice = python != nullptr ? component.selected : component.loader;
    std::string where;
    std::string via;
    if (shown != nullptr) {
      where = choice->via.path;
      via = choice->via.found_via;
      if (python == nullptr) {
        via += " (native only)";
      }
    } else {
      where = paint(style, component.status == discovery::ComponentStatus::error ? k_red : k_dim,
                    component.status == discovery::ComponentStatus::error ? "error: no usable candidate" : "not found");
    }
    if (shown != nullptr && shown->is_stub) {
      where += paint(style, k_red, "  [stub]");
    }
    if (shown != nullptr && choice->fails) {
      where += paint(style, k_red, "  [fails: " + *choice->fails + "]");
    }
    out += "  " + pad(component.spec->name, 11) + pad(kind_label(component.spec->kind), 9) +
           pad(version_of(shown), 12) + pad(via, 17) + to_valid_utf8(where) + "\n";
    if (python != nullptr && native != nullptr && python != native) {
      out += "  " + pad("", 11 + 9) + pad(version_of(native), 12) + pad(component.loader->via.found_via, 17) +
             paint(style, k_yellow, "native: " + to_valid_utf8(component.loader->via.path)) + "\n";
    }
  }
  return out;
}

// What a loaded library said about its own version, in a short form.
std::string reported_version(const verify::LibraryStep& step) {
  const auto cuda_version = [](int value) {
    return "CUDA " + std::to_string(value / 1000) + "." + std::to_string((value % 1000) / 10);
  };
  if (const auto* nvrtc = std::get_if<verify::NvrtcFacts>(&step.facts); nvrtc != nullptr && nvrtc->version) {
    return *nvrtc->version;
  }
  if (const auto* nvjitlink = std::get_if<verify::NvJitLinkFacts>(&step.facts);
      nvjitlink != nullptr && nvjitlink->version) {
    return *nvjitlink->version;
  }
  if (const auto* cudart = std::get_if<verify::CudartFacts>(&step.facts)) {
    if (cudart->runtime_version) {
      return cuda_version(*cudart->runtime_version);
    }
    if (cudart->driver_version) {
      return cuda_version(*cudart->driver_version);
    }
  }
  if (const auto* driver = std::get_if<verify::DriverFacts>(&step.facts); driver != nullptr && driver->driver_version) {
    return cuda_version(*driver->driver_version);
  }
  if (const auto* nvml = std::get_if<verify::NvmlFacts>(&step.facts); nvml != nullptr && nvml->driver_version) {
    return *nvml->driver_version;
  }
  return "-";
}

std::string verification_section(const Report& report, TextStyle style) {
  const auto& verification = report.verification;
  std::string out = "\n" + paint(style, k_bold, "Loaded in isolated workers") + "\n";
  if (!verification.ran) {
    return out + "  skipped: " + to_valid_utf8(verification.skipped_reason) + "\n";
  }
  for (const auto& step : verification.steps) {
    std::string state = step.status;
    const auto* facts = verify::load_facts(step.facts);
    const auto* driver = std::get_if<verify::DriverFacts>(&step.facts);
    if (step.status == "ok" && facts != nullptr && !facts->loaded) {
      state = "load failed";
    } else if (step.status == "ok" && driver != nullptr && driver->init && driver->init->code != 0) {
      state = "cuInit: " + driver->init->name.value_or("error " + std::to_string(driver->init->code));
    }
    const auto color = state == "ok" ? k_green : k_red;
    out += "  " + pad(step.id, 11) + paint(style, color, pad(state, 44)) + " " + pad(reported_version(step), 14) +
           std::to_string(static_cast<long long>(step.elapsed_ms)) + " ms\n";
    if (step.status != "ok") {
      out += "    " + to_valid_utf8(step.detail) + "\n";
    }
  }
  return out;
}

std::string devices_section(const Report& report, TextStyle style) {
  const auto& devices = report.verification.devices;
  if (!report.verification.ran) {
    return "";
  }
  std::string out = "\n" + paint(style, k_bold, "Devices") + "\n";
  if (devices.empty()) {
    return out + "  none visible to CUDA\n";
  }
  const auto number = [](const std::optional<unsigned>& value) { return value ? std::to_string(*value) : "null"; };
  for (const auto& device : devices) {
    const auto* driver = device.driver ? &*device.driver : nullptr;
    const bool queried = driver != nullptr && !driver->error; // cuDeviceGet worked: every field was asked
    const auto ordinal = driver != nullptr ? std::to_string(driver->ordinal) : std::string("-");
    const std::string name = driver != nullptr ? driver->name.value_or("?")
                                               : (device.nvml ? device.nvml->name.value_or("") : std::string());
    std::string line = "  GPU " + ordinal + "  " + name;
    if (queried) {
      line += "  cc " + driver->compute_capability.value_or("?");
      if (driver->sm_count) {
        line += "  " + std::to_string(*driver->sm_count) + " SMs";
      }
      if (driver->total_memory_bytes) {
        line += "  " + std::to_string(static_cast<double>(*driver->total_memory_bytes) / 1e9).substr(0, 5) + " GB";
      }
      if (driver->peak_bandwidth_gbps) {
        line += "  peak " + std::to_string(static_cast<long long>(*driver->peak_bandwidth_gbps)) + " GB/s";
      }
    }
    out += to_valid_utf8(line) + "\n";
    if (queried) {
      out += "    " + to_valid_utf8(driver->pci_bus_id.value_or("") + "  " + driver->uuid.value_or("")) + "\n";
    } else if (driver == nullptr) {
      out += "    " + to_valid_utf8("  " + (device.nvml ? device.nvml->uuid.value_or("") : std::string())) + "\n";
    }
    if (device.nvml && device.nvml->pcie) {
      const auto& pcie = *device.nvml->pcie;
      out += "    PCIe gen " + number(pcie.gen_current) + " x" + number(pcie.width_current) + " (max gen " +
             number(pcie.gen_max) + " x" + number(pcie.width_max) + ")\n";
    }
  }
  return out;
}

std::string format_figure(double value) {
  std::array<char, 32> buffer{};
  static_cast<void>(std::snprintf(buffer.data(), buffer.size(), value >= 100 ? "%.0f" : value >= 10 ? "%.1f" : "%.3g", value));
  return buffer.data();
}

std::string selftest_section(const Report& report, TextStyle style) {
  const auto& run = report.selftest;
  if (!run.ran && run.skipped_reason.empty()) {
    return "";
  }
  std::string out = "\n" + paint(style, k_bold, "GPU self-test (" + std::string(selftest::level_name(run.level)) + ")");
  if (!run.ran) {
    return out + "\n  skipped: " + to_valid_utf8(run.skipped_reason) + "\n";
  }
  const auto status = run.status();
  // How many tests ran on a GPU (a skipped test or jit's compile-only pass without one is no run).
  std::size_t ran = 0;
  for (const auto& test : run.tests) {
    ran += test.status != "skip" && test.status != "not_run" && test.device ? 1U : 0U;
  }
  out += "  " + paint(style, status == "fail" ? k_red : status == "pass" ? k_green : k_yellow, status) + " — " +
         std::to_string(ran) + " of " + std::to_string(run.tests.size()) + " ran on a GPU";
  if (run.score.value) {
    out += "  score " + format_figure(*run.score.value) + "/100";
  }
  out += "  (" + std::to_string(static_cast<long long>(run.wall_ms)) + " ms)\n";
  for (const auto& test : run.tests) {
    const auto color = test.status == "pass" ? k_green : test.status == "skip" ? k_yellow : k_red;
    std::string figure;
    if (test.primary) {
      figure = test.primary->name + " " + format_figure(test.primary->value) + " " + test.primary->unit;
    }
    out += "  " + pad(test.key, 10) + pad(test.device ? "GPU " + std::to_string(*test.device) : "-", 7) +
           paint(style, color, pad(test.status, 6)) + pad(figure, 34) + std::to_string(static_cast<long long>(test.wall_ms)) + " ms\n";
    if (!test.reason.empty()) {
      out += "    " + to_valid_utf8(test.reason) + "\n";
    }
  }
  if (run.module && !run.module->built()) {
    out += "  note: " + to_valid_utf8(run.module->reason) + "\n";
  }
  return out;
}

std::string python_section(const Report& report, TextStyle style) {
  std::string out = "\n" + paint(style, k_bold, "Python environments searched") + "\n";
  if (report.discovery.python_error) {
    out += "  " + paint(style, k_red, "--python failed: " + to_valid_utf8(*report.discovery.python_error)) + "\n";
  }
  if (report.discovery.python.environments.empty()) {
    out += "  none found\n";
  } else if (const auto& primary = report.discovery.python.environments.front(); primary.primary) {
    out += "  answers for " + to_valid_utf8(primary.interpreter.empty() ? primary.prefix : primary.interpreter) +
           (primary.label == "--python" ? " (--python)" : " (what python3 runs here)") + "\n";
  }
  for (const auto& environment : report.discovery.python.environments) {
    out += std::string("  ") + (environment.primary ? "* " : "  ") + to_valid_utf8(environment.prefix) + "  (" +
           to_valid_utf8(environment.label) + (environment.version.empty() ? "" : ", Python " + environment.version) +
           (environment.is_venv ? ", venv" : "") + ")\n";
  }
  const auto& cache = report.discovery.ld_cache;
  out += paint(style, k_bold, "Loader cache") + "  " + to_valid_utf8(cache.path) + ": " +
         (cache.error ? paint(style, k_red, "unreadable: " + to_valid_utf8(*cache.error))
                      : std::to_string(cache.entries) + " entries") +
         "\n";
  return out;
}

std::string findings_section(const Report& report, TextStyle style) {
  if (report.findings.empty()) {
    return "\n" + paint(style, k_bold, "Findings") + "\n  none\n";
  }
  auto ordered = report.findings;
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.severity > b.severity; });
  std::string out = "\n" + paint(style, k_bold, "Findings") + "\n";
  for (const auto& finding : ordered) {
    std::string label(findings::to_string(finding.severity));
    std::transform(label.begin(), label.end(), label.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    out += "  " + paint(style, severity_color(finding.severity), pad(label, 8)) + paint(style, k_bold, finding.id) +
           "\n    " + to_valid_utf8(finding.message) + "\n    remedy: " + to_valid_utf8(finding.remedy) + "\n";
  }
  return out;
}

std::string markers(const discovery::ComponentResult& component, std::size_t index) {
  std::string out;
  if (component.selected && component.selected->candidate == index) {
    out += "python";
  }
  if (component.loader && component.loader->candidate == index) {
    out += out.empty() ? "native" : "+native";
  }
  return out.empty() ? "-" : out;
}

} // namespace

std::string render_text(const Report& report, TextStyle style) {
  return escape_controls(verdict(report, style) + components_table(report, style) + verification_section(report, style) +
                             devices_section(report, style) + selftest_section(report, style) +
                             python_section(report, style) + findings_section(report, style),
                         style);
}

std::string render_selftest_text(const Report& report, TextStyle style) {
  return escape_controls(verdict(report, style) + devices_section(report, style) + selftest_section(report, style) +
                             findings_section(report, style),
                         style);
}

std::string chosen_path(const discovery::ComponentResult& component) {
  if (component.selected) {
    return component.selected->via.path;
  }
  if (component.loader) {
    return component.loader->via.path;
  }
  return "";
}

std::string render_candidates(const discovery::ComponentResult& component, TextStyle style) {
  std::string out;
  for (std::size_t i = 0; i < component.candidates.size(); ++i) {
    const auto& candidate = component.candidates[i];
    std::string line = to_valid_utf8(candidate.first.path) + "\t" + markers(component, i) + "\t" +
                       version_of(&candidate) +
                       (candidate.version ? " (" + std::string(versions::to_string(candidate.version->source)) + ")" : "") +
                       "\t" + candidate.first.found_via;
    for (const auto& sighting : candidate.also_found_as) {
      line += "," + sighting.found_via;
    }
    if (candidate.is_stub) {
      line += "\tstub";
    }
    if (candidate.rejected) {
      line += "\t" + paint(style, k_red, "rejected: " + to_valid_utf8(*candidate.rejected));
    }
    out += line + "\n";
  }
  return escape_controls(out, style);
}

std::string render_explanation(const discovery::ComponentResult& component, TextStyle style) {
  std::string out = paint(style, k_bold, std::string(component.spec->name) + " (" + kind_label(component.spec->kind) + ")") +
                    ": " + std::string(component.spec->description) + "\n";
  out += paint(style, k_bold, "Search trace") + "\n";
  for (const auto& line : component.trace) {
    out += "  " + to_valid_utf8(line) + "\n";
  }
  if (component.trace.empty()) {
    out += "  (no search location exists on this machine)\n";
  }
  out += paint(style, k_bold, "Candidates") + "\n";
  for (const auto& line : {render_candidates(component, style)}) {
    out += line.empty() ? "  none\n" : line;
  }
  out += paint(style, k_bold, "Selection") + "\n";
  out += "  python (cuda-pathfinder order): " +
         (component.selected ? to_valid_utf8(component.selected->via.path) + " — " + to_valid_utf8(component.selected->reason) +
                                   (component.selected->fails ? "; fails: " + to_valid_utf8(*component.selected->fails) : "")
                             : std::string("none")) +
         "\n";
  if (component.spec->kind != probes::ComponentKind::headers) {
    out += "  native (" + std::string(component.spec->kind == probes::ComponentKind::binary ? "PATH" : "dlopen") + "): " +
           (component.loader ? to_valid_utf8(component.loader->via.path) + " — " + to_valid_utf8(component.loader->reason) +
                                 (component.loader->fails ? "; fails: " + to_valid_utf8(*component.loader->fails) : "")
                             : std::string("none")) +
           "\n";
  }
  return escape_controls(out, style);
}

} // namespace cudadiag::report
