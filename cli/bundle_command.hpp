#pragma once
// `cudadiag bundle [-o FILE] [--redact-paths] [--smi-timeout S]`: makes the full report (as
// `cudadiag` does, CI options included) and writes it with the raw evidence as a redacted .tar.gz
// (see bundle/bundle.hpp). Prints the archive's path on stdout (with --json, a JSON object).
// Exit status: the report's (0, or 1 with an error finding); 2 when the bundle cannot be written.

#include "ci_options.hpp"
#include "core/environment.hpp"
#include "policy/policy_file.hpp"
#include "report/report.hpp"

#include <CLI/CLI.hpp>

#include <string>

namespace cudadiag::cli {

struct BundleCommandOptions {
  std::string output;
  bool redact_paths = false;
  double smi_timeout_seconds = 10;
};

CLI::App* add_bundle_command(CLI::App& app, BundleCommandOptions& options);

// `settings` are the full report's (verification and self-test as the plain report runs them).
int run_bundle(const report::ReportOptions& settings, const policy::Policy& policy, const CiOptions& ci,
               const BundleCommandOptions& options, bool json, const Environment& env);

} // namespace cudadiag::cli
