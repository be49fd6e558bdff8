#pragma once
// `cudadiag diff A B [--tolerance PERCENT]`: what differs between two reports or bundles, most
// likely cause first; --json for the machine-readable form.
// Exit status: 0 equivalent, 1 different, 2 when an input is unreadable, not a report, truncated,
// or of another schema version (the message names the file and the problem).

#include "cli_support/cli_support.hpp"

#include <CLI/CLI.hpp>

#include <string>

namespace cudadiag::cli {

struct DiffCommandOptions {
  std::string a;
  std::string b;
  double tolerance_percent = 10;
};

CLI::App* add_diff_command(CLI::App& app, DiffCommandOptions& options);

int run_diff(const DiffCommandOptions& options, bool json, const cli_support::Terminal& terminal);

} // namespace cudadiag::cli
