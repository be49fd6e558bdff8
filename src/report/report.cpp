#include "report/report.hpp"

#include "core/filesystem.hpp"
#include "findings/selftest_rules.hpp"
#include "findings/verification_rules.hpp"

#include <algorithm>
#include <future>
#include <iterator>

#include <sys/utsname.h>

namespace cudadiag::report {

std::string_view Summary::status() const {
  if (errors > 0) {
    return "error";
  }
  return warnings > 0 ? "warning" : "ok";
}

HostInfo read_host_info() {
  HostInfo host;
  struct utsname names {};
  if (::uname(&names) == 0) {
    host.os = names.sysname;
    host.kernel = names.release;
    host.machine = names.machine;
    host.hostname = names.nodename;
  }
  if (auto text = fs::read_file_prefix("/etc/os-release", 64 * 1024)) {
    std::string_view rest(*text);
    while (!rest.empty()) {
      const auto end = rest.find('\n');
      auto line = rest.substr(0, end);
      rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
      if (line.rfind("PRETTY_NAME=", 0) == 0) {
        line.remove_prefix(12);
        if (line.size() >= 2 && line.front() == '"' && line.back() == '"') {
          line = line.substr(1, line.size() - 2);
        }
        host.distro = std::string(line);
      }
    }
  }
  return host;
}

Summary summarize(const std::vector<findings::Finding>& found, FailOn fail_on) {
  Summary summary;
  for (const auto& finding : found) {
    switch (finding.severity) {
    case findings::Severity::error: ++summary.errors; break;
    case findings::Severity::warning: ++summary.warnings; break;
    case findings::Severity::info: ++summary.infos; break;
    }
  }
  const bool fails = summary.errors > 0 || (fail_on == FailOn::warning && summary.warnings > 0);
  summary.exit_code = fails ? 1 : 0;
  return summary;
}

const std::vector<std::string_view>& reported_variables() {
  static const std::vector<std::string_view> names = {
      "CUDA_PATH",      "CUDA_HOME",      "LD_LIBRARY_PATH", "LD_PRELOAD",        "CONDA_PREFIX",
      "VIRTUAL_ENV",    "PATH",           "PYENV_VERSION",   "PYENV_ROOT",        "PYTHONPATH",
      "PYTHONNOUSERSITE", "PYTHONUSERBASE", "CUDNN_PATH",    "NCCL_HOME",         "CUDA_VISIBLE_DEVICES",
      "NVIDIA_VISIBLE_DEVICES", "CUDA_MODULE_LOADING", "LIBRARY_PATH"};
  return names;
}

namespace {

void discover_and_verify(const Environment& env, const ReportOptions& options, Report& report) {
  if (!options.verify.enabled) {
    report.discovery = discovery::discover(env, options.discovery);
    report.verification = verify::verify(report.discovery, options.verify, env);
    return;
  }
  auto wanted = [&options](std::string_view name) {
    return options.discovery.only.empty() ||
           std::find(options.discovery.only.begin(), options.discovery.only.end(), name) != options.discovery.only.end();
  };
  discovery::DiscoveryOptions core_options = options.discovery;
  discovery::DiscoveryOptions rest_options = options.discovery;
  core_options.only.clear();
  rest_options.only.clear();
  for (const auto& spec : probes::catalog()) {
    if (wanted(spec.name)) {
      // The components verification loads come first, so the workers start while the rest of
      // the catalog is still being searched (`only` takes names: a header set goes with its library).
      const auto* library = probes::find_component(spec.name, probes::ComponentKind::dynamic_lib);
      (library != nullptr && library->verify ? core_options : rest_options).only.emplace_back(spec.name);
    }
  }
  auto core = discovery::discover(env, core_options);
  auto workers = std::async(std::launch::async, [&core, &options, &env] { return verify::verify(core, options.verify, env); });
  auto rest = rest_options.only.empty() ? discovery::DiscoveryResult{} : discovery::discover(env, rest_options);
  report.verification = workers.get();

  // One result in catalog order: the core set's context (Python environments, loader cache) and
  // every component from whichever pass resolved it.
  report.discovery = std::move(core);
  auto resolved = std::move(report.discovery.components);
  std::move(rest.components.begin(), rest.components.end(), std::back_inserter(resolved));
  report.discovery.components.clear();
  for (const auto& spec : probes::catalog()) {
    for (auto& component : resolved) {
      if (component.spec == &spec) {
        report.discovery.components.push_back(std::move(component));
      }
    }
  }
}

} // namespace

Report make_report(const Environment& env, const ReportOptions& options) {
  Report report;
  report.host = read_host_info();
  report.environment = env;
  discover_and_verify(env, options, report);
  report.selftest = selftest::run_selftest(report.discovery, report.verification, options.selftest, env);
  report.findings = findings::evaluate_discovery(report.discovery, env);
  for (auto& finding : findings::evaluate_verification(report.discovery, report.verification)) {
    // The stub can be named by both stages (file traits, then cuInit's 34): report it once.
    const bool repeated = finding.id == "driver.stub" &&
                          std::any_of(report.findings.begin(), report.findings.end(),
                                      [](const findings::Finding& known) { return known.id == "driver.stub"; });
    if (!repeated) {
      report.findings.push_back(std::move(finding));
    }
  }
  for (auto& finding : findings::evaluate_selftest(report.selftest)) {
    report.findings.push_back(std::move(finding));
  }
  report.summary = summarize(report.findings, options.fail_on);
  return report;
}

} // namespace cudadiag::report
