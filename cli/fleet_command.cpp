#include "fleet_command.hpp"

#include "cli_support/cli_support.hpp"
#include "output.hpp"

#include <spdlog/spdlog.h>


namespace cudadiag::cli {
CLI::App* add_fleet_command(CLI::App& app, FleetCommandOptions& options) {
  auto* command = app.add_subcommand(
      "fleet", "Summarise many nodes' reports: the majority, the odd nodes out and what differs, nodes with "
               "errors first (exit 0 when uniform and healthy)");
  command
      ->add_option("REPORT", options.inputs,
                   "Report files (cudadiag --json; JSON lines of many nodes), bundles, directories of them, "
                   "or - for standard input (srun ... cudadiag --json, kubectl logs --prefix)")
      ->required();
  command
      ->add_option("--tolerance", options.tolerance_percent,
                   "Flag self-test figures more than this many percent worse than the fleet median of their GPU model "
                   "(default 10)")
      ->check(CLI::Range(0.0, 100.0));
  command->add_option("--html", options.html, "Also write the summary as one self-contained HTML page to FILE");
  command->fallthrough();
  return command;
}

int run_fleet(const FleetCommandOptions& options, bool json, const cli_support::Terminal& terminal) {
  const auto outcome = cli_support::fleet({options.inputs, options.tolerance_percent, options.html}, json, terminal);
  for (const auto& error : outcome.errors) {
    spdlog::error("{}", error);
  }
  if (outcome.errors.empty()) {
    write_stdout(outcome.rendered);
  }
  return outcome.exit_code;
}

} // namespace cudadiag::cli
