#include "findings/selftest_rules.hpp"

namespace cudadiag::findings {

using json = nlohmann::json;

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
