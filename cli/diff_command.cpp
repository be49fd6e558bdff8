#include "diff_command.hpp"

#include "output.hpp"

#include "diff/diff_render.hpp"
#include "diff/report_input.hpp"

#include <spdlog/spdlog.h>

#include <cstdio>

namespace cudadiag::cli {
namespace {

constexpr int k_exit_different = 1;
constexpr int k_exit_usage = 2;

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

int run_diff(const DiffCommandOptions& options, bool json, report::TextStyle style) {
  const auto a = diff::load_report(options.a, "A");
  if (!a) {
    spdlog::error("{}", a.error().message);
    return k_exit_usage;
  }
  const auto b = diff::load_report(options.b, "B");
  if (!b) {
    spdlog::error("{}", b.error().message);
    return k_exit_usage;
  }
  if (const auto problem = diff::incomparable(*a, *b)) {
    spdlog::error("{}", *problem);
    return k_exit_usage;
  }
  auto result = diff::diff_reports(a->document, b->document, {options.tolerance_percent / 100.0});
  result.a.label = a->label;
  result.a.kind = a->kind;
  result.b.label = b->label;
  result.b.kind = b->kind;
  if (json) {
    write_stdout(diff::diff_to_json(result).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
                 "\n");
  } else {
    write_stdout(diff::render_diff_text(result, style));
  }
  return result.equivalent() ? 0 : k_exit_different;
}

} // namespace cudadiag::cli
