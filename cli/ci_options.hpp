#pragma once
// The report's CI options — policy gates (--require, --policy), report files (one option per
// output format: --junit, --markdown, --html, --prometheus) and the exit style — and what the
// commands that take them pass on.
// They apply to the full report (`cudadiag`), `cudadiag selftest` and `cudadiag bundle`.

#include "cli_support/cli_support.hpp"

#include <CLI/CLI.hpp>

#include <map>
#include <string>
#include <vector>

namespace cudadiag::cli {

struct CiOptions {
  std::vector<std::string> requirements;    // --require, repeatable
  std::string policy_file;                  // --policy
  std::map<std::string, std::string> files; // output format flag -> FILE
  std::string exit_style = "cudadiag";      // --exit-style cudadiag|npd|nagios
  int expect_gpus = 0;                      // --expect-gpus N; 0: not given

  [[nodiscard]] bool any() const;
};

// Registers the options on the top-level app (they are global, like --json).
void add_ci_options(CLI::App& app, CiOptions& options);

// "--require, --policy, --junit, ..." for the message that says where they apply.
std::string ci_option_names();

// The gates, for cli_support::run (which reports a malformed spec or policy file as a usage error).
cli_support::RunExtras run_extras(const CiOptions& options);
// The report files asked for.
std::vector<cli_support::OutputFile> output_files(const CiOptions& options);

} // namespace cudadiag::cli
