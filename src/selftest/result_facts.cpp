#include "selftest/result_facts.hpp"

#include "selftest/selftest.hpp"

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
          {"new_errors", facts.new_errors}};
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
  if (result.clocks) {
    details.set("clocks", clocks_evidence(*result.clocks));
  }
  return details;
}

} // namespace cudadiag::selftest
