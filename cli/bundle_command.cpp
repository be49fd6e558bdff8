#include "bundle_command.hpp"

#include "output.hpp"

#include "bundle/bundle.hpp"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>

namespace cudadiag::cli {
namespace {

constexpr int k_exit_usage = 2;

} // namespace

CLI::App* add_bundle_command(CLI::App& app, BundleCommandOptions& options) {
  auto* command = app.add_subcommand(
      "bundle",
      "Write a support bundle (.tar.gz): the report as JSON, Markdown and HTML, search traces and raw "
      "evidence, with secrets redacted");
  command
      ->add_option(
          "-o,--output", options.output,
          "The archive to write (default: cudadiag-bundle-HOST-TIME.tar.gz in the current directory)")
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

int run_bundle(const report::ReportOptions& settings, const policy::Policy& policy, const CiOptions& ci,
               const BundleCommandOptions& options, bool json, const Environment& env) {
  auto report = report::make_report(env, settings);
  auto document = gate_and_write(report, policy, settings.fail_on, ci);
  if (!document) {
    spdlog::error("{}", document.error().message);
    return k_exit_usage;
  }
  bundle::BundleOptions bundle_options;
  bundle_options.output = options.output;
  bundle_options.redaction.paths = options.redact_paths;
  bundle_options.sources.nvidia_smi_timeout =
      std::chrono::milliseconds(static_cast<long long>(options.smi_timeout_seconds * 1000.0));
  bundle_options.created_unix = static_cast<std::int64_t>(std::time(nullptr));
  const auto written = bundle::write_bundle(*document, env, bundle_options);
  if (!written) {
    spdlog::error("{} (nothing was written)", written.error().message);
    return k_exit_usage;
  }
  for (const auto& item : written->not_collected) {
    spdlog::info("not in the bundle: {}: {}", item.what, item.why);
  }
  if (json) {
    nlohmann::json not_collected = nlohmann::json::array();
    for (const auto& item : written->not_collected) {
      not_collected.push_back({{"what", item.what}, {"why", item.why}});
    }
    const nlohmann::json out = {{"bundle", written->path},        {"bytes", written->bytes},
                                {"files", written->files},        {"redacted", written->redacted.to_json()},
                                {"not_collected", not_collected}, {"summary", (*document)["summary"]}};
    write_stdout(out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  } else {
    write_stdout(written->path + "\n");
  }
  return report.summary.exit_code;
}

} // namespace cudadiag::cli
