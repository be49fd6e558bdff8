#include "findings/selftest_rules.hpp"

#include <cstdio>
#include <map>
#include <set>

namespace cudadiag::findings {

namespace {

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
  if (test.key != "pcie" || !test.pcie || test.pcie->verdict.problem.empty()) {
    return;
  }
  const auto pcie = selftest::pcie_evidence(*test.pcie);
  Evidence figures;
  for (const auto& metric : test.metrics) {
    figures[metric.name] = metric.value;
  }
  out.push_back(make_finding("gpu.pcie_degraded", gpu_label(test) + ": " + test.pcie->verdict.problem, {},
                             {{"device", test.device},
                              {"link", pcie.at("link")},
                              {"expected_current_gbps", test.pcie->verdict.expected_current_gbps},
                              {"expected_max_gbps", test.pcie->verdict.expected_max_gbps},
                              {"figures", figures}}));
}

// gpu.memory_errors: the memory test read wrong words back, or NVML counted new memory errors.
void memory_rule(const selftest::TestResult& test, std::vector<Finding>& out) {
  if (test.key != "memory" || !test.memory) {
    return;
  }
  const auto& memory = *test.memory;
  const bool wrong_words = memory.wrong_words > 0;
  const bool new_errors = !memory.new_errors.empty();
  if (!wrong_words && !new_errors) {
    return;
  }
  std::string message = gpu_label(test) + " memory: ";
  if (wrong_words) {
    message += std::to_string(memory.wrong_words) + " words read back wrong in the pattern test";
    if (memory.injected_words > 0) {
      message += " (" + std::to_string(memory.injected_words) +
                 " flipped on purpose by CUDADIAG_SELFTEST_INJECT_MEMORY_ERRORS: a test of the test)";
    }
  }
  if (new_errors) {
    std::string list;
    for (const auto& item : memory.new_errors) {
      list += (list.empty() ? "" : ", ") + item;
    }
    message += std::string(wrong_words ? "; " : "") + "NVML counted new errors during it (" + list + ")";
  }
  const auto evidence = selftest::memory_evidence(memory);
  out.push_back(make_finding("gpu.memory_errors", message, {},
                             {{"device", test.device},
                              {"wrong_words", memory.wrong_words},
                              {"first_wrong_words", evidence.at("first_wrong_words")},
                              {"new_errors", memory.new_errors},
                              {"injected_words", memory.injected_words},
                              {"nvml_before", evidence.at("nvml_before")},
                              {"nvml_after", evidence.at("nvml_after")}}));
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
  if (!test->clocks || !test->clocks->slowdown_reasons || test->clocks->slowdown_reasons->empty()) {
    return;
  }
  const auto& clocks = *test->clocks;
  const auto& reasons = *clocks.slowdown_reasons;
  std::string names;
  for (const auto& reason : reasons) {
    names += (names.empty() ? "" : ", ") + reason;
  }
  std::string context;
  if (clocks.sm_mhz) {
    context +=
        "SM clock " + std::to_string(clocks.sm_mhz->min) + "-" + std::to_string(clocks.sm_mhz->max) + " MHz";
  }
  if (clocks.power_w_max) {
    char text[32];
    std::snprintf(text, sizeof text, "%.0f W", *clocks.power_w_max);
    context += (context.empty() ? "" : ", ") + std::string("power up to ") + text;
  }
  if (clocks.temperature_c_max) {
    context += (context.empty() ? "" : ", ") + std::string("up to ") +
               std::to_string(*clocks.temperature_c_max) + " C";
  }
  char figures[96];
  std::snprintf(figures, sizeof figures, "%.0f%% of expected (%.1f of %.1f)", 100.0 * component.ratio,
                component.measured, component.expected);
  out.push_back(make_finding("gpu.throttled",
                             "self-test benchmark " + component.benchmark + " on GPU " +
                                 std::to_string(component.device) + " reached " + figures +
                                 " while the GPU reported " + names +
                                 (context.empty() ? "" : " (" + context + ")"),
                             {},
                             {{"device", component.device},
                              {"benchmark", component.benchmark},
                              {"ratio", component.ratio},
                              {"reasons", reasons},
                              {"clocks", selftest::clocks_evidence(clocks)}}));
}

std::string mib_text(std::uint64_t bytes) {
  return std::to_string((bytes + (1U << 19U)) >> 20U) + " MiB";
}

// gpu.busy: per device, the other processes NVML listed while its tests ran, the tests that saw
// them, and the figures taken meanwhile (not held against the GPU), with the slowdown reasons NVML
// reported then, attributed to that load.
void busy_rule(const selftest::SelfTestRun& run, std::vector<Finding>& out) {
  std::map<int, selftest::BusyFacts> per_device;
  std::map<int, std::vector<std::string>> tests;
  std::map<int, std::set<std::string>> reasons;
  for (const auto& test : run.tests) {
    if (!test.device || !test.busy || !test.busy->busy()) {
      continue;
    }
    selftest::merge_busy(per_device[*test.device], *test.busy);
    tests[*test.device].push_back(test.key);
    if (test.clocks && test.clocks->slowdown_reasons) {
      reasons[*test.device].insert(test.clocks->slowdown_reasons->begin(),
                                   test.clocks->slowdown_reasons->end());
    }
  }
  for (const auto& [device, busy] : per_device) {
    std::string names;
    Evidence::List processes;
    for (const auto& process : busy.others) {
      names += (names.empty() ? "" : ", ") + std::string("pid ") + std::to_string(process.pid) +
               (process.name.empty() ? "" : " (" + process.name + ")") +
               (process.used_memory_bytes ? " using " + mib_text(*process.used_memory_bytes) : "");
      processes.push_back(selftest::process_evidence(process));
    }
    Evidence::List figures;
    std::string spoiled;
    for (const auto& component : run.score.components) {
      if (component.device != device || !component.busy) {
        continue;
      }
      figures.push_back(Evidence{{"benchmark", component.benchmark},
                                 {"measured", component.measured},
                                 {"expected", component.expected},
                                 {"ratio", component.ratio}});
      if (component.ratio < k_throttled_ratio) {
        char text[64];
        std::snprintf(text, sizeof text, " %.0f%%", 100.0 * component.ratio);
        spoiled += (spoiled.empty() ? "" : ",") + std::string(" ") + component.benchmark + text;
      }
    }
    const std::vector<std::string> reason_list(reasons[device].begin(), reasons[device].end());
    std::string reason_text;
    for (const auto& reason : reason_list) {
      reason_text += (reason_text.empty() ? "" : ", ") + reason;
    }
    std::string message = "GPU " + std::to_string(device) + " was used by " +
                          std::to_string(busy.others.size()) + " other process" +
                          (busy.others.size() == 1 ? "" : "es") + " while the self-test ran: " + names;
    if (!spoiled.empty()) {
      message +=
          "; figures taken meanwhile are not held against the GPU (" + spoiled.substr(1) + " of expected)";
    }
    if (!reason_text.empty()) {
      message += "; the clock slowdown NVML reported then (" + reason_text + ") came under that shared load";
    }
    if (run.exclusive) {
      message += "; --exclusive asks for an idle GPU";
    }
    out.push_back(make_finding("gpu.busy", message, {},
                               {{"device", device},
                                {"processes", std::move(processes)},
                                {"tests", tests[device]},
                                {"figures_while_busy", std::move(figures)},
                                {"slowdown_reasons_while_busy", reason_list},
                                {"utilization_before_pct", busy.utilization_before_pct},
                                {"context", run_context_name(run.context)},
                                {"exclusive", run.exclusive}},
                               gpu_busy_severity(run.context, run.exclusive)));
  }
}

// The checkpoint test's outcome: one finding, naming the step and what it means for snapshots.
void checkpoint_rule(const selftest::TestResult& test, std::vector<Finding>& out) {
  if (!test.checkpoint || test.checkpoint->outcome == selftest::CheckpointOutcome::restored) {
    return;
  }
  const auto& facts = *test.checkpoint;
  const auto outcome = facts.outcome;
  const char* id = outcome == selftest::CheckpointOutcome::unsupported ? "checkpoint.unsupported"
                   : outcome == selftest::CheckpointOutcome::corrupt   ? "checkpoint.corrupt"
                                                                       : "checkpoint.failed";
  std::string message = gpu_label(test) + ": ";
  if (outcome == selftest::CheckpointOutcome::unsupported) {
    message += "process checkpoint and restore are not available (" + facts.detail +
               "); driver needed: R570 (CUDA 12.8) or newer";
  } else if (outcome == selftest::CheckpointOutcome::corrupt) {
    message += "a process restored from a checkpoint was wrong: " + facts.detail;
  } else {
    message += "process checkpoint failed at '" + facts.step + "': " + facts.detail +
               "; a CRIU dump or restore or a Kubernetes pod snapshot of a CUDA process fails the same way";
  }
  out.push_back(make_finding(
      id, message, {},
      {{"device", test.device},
       {"step", facts.step.empty() ? EvidenceValue() : EvidenceValue(facts.step)},
       {"code", facts.code},
       {"driver_words", facts.driver_words.empty() ? EvidenceValue() : EvidenceValue(facts.driver_words)},
       {"driver_version", facts.driver_version},
       {"persistence_mode", facts.persistence_mode},
       {"target_ended_checkpointed", facts.target_ended_checkpointed},
       {"details", selftest::details_evidence(test)}}));
}

} // namespace

