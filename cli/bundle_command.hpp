#pragma once
// `cudadiag bundle [-o FILE] [--redact-paths] [--smi-timeout S]`: makes the full report (as
// `cudadiag` does, CI options included) and writes it with the raw evidence as a redacted .tar.gz.
// Prints the archive's path on stdout (with --json, a JSON object).
// Exit status: the report's (0, or 1 with an error finding); 2 when the bundle cannot be written.

#include "ci_options.hpp"
#include "cudadiag/cudadiag.hpp"
#include "output.hpp"

#include <CLI/CLI.hpp>

#include <string>

namespace cudadiag::cli {

struct BundleCommandOptions {
  std::string output;
  bool redact_paths = false;
  double smi_timeout_seconds = 10;
};

CLI::App* add_bundle_command(CLI::App& app, BundleCommandOptions& options);

// `report` is the full report (verification and self-test as the plain report runs them); `line`
// says what is being collected while the evidence is gathered.
int run_bundle(const Report& report, const CiOptions& ci, const BundleCommandOptions& options, bool json,
               ProgressLine& line);

} // namespace cudadiag::cli
