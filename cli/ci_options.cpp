#include "ci_options.hpp"

#include "bundle/atomic_file.hpp"
#include "policy/policy_gate.hpp"
#include "report/html_report.hpp"
#include "report/junit_report.hpp"
#include "report/exit_style.hpp"
#include "report/markdown_report.hpp"
#include "report/prometheus_textfile.hpp"

#include <chrono>

namespace cudadiag::cli {

bool CiOptions::any() const {
  return !requirements.empty() || !policy_file.empty() || !junit.empty() || !html.empty() ||
         !markdown.empty() || !prometheus.empty() || exit_style != "cudadiag";
}

void add_ci_options(CLI::App& app, CiOptions& options) {
  // One value per occurrence, collected as each is parsed (a vector option would also take the
  // words after it, and trips GCC 12's -Wnull-dereference inside CLI11 2.1).
  app.add_option_function<std::string>(
         "--require", [&options](const std::string& spec) { options.requirements.push_back(spec); },
         "CI gate, repeatable: nvrtc>=12.4, cccl, driver>=580, selftest.sort>=30Gkeys, no-errors, ... "
         "(an unmet one is a policy.unmet error finding)")
      ->trigger_on_parse()
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->type_name("SPEC");
  app.add_option(
         "--policy", options.policy_file,
         "CI gates from a file (JSON or TOML): require = [SPEC, ...], fail_on = \"error\"|\"warning\"")
      ->type_name("FILE");
  app.add_option("--junit", options.junit,
                 "Also write the report as JUnit XML (components, findings, self-test, policy)")
      ->type_name("FILE");
  app.add_option("--html", options.html, "Also write the report as one self-contained HTML page")
      ->type_name("FILE");
  app.add_option("--markdown", options.markdown, "Also write the report as Markdown")->type_name("FILE");
  app.add_option("--prometheus", options.prometheus,
                 "Also write the report as Prometheus metrics for node_exporter's textfile collector "
                 "(written to a temporary file, then renamed)")
      ->type_name("FILE");
  app.add_option("--exit-style", options.exit_style,
                 "Exit codes for a health framework: cudadiag (default), npd (0 ok, 1 problem, 2 unknown) or "
                 "nagios (0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN); npd and nagios print one status line")
      ->check(CLI::IsMember({"cudadiag", "npd", "nagios"}));
}

Expected<policy::Policy> load_policy(const CiOptions& options) {
  policy::Policy policy;
  if (!options.policy_file.empty()) {
    auto loaded = policy::load_policy_file(options.policy_file);
    if (!loaded) {
      return loaded.error();
    }
    policy = std::move(*loaded);
  }
  if (auto error = policy::add_requirements(policy, options.requirements)) {
    return *error;
  }
  return policy;
}

Expected<nlohmann::json> gate_and_write(report::Report& report, const policy::Policy& policy,
                                        report::FailOn fail_on, const CiOptions& options) {
  const auto gate = policy::apply_policy(report, policy, fail_on);
  auto document = policy::gated_document(report, policy, gate);
  if (!options.junit.empty()) {
    if (auto error =
            bundle::write_file_atomically(options.junit, report::render_junit(document, gate.fail_on))) {
      return *error;
    }
  }
  if (!options.html.empty()) {
    if (auto error = bundle::write_file_atomically(options.html, report::render_html(document))) {
      return *error;
    }
  }
  if (!options.markdown.empty()) {
    if (auto error = bundle::write_file_atomically(options.markdown, report::render_markdown(document))) {
      return *error;
    }
  }
  if (!options.prometheus.empty()) {
    const auto now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    if (auto error = bundle::write_file_atomically(options.prometheus, report::render_prometheus(document, now))) {
      return *error;
    }
  }
  return document;
}

StyledResult styled_result(const nlohmann::json& document, int exit_code, bool json, const CiOptions& options) {
  const auto style = report::parse_exit_style(options.exit_style).value_or(report::ExitStyle::cudadiag);
  const auto& counts = document.contains("summary") ? document["summary"].value("counts", nlohmann::json::object())
                                                    : nlohmann::json::object();
  StyledResult result;
  result.exit_code = report::styled_exit_code(style, exit_code, counts.value("error", 0LL), counts.value("warning", 0LL));
  if (style != report::ExitStyle::cudadiag && !json) {
    result.status_line = report::status_line(style, document, result.exit_code);
  }
  return result;
}

} // namespace cudadiag::cli
