#include "diff_command.hpp"

#include "cli_support/cli_support.hpp"
#include "exit_codes.hpp"
#include "output.hpp"

namespace cudadiag::cli {
namespace {

constexpr int k_exit_different = 1;

} // namespace

CLI::App* add_diff_command(CLI::App& app, DiffCommandOptions& options) {
  auto* command = app.add_subcommand("diff", "Compare two reports or bundles (A B), most likely cause of a "
                                             "difference first (exit 0 when equivalent)");
  command->add_option("A", options.a, "A report (cudadiag --json > FILE) or a bundle (cudadiag bundle)")
      ->required();
  command->add_option("B", options.b, "The report or bundle to compare it with")->required();
  command
      ->add_option("--tolerance", options.tolerance_percent,
                   "Self-test figures differ when they are more than this many percent apart (default 10)")
      ->check(CLI::Range(0.0, 1000.0));
  command->fallthrough();
  return command;
}

int run_diff(const DiffCommandOptions& options, bool json, const cli_support::Terminal& terminal) {
  // An unreadable or incomparable input is a cudadiag::Exception: the caller reports it (exit 2).
  const auto outcome = cli_support::diff({options.a, options.b, options.tolerance_percent}, json, terminal);
  write_stdout(outcome.rendered);
  return outcome.equivalent ? 0 : k_exit_different;
}

} // namespace cudadiag::cli
