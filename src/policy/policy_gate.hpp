#pragma once
// Applying a CI policy to a fresh report: the requirements are evaluated on the report's JSON
// document (evaluate.hpp), each unmet one is added as a `policy.unmet` finding, and the summary
// (and so the exit code) is recomputed under the stricter of --fail-on and the policy's fail_on.

#include "policy/evaluate.hpp"
#include "policy/policy_file.hpp"
#include "report/report.hpp"

#include <nlohmann/json.hpp>

#include <vector>

namespace cudadiag::policy {

struct GateResult {
  std::vector<Outcome> outcomes;                  // one per requirement, in order
  report::FailOn fail_on = report::FailOn::error; // the level the summary was computed under
};

// Evaluates, adds the findings and re-summarizes `report`. An empty policy changes nothing but
// the fail-on level.
GateResult apply_policy(report::Report& report, const Policy& policy, report::FailOn fail_on);

// The report's JSON document, with a "policy" object when the policy has requirements.
nlohmann::json gated_document(const report::Report& report, const Policy& policy, const GateResult& gate);

} // namespace cudadiag::policy
