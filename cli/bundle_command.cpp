#include "bundle_command.hpp"

#include "exit_codes.hpp"
#include "output.hpp"

#include <spdlog/spdlog.h>

namespace cudadiag::cli {

CLI::App* add_bundle_command(CLI::App& app, BundleCommandOptions& options) {
  auto* command = app.add_subcommand(
      "bundle",
      "Write a support bundle (.tar.gz): the report as JSON, Markdown and HTML, search traces and raw "
      "evidence, with secrets redacted");
  command
      ->add_option(
          "-o,--output", options.output,
          "The archive to write (default: cudadiag-bundle-HOST-TIME.tar.gz in the current directory; "
          "a directory, or a path ending in /, gets that name inside it)")
      ->type_name("FILE");
  command->add_flag("--redact-paths", options.redact_paths,
                    "Also replace the home directory and the user name");
  command
      ->add_option("--smi-timeout", options.smi_timeout_seconds,
                   "Seconds nvidia-smi -q may take (default 10)")
      ->check(CLI::Range(0.1, 600.0));
  command->fallthrough();
  return command;
}

int run_bundle(const Report& report, const CiOptions& ci, const BundleCommandOptions& options, bool json,
               ProgressLine& line) {
  if (const auto problem = cli_support::write_outputs(report, output_files(ci))) {
    spdlog::error("{}", *problem);
    return k_exit_usage;
  }
  line.update(
      "collecting the bundle's evidence (nvidia-smi -q, the loader cache, wheel and conda records) …");
  spdlog::info("collecting the bundle's evidence");
  const auto written =
      cli_support::write_bundle(report, {.output = options.output,
                                         .redact_paths = options.redact_paths,
                                         .smi_timeout_seconds = options.smi_timeout_seconds});
  line.clear();
  for (const auto& note : written.notes) {
    spdlog::info("not in the bundle: {}", note);
  }
  write_stdout(json ? written.json : written.path + "\n");
  return report.exit_code;
}

} // namespace cudadiag::cli
