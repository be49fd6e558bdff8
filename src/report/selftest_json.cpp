#include "report/selftest_json.hpp"

#include "core/evidence_json.hpp"

namespace cudadiag::report {

using json = nlohmann::json;

namespace {
json metric_to_json(const selftest::Metric& metric) {
  return {{"name", metric.name}, {"value", metric.value}, {"unit", metric.unit}};
}
} // namespace

json test_result_to_json(const selftest::TestResult& result) {
  json metrics = json::array();
  for (const auto& metric : result.metrics) {
    metrics.push_back(metric_to_json(metric));
  }
  return {{"key", result.key},
          {"device", result.device ? json(*result.device) : json(nullptr)},
          {"description", result.description},
          {"status", selftest::to_string(result.status)},
          {"reason", result.reason.empty() ? json(nullptr) : json(result.reason)},
          {"wall_ms", result.wall_ms},
          {"metrics", metrics},
          {"primary", result.primary ? metric_to_json(*result.primary) : json(nullptr)},
          {"details", evidence_to_json(selftest::details_evidence(result))}};
}

json score_to_json(const selftest::Score& score) {
  json components = json::array();
  for (const auto& component : score.components) {
    components.push_back({{"device", component.device},
                          {"benchmark", component.benchmark},
                          {"measured", component.measured},
                          {"expected", component.expected},
                          {"ratio", component.ratio},
                          {"busy", component.busy}});
  }
  return {{"value", score.value ? json(*score.value) : json(nullptr)},
          {"correctness_passed", score.correctness_passed},
          {"busy_excluded", score.busy_excluded},
          {"components", components}};
}

json selftest_to_json(const selftest::SelfTestRun& run) {
  if (!run.ran && run.skipped_reason.empty()) {
    return nullptr;
  }
  json tests = json::array();
  for (const auto& test : run.tests) {
    tests.push_back(test_result_to_json(test));
  }
  return {{"ran", run.ran},
          {"skipped_reason", run.skipped_reason.empty() ? json(nullptr) : json(run.skipped_reason)},
          {"level", selftest::level_name(run.level)},
          {"status", selftest::to_string(run.status())},
          {"wall_ms", run.wall_ms},
          {"max_workers", run.max_workers},
          {"context", run_context_name(run.context)},
          {"exclusive", run.exclusive},
          {"module", run.module ? json{{"path", run.module->built() ? json(run.module->path) : json(nullptr)},
                                       {"built", run.module->built()},
                                       {"reason", run.module->reason.empty() ? json(nullptr)
                                                                             : json(run.module->reason)}}
                                : json(nullptr)},
          {"score", score_to_json(run.score)},
          {"tests", tests}};
}

} // namespace cudadiag::report
