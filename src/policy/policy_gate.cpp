#include "policy/policy_gate.hpp"

#include "report/json_report.hpp"

namespace cudadiag::policy {

GateResult apply_policy(report::Report& report, const Policy& policy, report::FailOn fail_on) {
  GateResult gate;
  gate.fail_on = stricter(fail_on, policy.fail_on);
  if (!policy.requirements.empty()) {
    gate.outcomes = evaluate_policy(report::report_to_json(report), policy.requirements);
    for (auto& finding : unmet_findings(gate.outcomes)) {
      report.findings.push_back(std::move(finding));
    }
  }
  report.summary = report::summarize(report.findings, gate.fail_on);
  return gate;
}

nlohmann::json gated_document(const report::Report& report, const Policy& policy, const GateResult& gate) {
  auto document = report::report_to_json(report);
  if (!policy.requirements.empty()) {
    document["policy"] = outcomes_to_json(gate.outcomes, policy.sources,
                                          gate.fail_on == report::FailOn::warning ? "warning" : "error");
  }
  return document;
}

} // namespace cudadiag::policy
