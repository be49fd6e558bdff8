#include "fleet_command.hpp"

#include "output.hpp"

#include "bundle/atomic_file.hpp"
#include "fleet/fleet_input.hpp"
#include "fleet/fleet_render.hpp"

#include <spdlog/spdlog.h>

#include <cstdio>

namespace cudadiag::cli {
namespace {

constexpr int k_exit_usage = 2;

} // namespace

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

int run_fleet(const FleetCommandOptions& options, bool json, report::TextStyle style) {
  fleet::FleetBuilder builder;
  if (const auto error = fleet::read_inputs(options.inputs, stdin, builder)) {
    spdlog::error("{}", error->message);
    return k_exit_usage;
  }
  if (builder.node_count() == 0) {
    fleet::FleetOptions settings;
    const auto summary = std::move(builder).finish(settings);
    for (const auto& problem : summary.problems) {
      spdlog::error("{}{}: {}", problem.source, problem.line > 0 ? " line " + std::to_string(problem.line) : "",
                    problem.message);
    }
    spdlog::error("no cudadiag report in the input (expected the output of cudadiag --json, report files or bundles)");
    return k_exit_usage;
  }
  fleet::FleetOptions settings;
  settings.tolerance_percent = options.tolerance_percent;
  const auto summary = std::move(builder).finish(settings);
  if (!options.html.empty()) {
    if (const auto error = bundle::write_file_atomically(options.html, fleet::render_fleet_html(summary))) {
      spdlog::error("{}", error->message);
      return k_exit_usage;
    }
  }
  if (json) {
    write_stdout(fleet::fleet_to_json(summary).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  } else {
    // Host and device names come from other machines: no escape sequence of theirs reaches the terminal.
    write_stdout(report::escape_controls(fleet::render_fleet_text(summary, style), style));
  }
  return summary.exit_code;
}

} // namespace cudadiag::cli
