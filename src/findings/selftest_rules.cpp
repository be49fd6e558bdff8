#include "findings/selftest_rules.hpp"

#include <cstdio>

namespace cudadiag::findings {

using json = nlohmann::json;

namespace {

const json& member(const json& object, const char* key) {
  static const json k_null;
  return object.is_object() && object.contains(key) ? object[key] : k_null;
}

std::string gpu_label(const selftest::TestResult& test) {
  return test.device ? "GPU " + std::to_string(*test.device) : std::string("the GPU");
}

const selftest::TestResult* find_test(const selftest::SelfTestRun& run, int device, std::string_view key) {
  for (const auto& test : run.tests) {
    if (test.device == device && test.key == key) {
      return &test;
    }
  }
  return nullptr;
}

// gpu.pcie_degraded: the pcie test's verdict (selftest/health.hpp judge_pcie) named a problem.
void pcie_rule(const selftest::TestResult& test, std::vector<Finding>& out) {
  const auto& pcie = member(test.details, "pcie");
  const auto& problem = member(pcie, "problem");
  if (test.key != "pcie" || !problem.is_string()) {
    return;
  }
  json figures = json::object();
  for (const auto& metric : test.metrics) {
    figures[metric.name] = metric.value;
  }
  out.push_back(make_finding("gpu.pcie_degraded", gpu_label(test) + ": " + problem.get<std::string>(), {},
                             {{"device", test.device ? json(*test.device) : json(nullptr)},
                              {"link", member(pcie, "link")},
                              {"expected_current_gbps", member(pcie, "expected_current_gbps")},
                              {"expected_max_gbps", member(pcie, "expected_max_gbps")},
                              {"figures", figures}}));
}

// gpu.memory_errors: the memory test read wrong words back, or NVML counted new memory errors.
void memory_rule(const selftest::TestResult& test, std::vector<Finding>& out) {
  const auto& memory = member(test.details, "memory");
  if (test.key != "memory" || !memory.is_object()) {
    return;
  }
  const auto& wrong = member(memory, "wrong_words");
  const auto& rose = member(memory, "new_errors");
  const bool wrong_words = wrong.is_number_integer() && wrong.get<std::int64_t>() > 0;
  const bool new_errors = rose.is_array() && !rose.empty();
  if (!wrong_words && !new_errors) {
    return;
  }
  std::string message = gpu_label(test) + " memory: ";
  if (wrong_words) {
    message += std::to_string(wrong.get<std::int64_t>()) + " words read back wrong in the pattern test";
  }
  if (new_errors) {
    std::string list;
    for (const auto& item : rose) {
      list += (list.empty() ? "" : ", ") + (item.is_string() ? item.get<std::string>() : item.dump());
    }
    message += std::string(wrong_words ? "; " : "") + "NVML counted new errors during it (" + list + ")";
  }
  out.push_back(make_finding("gpu.memory_errors", message, {},
                             {{"device", test.device ? json(*test.device) : json(nullptr)},
                              {"wrong_words", wrong},
                              {"first_wrong_words", member(memory, "first_wrong_words")},
                              {"new_errors", rose},
                              {"nvml_before", member(memory, "nvml_before")},
                              {"nvml_after", member(memory, "nvml_after")}}));
}

// gpu.throttled: a benchmark under k_throttled_ratio of expected while NVML reported a slowdown.
void throttle_rule(const selftest::SelfTestRun& run, const selftest::ScoreComponent& component,
                   std::vector<Finding>& out) {
  if (component.ratio >= k_throttled_ratio) {
    return;
  }
  const auto dot = component.benchmark.find('.');
  const auto* test = find_test(run, component.device, component.benchmark.substr(0, dot));
  if (test == nullptr) {
    return;
  }
  const auto& clocks = member(test->details, "clocks");
  const auto& reasons = member(clocks, "slowdown_reasons");
  if (!reasons.is_array() || reasons.empty()) {
    return;
  }
  std::string names;
  for (const auto& reason : reasons) {
    names += (names.empty() ? "" : ", ") + reason.get<std::string>();
  }
  std::string context;
  const auto& sm = member(clocks, "sm_mhz");
  if (sm.is_object()) {
    context += "SM clock " + member(sm, "min").dump() + "-" + member(sm, "max").dump() + " MHz";
  }
  if (const auto& power = member(clocks, "power_w_max"); power.is_number()) {
    char text[32];
    std::snprintf(text, sizeof text, "%.0f W", power.get<double>());
    context += (context.empty() ? "" : ", ") + std::string("power up to ") + text;
  }
  if (const auto& temperature = member(clocks, "temperature_c_max"); temperature.is_number()) {
    context += (context.empty() ? "" : ", ") + std::string("up to ") + temperature.dump() + " C";
  }
  char figures[96];
  std::snprintf(figures, sizeof figures, "%.0f%% of expected (%.1f of %.1f)", 100.0 * component.ratio,
                component.measured, component.expected);
  out.push_back(make_finding("gpu.throttled",
                             "self-test benchmark " + component.benchmark + " on GPU " +
                                 std::to_string(component.device) + " reached " + figures +
                                 " while the GPU reported " + names + (context.empty() ? "" : " (" + context + ")"),
                             {},
                             {{"device", component.device},
                              {"benchmark", component.benchmark},
                              {"ratio", component.ratio},
                              {"reasons", reasons},
                              {"clocks", clocks}}));
}

} // namespace

std::vector<Finding> evaluate_selftest(const selftest::SelfTestRun& run) {
  std::vector<Finding> out;
  if (!run.ran) {
    return out;
  }
  for (const auto& test : run.tests) {
    if (test.status != "fail" && test.status != "error") {
      continue;
    }
    const std::string where = test.device ? " on GPU " + std::to_string(*test.device) : std::string();
    out.push_back(make_finding("selftest.failed",
                               "self-test '" + test.key + "'" + where + " " +
                                   (test.status == "error" ? "broke" : "failed") + ": " + test.reason,
                               {},
                               {{"test", test.key},
                                {"device", test.device ? json(*test.device) : json(nullptr)},
                                {"status", test.status},
                                {"reason", test.reason},
                                {"details", test.details}}));
  }
  for (const auto& test : run.tests) {
    pcie_rule(test, out);
    memory_rule(test, out);
  }
  for (const auto& component : run.score.components) {
    throttle_rule(run, component, out);
  }
  for (const auto& component : run.score.components) {
    if (component.ratio >= k_slow_ratio) {
      continue;
    }
    char figures[160];
    std::snprintf(figures, sizeof figures, "%.1f measured, %.1f expected (%.0f%%)", component.measured,
                  component.expected, 100.0 * component.ratio);
    out.push_back(make_finding("selftest.slow",
                               "self-test benchmark " + component.benchmark + " on GPU " +
                                   std::to_string(component.device) + ": " + figures,
                               {},
                               {{"device", component.device},
                                {"benchmark", component.benchmark},
                                {"measured", component.measured},
                                {"expected", component.expected},
                                {"ratio", component.ratio}}));
  }
  return out;
}

} // namespace cudadiag::findings
