#pragma once
// The plans behind the public API's functions (src/pipeline runs them), built from their Options.
// src/cli_support adds what only the CLI asks for on top of the same plans.

#include "cudadiag/types.hpp"
#include "pipeline/plan.hpp"

#include <string_view>

namespace cudadiag::api {

enum class Stages { discover, verify, self_test };

// This process's environment, captured now, with the options' overrides applied.
Environment run_environment(const Options& options);

// The plan of discover(), verify() or self_test(). Throws Exception naming the first invalid
// option. Stages that load need the worker executable; without one they are skipped and the plan
// carries the reason the report gives.
pipeline::Plan make_plan(const Options& options, Stages stages);

// Runs `plan` into a public Report (which keeps the core report for to_json). Throws Exception for
// what run() reports as a usage error (an unusable python or ld_so_cache). `what` names the run in
// the debug log line.
Report run_plan(const pipeline::Plan& plan, std::string_view what);

} // namespace cudadiag::api
