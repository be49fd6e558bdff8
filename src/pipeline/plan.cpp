#include "pipeline/plan.hpp"

#include "core/filesystem.hpp"
#include "core/text.hpp"
#include "findings/selftest_rules.hpp"
#include "findings/verification_rules.hpp"
#include "report/json_report.hpp"

#include <algorithm>
#include <future>
#include <iterator>
#include <utility>

namespace cudadiag::pipeline {
namespace {

using discovery::ComponentResult;

std::optional<Error> check_ld_so_cache(const std::string& path) {
  if (!fs::exists(path)) {
    return Error{"--ld-so-cache " + printable(path) + ": does not exist"};
  }
  if (!fs::is_regular_file(path)) {
    return Error{"--ld-so-cache " + printable(path) + ": not a regular file"};
  }
  return std::nullopt;
}

// The findings list being built: in stage order, the driver stub named once (file traits, then
// cuInit's 34, or this process's mapping, can each name it), info left out when only problems count.
class FindingList {
public:
  explicit FindingList(bool problems_only) : m_problems_only(problems_only) {}

  void add(std::vector<findings::Finding> found) {
    for (auto& finding : found) {
      const bool repeated = finding.id == "driver.stub" &&
                            std::any_of(m_list.begin(), m_list.end(), [](const findings::Finding& known) {
                              return known.id == "driver.stub";
                            });
      if (!repeated && !(m_problems_only && finding.severity == findings::Severity::info)) {
        m_list.push_back(std::move(finding));
      }
    }
  }
  std::vector<findings::Finding> take() { return std::move(m_list); }

private:
  bool m_problems_only;
  std::vector<findings::Finding> m_list;
};

} // namespace

Expected<report::Report> run(const Plan& plan) {
  auto options = plan.discovery;
  if (plan.ld_so_cache) {
    if (auto problem = check_ld_so_cache(*plan.ld_so_cache)) {
      return *problem;
    }
    options.layout.ld_so_cache = *plan.ld_so_cache;
  }
  auto context = discovery::prepare_discovery(plan.environment, options);
  if (options.python_exe && context.python_error) {
    return Error{*context.python_error};
  }

  // The components verification loads come first, so that the workers start while the rest of
  // the catalog is still being resolved.
  const auto specs = plan.components.empty() ? discovery::wanted_components({}) : plan.components;
  std::vector<const probes::ComponentSpec*> verified;
  std::vector<const probes::ComponentSpec*> rest;
  for (const auto* spec : specs) {
    (spec->verify ? verified : rest).push_back(spec);
  }
  discovery::DiscoveryResult loaded; // the verified components, as verification reads them
  loaded.components = discovery::resolve_components(context, verified);

  report::Report report;
  report.host = report::read_host_info(plan.environment);
  report.environment = plan.environment;
  std::vector<ComponentResult> others;
  if (plan.verify.enabled) {
    auto workers = std::async(std::launch::async, [&loaded, &plan] {
      return verify::verify(loaded, plan.verify, plan.environment);
    });
    others = discovery::resolve_components(context, rest, loaded.components);
    report.verification = workers.get();
  } else {
    others = discovery::resolve_components(context, rest, loaded.components);
    report.verification = verify::verify(loaded, plan.verify, plan.environment);
    if (!plan.not_loaded_reason.empty()) {
      report.verification.skipped_reason = plan.not_loaded_reason;
    }
  }

  // One result in the order asked for.
  std::vector<ComponentResult> components;
  components.reserve(specs.size());
  for (const auto* spec : specs) {
    for (auto* part : {&loaded.components, &others}) {
      for (auto& component : *part) {
        if (component.spec == spec) {
          components.push_back(std::move(component));
        }
      }
    }
  }
  report.discovery = discovery::finish_discovery(std::move(context), std::move(components));

  report.selftest =
      selftest::run_selftest(report.discovery, report.verification, plan.selftest, plan.environment);
  if (plan.selftest_skipped) {
    report.selftest.skipped_reason = *plan.selftest_skipped;
  }

  FindingList found(plan.problems_only);
  found.add(plan.observed);
  found.add(findings::evaluate_discovery(report.discovery, plan.environment));
  found.add(findings::evaluate_verification(report.discovery, report.verification));
  found.add(findings::evaluate_selftest(report.selftest));
  report.findings = found.take();

  // The gates read the report as its JSON document says it (as they would a report from a file),
  // so they run on everything above; their findings join before the summary is made.
  if (!plan.policy.requirements.empty()) {
    auto outcomes = policy::evaluate_policy(report::report_to_json(report), plan.policy.requirements);
    auto unmet = policy::unmet_findings(outcomes);
    std::move(unmet.begin(), unmet.end(), std::back_inserter(report.findings));
    report.policy = report::PolicyResult{plan.policy.sources, std::move(outcomes)};
  }
  report.summary = report::summarize(report.findings, policy::stricter(plan.fail_on, plan.policy.fail_on));
  return report;
}

} // namespace cudadiag::pipeline
