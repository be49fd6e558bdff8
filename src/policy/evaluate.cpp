#include "policy/evaluate.hpp"

#include "core/json_fields.hpp"
#include "report/report_document.hpp"
#include "selftest/test_status.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <optional>

namespace cudadiag::policy {
namespace {

using nlohmann::json;
using report::display;

std::string comparison(const Requirement& requirement) {
  return std::string(to_string(*requirement.op)) + " " + requirement.value + requirement.unit;
}

Outcome component_outcome(const json& report, const Requirement& requirement) {
  Outcome out{requirement.text, false, "", {requirement.name}};
  const auto* component = report::find_component(report, requirement.name);
  // CUDA Python's load failed before it raised "not found": that failure is the answer, not what a
  // native dlopen does.
  const auto* python_failed = component != nullptr ? report::python_failed(*component) : nullptr;
  const auto* native = component != nullptr ? report::chosen_answer(*component) : nullptr;
  const auto* answer = python_failed != nullptr ? python_failed : native;
  if (answer == nullptr) {
    out.detail = requirement.name + " was not found" +
                 (component != nullptr ? " (status " + display(*component, "status", "?") + ")" : "");
    return out;
  }
  const bool python =
      python_failed != nullptr || (component->contains("selected") && (*component)["selected"].is_object());
  const auto where = std::string(python ? "CUDA Python" : "native loader") + ", " +
                     display(*answer, "found_via", "?") + ", " + display(*answer, "path", "?");
  // An answer whose load does not succeed is no answer (older reports: no outcome, fails set).
  const auto outcome = display(*answer, "outcome");
  const auto fails = display(*answer, "fails");
  if ((!outcome.empty() && outcome != "loads") || (outcome.empty() && !fails.empty())) {
    out.detail = requirement.name + " is found (" + where + ") but loading it " +
                 (outcome == "crashes" ? "crashes the process" : "fails") + ": " + fails;
    if (python_failed != nullptr) {
      out.detail += "; cuda-pathfinder then raises DynamicLibNotFoundError";
      if (native != nullptr && display(*native, "outcome", "loads") == "loads") {
        out.detail += " (a native dlopen loads " + display(*native, "path", "?") + ")";
      }
    }
    return out;
  }
  const auto version = display(*answer, "version");
  if (!requirement.op) {
    out.met = true;
    out.detail = requirement.name + " " + (version.empty() ? "" : version + " ") + "found (" + where + ")";
    return out;
  }
  if (version.empty()) {
    out.detail = requirement.name + " found (" + where + ") but its version is unknown";
    return out;
  }
  out.met = version_satisfies(version, *requirement.op, requirement.value);
  out.detail = requirement.name + " " + version + " (" + where + ")" +
               (out.met ? " " : " does not satisfy ") + comparison(requirement);
  return out;
}

Outcome driver_outcome(const json& report, const Requirement& requirement) {
  Outcome out{requirement.text, false, "", {"cuda"}};
  std::optional<std::string> version;
  std::string what;
  if (requirement.subject == Subject::driver) {
    what = "driver";
    if (const auto found = report::driver_version(report)) {
      version = found->version;
      what += " (" + found->source + ")";
    }
  } else {
    what = "driver's CUDA version";
    version = report::cuda_driver_version(report);
  }
  if (!version) {
    out.detail = what + " unknown: " +
                 (requirement.subject == Subject::driver
                      ? "no NVML answer (not found, or not loaded under --no-load) and no version in "
                        "libcuda's file name"
                      : "cuDriverGetVersion did not answer (no driver, or not loaded under --no-load)");
    return out;
  }
  if (!requirement.op) {
    out.met = true;
    out.detail = what + " " + *version;
    return out;
  }
  out.met = version_satisfies(*version, *requirement.op, requirement.value);
  out.detail = what + " " + *version + (out.met ? " " : " does not satisfy ") + comparison(requirement);
  return out;
}

std::string device_label(const json& test) {
  const auto device = display(test, "device");
  return device.empty() ? "" : " on GPU " + device;
}

// The figure a requirement compares: the named metric, else the headline one, else (with a unit)
// the first metric of that unit.
const json* pick_metric(const json& test, const Requirement& requirement) {
  static const json no_metrics = json::array();
  const auto found = test.find("metrics");
  const json& metrics = found != test.end() && found->is_array() ? *found : no_metrics;
  if (!requirement.metric.empty()) {
    for (const auto& metric : metrics) {
      if (json_fields::string_or(metric, "name") == requirement.metric) {
        return &metric;
      }
    }
    return nullptr;
  }
  const auto primary = test.find("primary");
  if (primary != test.end() && primary->is_object() &&
      (requirement.unit.empty() || same_unit(json_fields::string_or(*primary, "unit"), requirement.unit))) {
    return &*primary;
  }
  for (const auto& metric : metrics) {
    if (!requirement.unit.empty() && same_unit(json_fields::string_or(metric, "unit"), requirement.unit)) {
      return &metric;
    }
  }
  return nullptr;
}

double number(std::string_view text) {
  double value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

// The status a report's self-test object or test result names; nullopt for none this release knows.
std::optional<selftest::TestStatus> test_status(const json& object) {
  return selftest::parse_test_status(json_fields::string_or(object, "status"));
}

// Whether a self-test result is evidence about a GPU: it ran (was not skipped) on a device. jit
// without a GPU compiles and links only (device null): that proves NVRTC, not the GPU path.
bool ran_on_gpu(const json& test) {
  return test_status(test) != selftest::TestStatus::skip && test.contains("device") &&
         test["device"].is_number_integer();
}

Outcome selftest_outcome(const json& report, const Requirement& requirement) {
  Outcome out{requirement.text, false, "", {}};
  const auto& selftest = report.contains("selftest") ? report["selftest"] : json();
  if (!selftest.is_object() || !json_fields::bool_or(selftest, "ran", false)) {
    out.detail = "the self-test did not run" +
                 (selftest.is_object() ? ": " + display(selftest, "skipped_reason", "no reason given")
                                       : std::string());
    return out;
  }
  if (requirement.subject == Subject::selftest) {
    // A skipped, not-run or compile-only test is no evidence: the self-test must pass with at
    // least one test run on a GPU.
    const auto status = display(selftest, "status", "?");
    std::size_t ran = 0;
    std::size_t total = 0;
    for (const auto& test : report::selftest_tests(report)) {
      ++total;
      ran += ran_on_gpu(test) ? 1U : 0U;
    }
    out.met = test_status(selftest) == selftest::TestStatus::pass && ran > 0;
    out.detail = "self-test " + status + " — " + std::to_string(ran) + " of " + std::to_string(total) +
                 " ran on a GPU";
    return out;
  }
  if (requirement.subject == Subject::selftest_score) {
    const auto& score = selftest.contains("score") ? selftest["score"] : json();
    if (!score.is_object() || !score.contains("value") || !score["value"].is_number()) {
      out.detail = "the self-test has no score (no benchmark ran)";
      return out;
    }
    const double value = score["value"].get<double>();
    out.met = number_satisfies(value, *requirement.op, number(requirement.value));
    out.detail = "self-test score " + report::format_number(value) + (out.met ? " " : " does not satisfy ") +
                 comparison(requirement);
    return out;
  }
  int results = 0;
  bool all_met = true;
  for (const auto& test : report::selftest_tests(report)) {
    if (json_fields::string_or(test, "key") != requirement.name) {
      continue;
    }
    ++results;
    const bool passed = test_status(test) == selftest::TestStatus::pass;
    std::string line = requirement.name + device_label(test) + ": ";
    bool met = false;
    if (!passed || !ran_on_gpu(test)) {
      const auto reason = display(test, "reason");
      line += passed ? std::string("passed without a GPU") : display(test, "status", "?");
      line += reason.empty() ? "" : " (" + reason + ")";
    } else if (!requirement.op) {
      met = true;
      line += "pass";
    } else if (const auto* metric = pick_metric(test, requirement); metric == nullptr) {
      line += "no " + (requirement.metric.empty() ? "figure" : "figure named " + requirement.metric) +
              (requirement.unit.empty() ? "" : " in " + requirement.unit);
    } else if (!requirement.unit.empty() &&
               !same_unit(json_fields::string_or(*metric, "unit"), requirement.unit)) {
      line += json_fields::string_or(*metric, "name") + " is in " + json_fields::string_or(*metric, "unit") +
              ", not " + requirement.unit;
    } else {
      const double value = metric->contains("value") && (*metric)["value"].is_number()
                               ? (*metric)["value"].get<double>()
                               : std::nan("");
      met = number_satisfies(value, *requirement.op, number(requirement.value));
      line += json_fields::string_or(*metric, "name") + " " + report::format_metric(*metric) +
              (met ? " " : " does not satisfy ") + comparison(requirement);
    }
    all_met = all_met && met;
    out.detail += (out.detail.empty() ? "" : "; ") + line;
  }
  if (results == 0) {
    out.detail = "the self-test has no '" + requirement.name + "' result (not selected with --only?)";
    return out;
  }
  out.met = all_met;
  return out;
}

Outcome findings_outcome(const json& report, const Requirement& requirement) {
  Outcome out{requirement.text, false, "", {}};
  std::int64_t count = 0;
  if (report.contains("findings") && report["findings"].is_array()) {
    for (const auto& finding : report["findings"]) {
      count += json_fields::string_or(finding, "severity") == requirement.name ? 1 : 0;
    }
  }
  out.met = number_satisfies(static_cast<double>(count), *requirement.op, number(requirement.value));
  out.detail = std::to_string(count) + " " + requirement.name + " finding" + (count == 1 ? "" : "s") +
               (out.met ? " " : ", which does not satisfy ") + comparison(requirement);
  return out;
}

// gpu.idle: the self-test ran, NVML could list the processes on its GPUs, and none was another's.
Outcome gpu_idle_outcome(const json& report, const Requirement& requirement) {
  Outcome out{requirement.text, false, "", {}};
  const auto& selftest = report.contains("selftest") ? report["selftest"] : json();
  if (!selftest.is_object() || !json_fields::bool_or(selftest, "ran", false)) {
    out.detail = "the self-test did not run, so nothing says the GPU was idle";
    return out;
  }
  if (report.contains("findings") && report["findings"].is_array()) {
    for (const auto& finding : report["findings"]) {
      if (json_fields::string_or(finding, "id") == "gpu.busy") {
        out.detail = json_fields::string_or(finding, "message");
        return out;
      }
    }
  }
  bool known = false;
  for (const auto& test : report::selftest_tests(report)) {
    const auto& details = test.contains("details") ? test["details"] : json();
    const auto& busy = details.is_object() && details.contains("busy") ? details["busy"] : json();
    known = known || (busy.is_object() && json_fields::bool_or(busy, "known", false));
  }
  out.met = known;
  out.detail = known
                   ? "NVML listed no other process on the GPU while the self-test ran"
                   : "NVML could not list the processes on the GPU (details.busy.known is false): not known "
                     "to be idle";
  return out;
}

} // namespace

std::vector<Outcome> evaluate_policy(const json& report, const std::vector<Requirement>& requirements) {
  std::vector<Outcome> out;
  for (const auto& requirement : requirements) {
    switch (requirement.subject) {
    case Subject::component: out.push_back(component_outcome(report, requirement)); break;
    case Subject::driver:
    case Subject::driver_cuda: out.push_back(driver_outcome(report, requirement)); break;
    case Subject::selftest:
    case Subject::selftest_test:
    case Subject::selftest_score: out.push_back(selftest_outcome(report, requirement)); break;
    case Subject::findings: out.push_back(findings_outcome(report, requirement)); break;
    case Subject::gpu_idle: out.push_back(gpu_idle_outcome(report, requirement)); break;
    }
  }
  return out;
}

std::vector<findings::Finding> unmet_findings(const std::vector<Outcome>& outcomes) {
  std::vector<findings::Finding> out;
  for (const auto& outcome : outcomes) {
    if (!outcome.met) {
      out.push_back(findings::make_finding(
          "policy.unmet", "requirement '" + outcome.spec + "' is not met: " + outcome.detail,
          outcome.components, {{"requirement", outcome.spec}, {"observed", outcome.detail}}));
    }
  }
  return out;
}

} // namespace cudadiag::policy
