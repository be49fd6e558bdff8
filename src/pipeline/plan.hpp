#pragma once
// The one run every front end makes: the CLI (through src/cli_support), the C and C++ API
// (src/api) and the bundle describe what they want as a Plan; run() turns it into a Report, the
// only way one is built. The stages, in order: discovery prepared once (the snapshot, the Python
// environments — running the named interpreter at most once —, the loader cache, parsed once),
// the verified components resolved first so that their workers load them in the background while
// the rest of the catalog is resolved, the self-test, the findings of each stage, the policy's
// findings, and last the summary. Nothing changes a Report after run() returns it.

#include "core/environment.hpp"
#include "core/expected.hpp"
#include "core/run_context.hpp"
#include "discovery/discovery.hpp"
#include "findings/container_rules.hpp"
#include "findings/findings.hpp"
#include "image/image.hpp"
#include "linkage/load_cache.hpp"
#include "policy/policy_file.hpp"
#include "probes/catalog.hpp"
#include "report/report.hpp"
#include "selftest/selftest.hpp"
#include "verify/verification.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::pipeline {

// How much a run tells as it goes: each stage and its duration (-v), each search step and worker
// message (-vv), each file examined (--log-level trace).
enum class Detail { stage, step, file };

struct Plan {
  Environment environment; // the snapshot every stage reads
  // The system the run reads (core/system_root.hpp): a real directory path holding another system's
  // files (--root, --image), "" for this machine. Under a root nothing is loaded (verify, the load
  // check and the self-test must be off: its glibc and loader are not this machine's), no kernel
  // log is read, and every path the report names is the root's own name for it.
  std::string root;
  // The image `root` was materialised from (--image): the report's environment.image, and which
  // layer put a file there for the container findings. Kept (and its tree) for the run.
  std::shared_ptr<const image::Image> image;
  // Under a root: the GPU host the container findings predict for (findings/container_rules.hpp).
  findings::TargetHost target_host;
  // The layout, the --python interpreter (python_exe) and the Python search options; `only` is
  // not read: `components` says what to report.
  discovery::DiscoveryOptions discovery;
  std::vector<const probes::ComponentSpec*> components; // empty: the whole catalog, in catalog order
  // torch's and JAX's own loads (the report's linkage.frameworks) besides the components' closures:
  // for a report of the whole catalog; `find NAME` and the startup check leave them out.
  bool framework_closures = true;
  // A loader cache the user named: it must be a regular file (else run() fails naming it); a
  // corrupt one is reported as the cache's status, as the default cache's problems are.
  std::optional<std::string> ld_so_cache;

  verify::VerifyOptions verify; // off: nothing is loaded
  // With verification, every closure is loaded in a worker and compared with its prediction (the
  // load check, linkage/load_check.hpp), unless this is false (--no-load-check): the report then
  // says why it did not run.
  bool load_check = true;
  // How the load check uses the per-user cache of proven loads (linkage/load_cache.hpp).
  linkage::CacheMode load_cache = linkage::CacheMode::off;
  std::string not_loaded_reason;      // the report's reason when verify is off ("": verification's own)
  selftest::SelfTestOptions selftest; // off: no self-test
  std::optional<std::string> selftest_skipped; // asked for but cannot run here: the report says why

  // Where cudadiag runs (core/run_context.hpp: --context); nullopt: from the environment snapshot.
  // It sets how loud env.behaviour_variable is (and the self-test's gpu.busy, through selftest.context).
  std::optional<RunContext> context;

  policy::Policy policy; // CI gates: each unmet requirement is a finding
  // The GPUs this node must show (--expect-gpus, else the policy's expect_gpus): fewer at any layer
  // is gpu.missing, naming the layer. The layers' roots are CUDADIAG_PCI_DEVICES and
  // CUDADIAG_NVIDIA_GPUS in the snapshot when set (tests), else /sys/bus/pci/devices and
  // /proc/driver/nvidia/gpus.
  std::optional<std::size_t> expect_gpus;
  report::FailOn fail_on =
      report::FailOn::error; // the summary's level: the stricter of this and policy.fail_on

  // Findings known before the run (what this process has mapped, for the startup check); they come
  // first, and a driver.stub among them is not repeated by discovery's.
  std::vector<findings::Finding> observed;
  bool problems_only = false; // keep warnings and errors only (the startup check)

  // Optional, called on the thread that called run(): what happened, at three levels of detail.
  std::function<void(Detail detail, std::string_view message)> log;
  // Optional: what the run is doing now, for a live progress line ("loading libraries in isolated
  // workers"); the self-test's own lines come through selftest.progress.
  std::function<void(std::string_view activity)> progress;
};

// The Report the plan describes. Error, naming the input, when plan.ld_so_cache is not a regular
// file or discovery.python_exe cannot be run and asked (a usage error: nothing was reported).
Expected<report::Report> run(const Plan& plan);

} // namespace cudadiag::pipeline
