#pragma once
// Evaluating CI requirements against a report's JSON document: a pure function of the document
// (so it works the same on a fresh report and on one read from a file). Each unmet requirement
// becomes a `policy.unmet` finding (severity error).

#include "findings/findings.hpp"
#include "policy/requirement.hpp"
#include "report/policy_result.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace cudadiag::policy {

// One requirement's outcome: the value the report holds (report/policy_result.hpp).
using Outcome = report::PolicyOutcome;

// One outcome per requirement, in order. Nothing that cannot be observed counts as met: a missing
// component, an unknown version, a self-test that did not run or skipped all fail their requirement.
std::vector<Outcome> evaluate_policy(const nlohmann::json& report,
                                     const std::vector<Requirement>& requirements);

// A `policy.unmet` finding for every unmet outcome.
std::vector<findings::Finding> unmet_findings(const std::vector<Outcome>& outcomes);

} // namespace cudadiag::policy