Severity gpu_busy_severity(RunContext context, bool exclusive) {
  if (exclusive) {
    return Severity::error;
  }
  return context == RunContext::interactive ? Severity::info : Severity::warning;
}

std::vector<Finding> evaluate_selftest(const selftest::SelfTestRun& run) {
  std::vector<Finding> out;
  if (!run.ran) {
    return out;
  }
  for (const auto& test : run.tests) {
    if (test.status != selftest::TestStatus::fail && test.status != selftest::TestStatus::error) {
      continue;
    }
    if (test.checkpoint && test.status == selftest::TestStatus::fail) {
      continue; // checkpoint.failed or checkpoint.corrupt names it
    }
    const std::string where = test.device ? " on GPU " + std::to_string(*test.device) : std::string();
    out.push_back(make_finding("selftest.failed",
                               "self-test '" + test.key + "'" + where + " " +
                                   (test.status == selftest::TestStatus::error ? "broke" : "failed") + ": " +
                                   test.reason,
                               {},
                               {{"test", test.key},
                                {"device", test.device},
                                {"status", std::string(selftest::to_string(test.status))},
                                {"reason", test.reason},
                                {"details", selftest::details_evidence(test)}}));
  }
  for (const auto& test : run.tests) {
    pcie_rule(test, out);
    memory_rule(test, out);
    checkpoint_rule(test, out);
  }
  busy_rule(run, out);
  // A figure measured while another process used the GPU is gpu.busy's evidence, not the GPU's fault.
  for (const auto& component : run.score.components) {
    if (!component.busy) {
      throttle_rule(run, component, out);
    }
  }
  for (const auto& component : run.score.components) {
    if (component.busy || component.ratio >= k_slow_ratio) {
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
