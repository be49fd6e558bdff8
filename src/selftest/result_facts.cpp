#include "selftest/result_facts.hpp"

#include "selftest/selftest.hpp"

#include <algorithm>

namespace cudadiag::selftest {

EvidenceValue counters_evidence(const MemoryCounters& counters) {
  return {{"ecc_corrected_volatile", counters.ecc_corrected},
          {"ecc_uncorrected_volatile", counters.ecc_uncorrected},
          {"remapped_rows_correctable", counters.remapped_correctable},
          {"remapped_rows_uncorrectable", counters.remapped_uncorrectable},
          {"remap_pending", counters.remap_pending},
          {"remap_failure", counters.remap_failure}};
}

Evidence pcie_evidence(const PcieFacts& facts) {
  const auto& link = facts.link;
  const auto& verdict = facts.verdict;
  return {{"link",
           {{"bus_id", link.bus_id},
            {"gen_current", link.gen_current},
            {"gen_max", link.gen_max},
            {"width_current", link.width_current},
            {"width_max", link.width_max}}},
          {"expected_current_gbps", verdict.expected_current_gbps},
          {"expected_max_gbps", verdict.expected_max_gbps},
          {"link_below_max", verdict.link_below_max},
          {"slow", verdict.slow},
          {"problem", verdict.problem.empty() ? EvidenceValue() : EvidenceValue(verdict.problem)}};
}

Evidence memory_evidence(const MemoryFacts& facts) {
  Evidence::List first;
  for (const auto& word : facts.first_wrong_words) {
    first.push_back({{"address", word.address}, {"expected", word.expected}, {"found", word.found}});
  }
  const auto counters = [](const std::optional<MemoryCounters>& value) {
    return value ? counters_evidence(*value) : EvidenceValue();
  };
  return {{"wrong_words", facts.wrong_words},
          {"first_wrong_words", std::move(first)},
          {"nvml_before", counters(facts.nvml_before)},
          {"nvml_after", counters(facts.nvml_after)},
          {"new_errors", facts.new_errors},
          {"injected_words", facts.injected_words}};
}

namespace {
EvidenceValue spread_evidence(const std::optional<Spread>& spread) {
  if (!spread) {
    return {};
  }
  return {{"min", spread->min}, {"median", spread->median}, {"max", spread->max}};
}
} // namespace

Evidence clocks_evidence(const ClockSummary& summary) {
  if (summary.samples == 0) {
    return {{"samples", 0}};
  }
  return {{"samples", summary.samples},
          {"sm_mhz", spread_evidence(summary.sm_mhz)},
          {"mem_mhz", spread_evidence(summary.mem_mhz)},
          {"power_w_max", summary.power_w_max},
          {"temperature_c_max", summary.temperature_c_max},
          {"reasons_seen", summary.reasons_seen},
          {"slowdown_reasons", summary.slowdown_reasons}};
}

void merge_busy(BusyFacts& into, const BusyFacts& more) {
  for (const auto& process : more.others) {
    auto found = std::find_if(into.others.begin(), into.others.end(),
                              [&](const GpuProcess& p) { return p.pid == process.pid; });
    if (found == into.others.end()) {
      into.others.push_back(process);
      continue;
    }
    if (process.used_memory_bytes) {
      found->used_memory_bytes = std::max(found->used_memory_bytes.value_or(0), *process.used_memory_bytes);
    }
    found->compute = found->compute || process.compute;
    found->graphics = found->graphics || process.graphics;
    if (found->name.empty()) {
      found->name = process.name;
    }
  }
  std::sort(into.others.begin(), into.others.end(),
            [](const GpuProcess& a, const GpuProcess& b) { return a.pid < b.pid; });
  if (!into.known && more.known) {
    into.known = true;
    into.unknown_reason.clear();
  } else if (!into.known && into.unknown_reason.empty()) {
    into.unknown_reason = more.unknown_reason;
  }
  if (!into.known && !into.others.empty()) {
    into.known = true; // a process seen once is seen
    into.unknown_reason.clear();
  }
  if (!into.utilization_before_pct) {
    into.utilization_before_pct = more.utilization_before_pct;
  }
}

EvidenceValue process_evidence(const GpuProcess& process) {
  return {{"pid", process.pid},
          {"name", process.name.empty() ? EvidenceValue() : EvidenceValue(process.name)},
          {"used_memory_bytes", process.used_memory_bytes},
          {"compute", process.compute},
          {"graphics", process.graphics}};
}

Evidence busy_evidence(const BusyFacts& facts) {
  Evidence::List others;
  for (const auto& process : facts.others) {
    others.push_back(process_evidence(process));
  }
  return {{"known", facts.known},
          {"unknown_reason", facts.known ? EvidenceValue() : EvidenceValue(facts.unknown_reason)},
          {"others", std::move(others)},
          {"utilization_before_pct", facts.utilization_before_pct}};
}

std::string_view checkpoint_outcome_name(CheckpointOutcome outcome) {
  switch (outcome) {
  case CheckpointOutcome::restored: return "restored";
  case CheckpointOutcome::unsupported: return "unsupported";
  case CheckpointOutcome::failed: return "failed";
  case CheckpointOutcome::corrupt: return "corrupt";
  }
  return "failed";
}

std::optional<CheckpointOutcome> checkpoint_outcome_from(std::string_view name) {
  for (const auto outcome : {CheckpointOutcome::restored, CheckpointOutcome::unsupported,
                             CheckpointOutcome::failed, CheckpointOutcome::corrupt}) {
    if (checkpoint_outcome_name(outcome) == name) {
      return outcome;
    }
  }
  return std::nullopt;
}

Evidence checkpoint_evidence(const CheckpointFacts& facts) {
  const auto text = [](const std::string& value) {
    return value.empty() ? EvidenceValue() : EvidenceValue(value);
  };
  return {{"outcome", checkpoint_outcome_name(facts.outcome)},
          {"step", text(facts.step)},
          {"code", facts.code},
          {"driver_words", text(facts.driver_words)},
          {"detail", text(facts.detail)},
          {"driver_version", facts.driver_version},
          {"persistence_mode", facts.persistence_mode},
          {"target_ended_checkpointed", facts.target_ended_checkpointed}};
}

Evidence details_evidence(const TestResult& result) {
  auto details = result.details;
  // The typed facts' fields join the test's own record of the same name (pcie, memory).
  const auto merge_into = [&details](std::string_view name, const Evidence& facts) {
    auto& record = details[name];
    if (record.record() == nullptr) {
      record = Evidence();
    }
    for (const auto& [field, value] : facts.fields()) {
      record[field] = value;
    }
  };
  if (result.pcie) {
    merge_into("pcie", pcie_evidence(*result.pcie));
  }
  if (result.memory) {
    merge_into("memory", memory_evidence(*result.memory));
  }
  if (result.checkpoint) {
    merge_into("checkpoint", checkpoint_evidence(*result.checkpoint));
  }
  if (result.clocks) {
    details.set("clocks", clocks_evidence(*result.clocks));
  }
  if (result.busy) {
    details.set("busy", busy_evidence(*result.busy));
  }
  return details;
}

} // namespace cudadiag::selftest
