#pragma once
// Evaluating CI requirements against a report's JSON document: a pure function of the document
// (so it works the same on a fresh report and on one read from a file). Each unmet requirement
// becomes a `policy.unmet` finding (severity error).

#include "findings/findings.hpp"
#include "policy/requirement.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace cudadiag::policy {

struct Outcome {
  std::string spec; // the requirement as written
  bool met = false;
  std::string detail;                  // what was seen: "nvrtc 13.0.88 (CUDA Python, site-packages) >= 12.4"
  std::vector<std::string> components; // the component a requirement names, if any
};

// One outcome per requirement, in order. Nothing that cannot be observed counts as met: a missing
// component, an unknown version, a self-test that did not run or skipped all fail their requirement.
std::vector<Outcome> evaluate_policy(const nlohmann::json& report,
                                     const std::vector<Requirement>& requirements);

// A `policy.unmet` finding for every unmet outcome.
std::vector<findings::Finding> unmet_findings(const std::vector<Outcome>& outcomes);

// The report's "policy" object: {"sources": [...], "fail_on": "error"|"warning",
// "requirements": [{"spec", "met", "detail"}]}.
nlohmann::json outcomes_to_json(const std::vector<Outcome>& outcomes, const std::vector<std::string>& sources,
                                std::string_view fail_on);

} // namespace cudadiag::policy
