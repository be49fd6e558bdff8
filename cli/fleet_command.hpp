#pragma once
// `cudadiag fleet REPORT…|-`: N node reports (files, bundles, directories, "-" for the JSON lines
// of srun or kubectl logs on stdin) summarised as one answer; see fleet/fleet_summary.hpp.
// Exit status: 0 every node agrees with the majority in the driver and core components and none
// has an error; 1 a node has an error finding, differs in a core component, or an input is not a
// readable report; 2 usage errors (no input, a path that does not exist, no report at all).

#include "cli_support/cli_support.hpp"

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace cudadiag::cli {

struct FleetCommandOptions {
  std::vector<std::string> inputs;
  double tolerance_percent = 10;
  std::string html; // --html FILE
};

CLI::App* add_fleet_command(CLI::App& app, FleetCommandOptions& options);

// `argv`: this process's arguments, with which the program that parses with simdjson is run in this
// one's place where there is one (cli_support::faster_fleet_program).
// `executable`: this program's real path.
int run_fleet(const FleetCommandOptions& options, bool json, const cli_support::Terminal& terminal,
              char** argv, const std::string& executable);

} // namespace cudadiag::cli
