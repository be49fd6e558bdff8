#pragma once
// The report: an immutable value holding everything a run learned. Built once by make_report();
// renderers (JSON, terminal) only read it. Probes never print; renderers never probe.

#include "core/environment.hpp"
#include "discovery/discovery.hpp"
#include "findings/findings.hpp"
#include "selftest/selftest.hpp"
#include "verify/verification.hpp"

#include <string>
#include <vector>

namespace cudadiag::report {

struct HostInfo {
  std::string os;       // uname sysname ("Linux")
  std::string kernel;   // uname release
  std::string machine;  // uname machine ("x86_64")
  std::string hostname;
  std::optional<std::string> distro; // PRETTY_NAME from /etc/os-release
};
HostInfo read_host_info();

enum class FailOn { error, warning };

struct Summary {
  int exit_code = 0;  // 0 ok, 1 a finding at or above the --fail-on level
  int errors = 0, warnings = 0, infos = 0;
  [[nodiscard]] std::string_view status() const; // "ok", "warning", "error"
};

struct Report {
  HostInfo host;
  Environment environment;
  discovery::DiscoveryResult discovery;
  verify::Verification verification;
  selftest::SelfTestRun selftest; // not run unless asked (selftest.enabled)
  std::vector<findings::Finding> findings;
  Summary summary;
};

struct ReportOptions {
  discovery::DiscoveryOptions discovery;
  verify::VerifyOptions verify; // off unless asked: the CLI turns it on
  selftest::SelfTestOptions selftest; // off unless asked; runs after verification
  FailOn fail_on = FailOn::error;
};

// Discovery, then verification (when enabled), then the self-test (when enabled), then findings,
// then the summary.
Report make_report(const Environment& env, const ReportOptions& options);

// The summary for a set of findings under a --fail-on policy.
Summary summarize(const std::vector<findings::Finding>& found, FailOn fail_on);

// The environment variables a report shows (values as set; unset ones are shown as null).
const std::vector<std::string_view>& reported_variables();

} // namespace cudadiag::report
