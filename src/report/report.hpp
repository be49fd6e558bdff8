#pragma once
// The report: an immutable value holding everything a run learned. Built once, by pipeline::run()
// (src/pipeline/plan.hpp); renderers (JSON, terminal, Markdown, HTML, JUnit) only read it.
// Probes never print; renderers never probe.

#include "core/environment.hpp"
#include "discovery/discovery.hpp"
#include "findings/container_rules.hpp"
#include "findings/findings.hpp"
#include "health/kernel_log.hpp"
#include "image/image.hpp"
#include "linkage/linkage.hpp"
#include "report/policy_result.hpp"
#include "report/summary_status.hpp"
#include "selftest/selftest.hpp"
#include "verify/verification.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudadiag::report {

struct HostInfo {
  std::string os;      // uname sysname ("Linux")
  std::string kernel;  // uname release
  std::string machine; // uname machine ("x86_64")
  std::string hostname;
  std::optional<std::string> distro; // PRETTY_NAME from /etc/os-release
  // The cluster's name for this node when it differs from the hostname a container sees: in a
  // Kubernetes pod the hostname is the pod's name. From CUDADIAG_NODE_NAME (the DaemonSet sets it
  // from spec.nodeName), else SLURMD_NODENAME (set in every Slurm task). Ignored unless it is a
  // plausible node name: 1 to 253 printable ASCII bytes without spaces.
  std::optional<std::string> node_name;
  std::optional<std::string> node_name_source; // the variable it came from
};
HostInfo read_host_info(const Environment& environment);

enum class FailOn { error, warning };

struct Summary {
  int exit_code = 0; // 0 ok, 1 a finding at or above the fail-on level
  int errors = 0, warnings = 0, infos = 0;
  FailOn fail_on = FailOn::error; // the level exit_code was computed under
  [[nodiscard]] SummaryStatus status() const;
};

struct Report {
  HostInfo host;
  Environment environment;
  std::string root; // the directory the system was read from (--root); "" for this machine
  std::optional<image::ImageInfo> image;           // --image: where the system came from and its config
  std::optional<findings::TargetHost> target_host; // under a root: the host the container is judged for
  discovery::DiscoveryResult discovery;
  linkage::Linkage linkage; // the found libraries' predicted closures (not run under --no-closure)
  verify::Verification verification;
  selftest::SelfTestRun selftest;     // not run unless asked (selftest.enabled)
  health::KernelLog kernel_log;       // the driver's Xid/SXid events (read with verification)
  std::optional<PolicyResult> policy; // when the run had requirements
  std::vector<findings::Finding> findings;
  Summary summary;
};

// The summary for a set of findings under a fail-on level.
Summary summarize(const std::vector<findings::Finding>& found, FailOn fail_on);

// The environment variables a report shows (values as set; unset ones are shown as null).
const std::vector<std::string_view>& reported_variables();

} // namespace cudadiag::report
