#pragma once
// How a run's CI requirements fared, as the report holds it. The requirements are evaluated by
// src/policy (a layer above the report: it reads the report's document); this header is the value
// both share, so that the report never includes the policy layer.

#include <string>
#include <vector>

namespace cudadiag::report {

// One requirement's outcome.
struct PolicyOutcome {
  std::string spec; // the requirement as written
  bool met = false;
  std::string detail;                  // what was seen: "nvrtc 13.0.88 (CUDA Python, site-packages) >= 12.4"
  std::vector<std::string> components; // the component a requirement names, if any
};

// The CI gates a run was given and how each fared (their unmet ones are also findings).
struct PolicyResult {
  std::vector<std::string> sources;    // where the requirements came from (--require, a policy file)
  std::vector<PolicyOutcome> outcomes; // one per requirement, in order
};

} // namespace cudadiag::report
