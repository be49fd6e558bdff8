#include "ci_options.hpp"

#include "bundle/atomic_file.hpp"
#include "policy/policy_gate.hpp"
#include "report/html_report.hpp"
#include "report/junit_report.hpp"
#include "report/markdown_report.hpp"

namespace cudadiag::cli {

bool CiOptions::any() const {
  return !requirements.empty() || !policy_file.empty() || !junit.empty() || !html.empty() ||
         !markdown.empty();
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
  return document;
}

} // namespace cudadiag::cli
