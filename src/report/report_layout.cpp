#include "report/report_layout.hpp"

#include "core/json_fields.hpp"
#include "discovery/discovery.hpp"
#include "findings/findings.hpp"
#include "report/report_document.hpp"
#include "selftest/test_status.hpp"
#include "worker/process.hpp"

#include <algorithm>
#include <cstdint>

namespace cudadiag::report {
namespace {

using json_fields::string_or;
using nlohmann::json;

const json& array_at(const json& object, std::string_view key) {
  static const json empty = json::array();
  if (!object.is_object()) {
    return empty;
  }
  const auto it = object.find(key);
  return it != object.end() && it->is_array() ? *it : empty;
}

const json& object_at(const json& object, std::string_view key) {
  static const json empty = json::object();
  if (!object.is_object()) {
    return empty;
  }
  const auto it = object.find(key);
  return it != object.end() && it->is_object() ? *it : empty;
}

std::string plural(std::int64_t count, std::string_view one, std::string_view many) {
  return std::to_string(count) + " " + std::string(count == 1 ? one : many);
}

// The tone of a component's status as the report spells it (plain for one this release does not know).
Tone component_tone(std::string_view status) {
  const auto parsed = discovery::parse_component_status(status);
  if (!parsed) {
    return Tone::plain;
  }
  switch (*parsed) {
  case discovery::ComponentStatus::found: return Tone::ok;
  case discovery::ComponentStatus::not_found: return Tone::muted;
  case discovery::ComponentStatus::error: return Tone::error;
  }
  return Tone::plain;
}

// The tone of a self-test result's status as the report spells it.
Tone test_tone(std::string_view status) {
  const auto parsed = selftest::parse_test_status(status);
  if (!parsed) {
    return Tone::plain;
  }
  switch (*parsed) {
  case selftest::TestStatus::pass: return Tone::ok;
  case selftest::TestStatus::skip: return Tone::muted;
  case selftest::TestStatus::fail:
  case selftest::TestStatus::error: return Tone::error;
  }
  return Tone::plain;
}

Verdict make_verdict(const json& report) {
  Verdict verdict;
  const auto& summary = object_at(report, "summary");
  const auto& counts = object_at(summary, "counts");
  verdict.status_text = string_or(summary, "status", "unknown");
  verdict.status = parse_summary_status(verdict.status_text);
  verdict.headline = plural(json_fields::integer(counts, "error").value_or(0), "error", "errors") + ", " +
                     plural(json_fields::integer(counts, "warning").value_or(0), "warning", "warnings") +
                     ", " + std::to_string(json_fields::integer(counts, "info").value_or(0)) +
                     " info (exit code " + display(summary, "exit_code", "?") + ")";
  const auto& host = object_at(report, "host");
  verdict.facts.emplace_back("Host", display(host, "hostname", "?") + " — " +
                                         display(host, "distro", "unknown OS") + ", " + display(host, "os") +
                                         " " + display(host, "kernel") + " " + display(host, "machine"));
  const auto cuda = cuda_driver_version(report);
  const auto init = cuinit_result(report);
  std::string driver = cuda || init ? "version unknown" : "not found";
  if (const auto version = driver_version(report)) {
    driver = version->version + " (" + version->source + ")";
  }
  if (cuda) {
    driver += ", CUDA " + *cuda;
  }
  if (init) {
    driver += "; cuInit: " + *init;
  }
  verdict.facts.emplace_back("Driver", driver);
  const auto& devices = array_at(report, "devices");
  std::string gpus = devices.empty() ? "none visible" : "";
  for (const auto& device : devices) {
    gpus += (gpus.empty() ? "" : ", ") + display(device, "name", "unknown GPU");
  }
  verdict.facts.emplace_back("GPUs", gpus);
  const auto& selftest = report.is_object() ? report.value("selftest", json()) : json();
  if (selftest.is_object()) {
    const auto& score = object_at(selftest, "score");
    std::string text = display(selftest, "status", "unknown") + " (" + display(selftest, "level", "?") + ")";
    if (score.contains("value") && score["value"].is_number()) {
      text += ", score " + format_number(score["value"].get<double>());
    }
    if (!json_fields::bool_or(selftest, "ran", true)) {
      text = "not run: " + display(selftest, "skipped_reason", "no reason given");
    }
    verdict.facts.emplace_back("Self-test", text);
  } else {
    verdict.facts.emplace_back("Self-test", "not run");
  }
  return verdict;
}

FindingView make_finding_view(const json& finding, std::size_t index) {
  FindingView view;
  view.anchor = "finding-" + std::to_string(index + 1);
  view.severity = string_or(finding, "severity", "info");
  view.id = string_or(finding, "id", "?");
  view.message = string_or(finding, "message");
  view.remedy = string_or(finding, "remedy");
  for (const auto& name : array_at(finding, "components")) {
    if (name.is_string()) {
      view.components.push_back(name.get<std::string>());
    }
  }
  return view;
}

Cell answer_cell(const json& component, std::string_view key) {
  const auto& answer = object_at(component, key);
  if (answer.empty()) {
    return Cell{"—", "", Tone::muted};
  }
  std::string text =
      display(answer, "version", "version unknown") + " · " + display(answer, "found_via", "?");
  if (json_fields::bool_or(answer, "is_stub", false)) {
    return Cell{text + " · STUB", display(answer, "path"), Tone::error};
  }
  return Cell{text, display(answer, "path"), Tone::plain};
}

Section components_section(const json& report) {
  Section section{"components", "Components", {}, {}, {}, "No components in this report."};
  section.notes.emplace_back(
      "What CUDA Python (cuda-pathfinder: cuda.core, CuPy, Numba-CUDA) loads, and what a native "
      "program's dlopen(SONAME) loads, for every component cudadiag knows.");
  Table table{{"Component", "Status", "CUDA Python loads", "Native loader loads"}, {}};
  for (const auto& component : array_at(report, "components")) {
    const auto kind = string_or(component, "kind");
    const auto name = string_or(component, "name", "?") + (kind == "dynamic_lib" ? "" : " (" + kind + ")");
    const auto status = string_or(component, "status", "?");
    table.rows.push_back({Cell{name, "", Tone::plain}, Cell{status, "", component_tone(status)},
                          answer_cell(component, "selected"), answer_cell(component, "loader")});
  }
  if (!table.rows.empty()) {
    section.tables.push_back(std::move(table));
  }
  return section;
}

std::string gib(const json& device, std::string_view key) {
  const auto bytes = json_fields::integer(device, key);
  return bytes ? format_number(static_cast<double>(*bytes) / (1024.0 * 1024.0 * 1024.0)) + " GiB" : "?";
}

std::string pcie(const json& nvml) {
  const auto& link = object_at(nvml, "pcie");
  if (link.empty()) {
    return "unknown";
  }
  return "gen" + display(link, "gen_current", "?") + " x" + display(link, "width_current", "?") +
         " (max gen" + display(link, "gen_max", "?") + " x" + display(link, "width_max", "?") + ")";
}

Section devices_section(const json& report) {
  Section section{"devices", "Devices", {}, {}, {}, "No GPU was visible (or verification did not run)."};
  Table table{{"#", "Name", "Compute capability", "SMs", "Memory", "Peak bandwidth", "PCIe link", "ECC"}, {}};
  for (const auto& device : array_at(report, "devices")) {
    const auto& nvml = object_at(device, "nvml");
    const auto& ecc = object_at(nvml, "ecc");
    const auto peak = display(device, "peak_bandwidth_gbps");
    table.rows.push_back(
        {Cell{display(device, "ordinal", "?"), "", Tone::plain},
         Cell{display(device, "name", "?"), display(device, "uuid"), Tone::plain},
         Cell{display(device, "compute_capability", "?"), "", Tone::plain},
         Cell{display(device, "sm_count", "?"), "", Tone::plain},
         Cell{gib(device, "total_memory_bytes"), "", Tone::plain},
         Cell{peak.empty() ? "?" : peak + " GB/s", "", Tone::plain}, Cell{pcie(nvml), "", Tone::plain},
         Cell{ecc.empty() ? "unknown" : (json_fields::bool_or(ecc, "current", false) ? "on" : "off"), "",
              Tone::plain}});
  }
  if (!table.rows.empty()) {
    section.tables.push_back(std::move(table));
  }
  return section;
}

// What a loaded library said about its own version, from its step's result.
std::string loaded_version(const json& result) {
  if (const auto version = json_fields::string_or(result, "version"); !version.empty()) {
    return version;
  }
  for (const char* key : {"runtime_version", "driver_version"}) {
    if (const auto value = json_fields::integer(result, key)) {
      return "CUDA " + std::to_string(*value / 1000) + "." + std::to_string((*value % 1000) / 10);
    }
    if (const auto value = json_fields::string_or(result, key); !value.empty()) {
      return value;
    }
  }
  return "-";
}

Section verification_section(const json& report) {
  const auto& verification = object_at(report, "verification");
  Section section{"verification", "Verification", {}, {}, {}, ""};
  if (!json_fields::bool_or(verification, "ran", false)) {
    section.empty_text = "Nothing was loaded: " +
                         json_fields::string_or(verification, "skipped_reason", "verification did not run") +
                         ".";
    return section;
  }
  section.notes.emplace_back(
      "Each library loaded in an isolated worker process, as CUDA Python would load it.");
  Table table{{"Library", "Result", "Reports version", "Time", "File"}, {}};
  for (const auto& step : array_at(verification, "steps")) {
    const auto& result = object_at(step, "result");
    auto state = string_or(step, "status", "?");
    bool loaded = worker::parse_step_status(state) == worker::StepStatus::ok;
    if (loaded && !result.empty() && !json_fields::bool_or(result, "loaded", true)) {
      state = "load failed";
      loaded = false;
    } else if (const auto& init = object_at(result, "init");
               loaded && json_fields::integer(init, "code").value_or(0) != 0) {
      state =
          "cuInit: " +
          string_or(init, "name", "error " + std::to_string(json_fields::integer(init, "code").value_or(0)));
      loaded = false;
    }
    const auto elapsed = step.contains("elapsed_ms") && step["elapsed_ms"].is_number()
                             ? format_number(step["elapsed_ms"].get<double>()) + " ms"
                             : std::string("?");
    table.rows.push_back({Cell{string_or(step, "component", "?"), "", Tone::plain},
                          Cell{state, string_or(step, "detail"), loaded ? Tone::ok : Tone::error},
                          Cell{loaded_version(result), "", Tone::plain}, Cell{elapsed, "", Tone::muted},
                          Cell{"", string_or(step, "path"), Tone::plain}});
  }
  if (!table.rows.empty()) {
    section.tables.push_back(std::move(table));
  } else {
    section.empty_text = "Verification ran but loaded nothing.";
  }
  return section;
}

Section findings_section(const std::vector<FindingView>& views) {
  Section section{"findings", "Findings", {}, {}, views, "No findings: nothing to fix."};
  return section;
}

Section selftest_section(const json& report) {
  Section section{"selftest", "Self-test", {}, {}, {}, "The self-test did not run."};
  const auto& selftest = report.is_object() ? report.value("selftest", json()) : json();
  if (!selftest.is_object()) {
    return section;
  }
  if (!json_fields::bool_or(selftest, "ran", true)) {
    section.empty_text =
        "The self-test did not run: " + display(selftest, "skipped_reason", "no reason given") + ".";
    return section;
  }
  std::string note =
      "Level " + display(selftest, "level", "?") + ", status " + display(selftest, "status", "?");
  const auto& score = object_at(selftest, "score");
  if (score.contains("value") && score["value"].is_number()) {
    note += ", score " + format_number(score["value"].get<double>()) + " / 100";
  }
  if (score.contains("correctness_passed") && !json_fields::bool_or(score, "correctness_passed", true)) {
    note += " (a correctness check failed)";
  }
  section.notes.push_back(note + ", " + display(selftest, "wall_ms", "?") + " ms.");
  Table table{{"Test", "Device", "Status", "Headline figure", "Other figures", "Reason"}, {}};
  for (const auto& test : selftest_tests(report)) {
    const auto status = display(test, "status", "?");
    const auto& primary = object_at(test, "primary");
    std::string others;
    for (const auto& metric : array_at(test, "metrics")) {
      if (!primary.empty() && string_or(metric, "name") == string_or(primary, "name")) {
        continue;
      }
      others += (others.empty() ? "" : "; ") + string_or(metric, "name") + " " + format_metric(metric);
    }
    table.rows.push_back({Cell{display(test, "key", "?"), display(test, "description"), Tone::plain},
                          Cell{display(test, "device", "—"), "", Tone::plain},
                          Cell{status, "", test_tone(status)},
                          Cell{primary.empty() ? "—" : format_metric(primary), "", Tone::plain},
                          Cell{others.empty() ? "—" : others, "", Tone::plain},
                          Cell{display(test, "reason", "—"), "", Tone::plain}});
  }
  if (!table.rows.empty()) {
    section.tables.push_back(std::move(table));
  }
  return section;
}

Section policy_section(const json& policy) {
  Section section{"policy", "Policy", {}, {}, {}, "No requirements were given."};
  Table table{{"Requirement", "Result", "Detail"}, {}};
  for (const auto& requirement : array_at(policy, "requirements")) {
    const bool met = json_fields::bool_or(requirement, "met", false);
    table.rows.push_back({Cell{"", display(requirement, "spec", "?"), Tone::plain},
                          Cell{met ? "met" : "UNMET", "", met ? Tone::ok : Tone::error},
                          Cell{display(requirement, "detail"), "", Tone::plain}});
  }
  if (!table.rows.empty()) {
    section.tables.push_back(std::move(table));
  }
  return section;
}

Section environment_section(const json& report) {
  Section section{"environment", "Environment", {}, {}, {}, ""};
  const auto& environment = object_at(report, "environment");
  Table variables{{"Variable", "Value"}, {}};
  for (const auto& [name, value] : object_at(environment, "variables").items()) {
    if (value.is_string()) {
      variables.rows.push_back(
          {Cell{name, "", Tone::plain}, Cell{"", value.get<std::string>(), Tone::plain}});
    }
  }
  Table pythons{{"Python environment", "Prefix", "Version", "Used by CUDA Python"}, {}};
  for (const auto& python : array_at(environment, "python_environments")) {
    const bool primary = json_fields::bool_or(python, "primary", false);
    pythons.rows.push_back({Cell{display(python, "label", "?"), display(python, "how"), Tone::plain},
                            Cell{"", display(python, "prefix"), Tone::plain},
                            Cell{display(python, "version", "?"), "", Tone::plain},
                            Cell{primary ? "yes" : "no", "", primary ? Tone::ok : Tone::muted}});
  }
  // The variables that change how CUDA behaves (findings/environment_rules.hpp), with what each does.
  Table behaviour{{"Changes CUDA's behaviour", "Class", "Effect"}, {}};
  for (const auto& variable : array_at(environment, "behaviour_variables")) {
    behaviour.rows.push_back(
        {Cell{display(variable, "name", "?") + "=" + display(variable, "value"), "", Tone::plain},
         Cell{display(variable, "class", "?"), "", Tone::plain},
         Cell{"", display(variable, "effect"), Tone::muted}});
  }
  for (auto* table : {&variables, &behaviour, &pythons}) {
    if (!table->rows.empty()) {
      section.tables.push_back(std::move(*table));
    }
  }
  section.empty_text = "No environment variables of interest are set.";
  return section;
}

// The Python frameworks of the primary environment: what each was built for, its pins, and for
// torch and JAX what they load (linkage.frameworks) against CUDA Python's copy.
Section frameworks_section(const json& report) {
  Section section{
      "frameworks", "Python frameworks", {}, {}, {}, "No Python framework in the primary environment."};
  const auto& environment = object_at(report, "environment");
  const auto& loads = array_at(object_at(report, "linkage"), "frameworks");
  Table builds{{"Framework", "Built for", "CUDA pins met", "Loads"}, {}};
  for (const auto& build : array_at(environment, "frameworks")) {
    const auto name = display(build, "framework", "?");
    const auto version = display(build, "version");
    std::string code;
    for (const auto& gpu : array_at(build, "gpu_code")) {
      code += (code.empty() ? "" : " ") + (gpu.is_string() ? gpu.get<std::string>() : display(gpu, "name"));
    }
    int met = 0;
    int pins = 0;
    for (const auto& pin : array_at(environment, "framework_requirements")) {
      if (string_or(pin, "framework", "") == name && string_or(pin, "framework_version", "") == version) {
        ++pins;
        met += json_fields::bool_or(pin, "met", false) ? 1 : 0;
      }
    }
    int unjudged = 0;
    for (const auto& pin : array_at(environment, "framework_requirements_not_judged")) {
      if (string_or(pin, "framework", "") == name && string_or(pin, "framework_version", "") == version) {
        ++unjudged;
      }
    }
    Cell loaded{"-", "", Tone::muted};
    for (const auto& framework : loads) {
      if (string_or(framework, "framework", "") == name && string_or(framework, "version", "") == version) {
        const bool ok = json_fields::bool_or(framework, "loads", false);
        loaded = Cell{ok ? "loads" : "fails", display(framework, "library"), ok ? Tone::ok : Tone::error};
      }
    }
    const auto tool = display(build, "tool");
    builds.rows.push_back(
        {Cell{name + " " + version, "", Tone::plain},
         Cell{(tool.empty() ? "" : tool + ": ") + "CUDA " + display(build, "cuda", "?"), code, Tone::plain},
         Cell{pins == 0 ? "-" : std::to_string(met) + " of " + std::to_string(pins),
              unjudged == 0 ? "" : std::to_string(unjudged) + " not judged (an extra not requested)",
              pins == 0     ? Tone::muted
              : met == pins ? Tone::ok
                            : Tone::error},
         loaded});
  }
  if (!builds.rows.empty()) {
    section.tables.push_back(std::move(builds));
  }
  for (const auto& framework : loads) {
    const auto& opened_first = object_at(framework, "import");
    if (!opened_first.empty()) {
      section.notes.push_back(
          display(framework, "framework") + " " + display(framework, "version") + ": " +
          display(opened_first, "statement") + " (" + display(opened_first, "model") +
          "): " + display(opened_first, "branch") +
          (opened_first.contains("import_error") && opened_first["import_error"].is_string()
               ? "; fails: " + opened_first["import_error"].get<std::string>()
               : std::string()));
    }
    Table libraries{{display(framework, "framework") + " loads", "Version", "How", "CUDA Python"}, {}};
    for (const auto& object : array_at(object_at(framework, "closure"), "objects")) {
      if (!object.contains("component") || !object["component"].is_string()) {
        continue;
      }
      const bool same = json_fields::bool_or(object, "selected", false);
      libraries.rows.push_back(
          {Cell{object["component"].get<std::string>(), display(object, "path"), Tone::plain},
           Cell{display(object, "version", "-"), "", Tone::plain},
           Cell{display(object, "found_via"), "", Tone::plain},
           Cell{same ? "the same file" : "another copy", "", same ? Tone::ok : Tone::warning}});
    }
    if (!libraries.rows.empty()) {
      section.tables.push_back(std::move(libraries));
    }
  }
  return section;
}

} // namespace

ReportLayout lay_out_report(const json& report) {
  ReportLayout layout;
  const auto& host = object_at(report, "host");
  layout.title = "cudadiag report: " + display(host, "hostname", "unknown host");
  layout.tool = "cudadiag " + display(object_at(report, "tool"), "version", "?");
  layout.verdict = make_verdict(report);

  std::vector<FindingView> views;
  for (const auto& finding : array_at(report, "findings")) {
    views.push_back(make_finding_view(finding, views.size()));
  }
  // Errors first, then warnings, each in report order (the report orders by rule).
  std::stable_sort(views.begin(), views.end(), [](const FindingView& a, const FindingView& b) {
    auto rank = [](const std::string& severity) {
      const auto parsed = findings::parse_severity(severity);
      return parsed == findings::Severity::error ? 0 : parsed == findings::Severity::warning ? 1 : 2;
    };
    return rank(a.severity) < rank(b.severity);
  });
  for (const auto& view : views) {
    if (findings::parse_severity(view.severity) != findings::Severity::info) {
      layout.verdict.attention.push_back(view);
    }
  }
  layout.sections.push_back(components_section(report));
  layout.sections.push_back(verification_section(report));
  layout.sections.push_back(devices_section(report));
  layout.sections.push_back(findings_section(views));
  layout.sections.push_back(selftest_section(report));
  if (report.is_object() && report.contains("policy") && report["policy"].is_object()) {
    layout.sections.push_back(policy_section(report["policy"]));
  }
  layout.sections.push_back(frameworks_section(report));
  layout.sections.push_back(environment_section(report));
  return layout;
}

} // namespace cudadiag::report
