#pragma once
// Where cudadiag runs, which decides how loud some findings are (`--context interactive|ci|fleet`).
// Defined once here for every rule that depends on it: a GPU another process is using is worth
// knowing at a terminal (info) but a warning for a CI job or a fleet's health check, whose figures
// it spoils.
//
//   interactive  the default: a person at a terminal
//   ci           a CI job: CI=true in the environment (GitHub Actions, GitLab CI, and most others set it)
//   fleet        a node health check: under Slurm (SLURM_JOB_ID) or in a Kubernetes pod
//                (KUBERNETES_SERVICE_HOST)
//
// An explicit `--context` wins; otherwise the environment snapshot decides, fleet before ci.

#include "core/environment.hpp"

#include <optional>
#include <string_view>

namespace cudadiag {

enum class RunContext { interactive, ci, fleet };

// "interactive", "ci", "fleet".
std::string_view run_context_name(RunContext context);
// The inverse; nullopt for anything else.
std::optional<RunContext> parse_run_context(std::string_view text);
// The context the environment snapshot describes (see above).
RunContext detect_run_context(const Environment& env);

} // namespace cudadiag
