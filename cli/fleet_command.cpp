#include "fleet_command.hpp"

#include "cli_support/cli_support.hpp"
#include "output.hpp"

#include <spdlog/spdlog.h>

#include <unistd.h>

#include <cerrno>
#include <cstring>

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
      ->add_option(
          "--tolerance", options.tolerance_percent,
          "Flag self-test figures more than this many percent worse than the fleet median of their GPU model "
          "(default 10)")
      ->check(CLI::Range(0.0, 100.0));
  command->add_option("--html", options.html,
                      "Also write the summary as one self-contained HTML page to FILE");
  command->fallthrough();
  return command;
}

int run_fleet(const FleetCommandOptions& options, bool json, const cli_support::Terminal& terminal,
              char** argv, const std::string& executable) {
  // Every node's run is the other program; thousands of reports are read here, several times faster
  // with simdjson's parser (docs/performance.md): that program takes this one's place, same arguments.
  if (const auto faster = cli_support::faster_fleet_program(executable)) {
    spdlog::debug("running {} (simdjson's parser) in this process's place", *faster);
    ::execv(faster->c_str(), argv);
    spdlog::warn("could not run {} ({}): parsing with nlohmann_json, several times slower", *faster,
                 std::strerror(errno));
  }
  spdlog::info("fleet: reports parsed with {}", cli_support::fleet_parser());
  const auto outcome =
      cli_support::fleet({options.inputs, options.tolerance_percent, options.html}, json, terminal);
  for (const auto& error : outcome.errors) {
    spdlog::error("{}", error);
  }
  if (outcome.errors.empty()) {
    write_stdout(outcome.rendered);
  }
  return outcome.exit_code;
}

} // namespace cudadiag::cli
