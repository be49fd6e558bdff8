#include "pipeline/plan.hpp"

#include "core/filesystem.hpp"
#include "core/parallel.hpp"
#include "core/system_root.hpp"
#include "core/text.hpp"
#include "core/timeline.hpp"
#include "discovery/load_model.hpp"
#include "discovery/selection.hpp"
#include "findings/environment_rules.hpp"
#include "findings/framework_load_rules.hpp"
#include "findings/framework_needs.hpp"
#include "findings/framework_rules.hpp"
#include "findings/gpu_count_rules.hpp"
#include "findings/jax_rules.hpp"
#include "findings/kernel_log_rules.hpp"
#include "findings/linkage_rules.hpp"
#include "findings/selftest_rules.hpp"
#include "findings/verification_rules.hpp"
#include "linkage/load_check.hpp"
#include "loader/ld_so_cache.hpp"
#include "policy/evaluate.hpp"
#include "python/framework_builds.hpp"
#include "report/json_report.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <future>
#include <iterator>
#include <limits>
#include <optional>
#include <span>
#include <utility>

namespace cudadiag::pipeline {
namespace {

using discovery::ComponentResult;

Expected<void> check_ld_so_cache(const std::string& path) {
  if (!fs::exists(path)) {
    return Error{"--ld-so-cache " + printable(path) + ": does not exist"};
  }
  if (!fs::is_regular_file(path)) {
    return Error{"--ld-so-cache " + printable(path) + ": not a regular file"};
  }
  // A file that is no cache at all (/etc/passwd) is a mistake in the command line; a damaged cache
  // is a fact about the machine, reported with the rest.
  if (auto head = fs::read_file_prefix(path, 32);
      head && !loader::could_be_ld_so_cache(std::as_bytes(std::span(head->data(), head->size())))) {
    return Error{"--ld-so-cache " + printable(path) +
                 ": not a loader cache (it starts with neither glibc's nor the old format's magic)"};
  }
  return {};
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

// Times the stages of one run and tells plan.log (and plan.progress) about them.
class StageLog {
public:
  explicit StageLog(const Plan& plan) : m_plan(plan) {}

  void start(std::string_view activity) {
    m_started = Clock::now();
    if (m_plan.progress) {
      m_plan.progress(activity);
    }
  }
  // "STAGE: N ms (what)" at stage detail, for the stage begun by the last start().
  void done(std::string_view stage, std::string_view what = {}) const {
    if (!m_plan.log) {
      return;
    }
    std::array<char, 32> ms{};
    static_cast<void>(
        std::snprintf(ms.data(), ms.size(), "%.1f",
                      std::chrono::duration<double, std::milli>(Clock::now() - m_started).count()));
    m_plan.log(Detail::stage, std::string(stage) + ": " + ms.data() + " ms" +
                                  (what.empty() ? std::string() : " (" + std::string(what) + ")"));
  }
  void say(Detail detail, const std::string& message) const {
    if (m_plan.log) {
      m_plan.log(detail, message);
    }
  }
  [[nodiscard]] bool wants_detail() const { return static_cast<bool>(m_plan.log); }

private:
  using Clock = std::chrono::steady_clock;
  const Plan& m_plan;
  Clock::time_point m_started = Clock::now();
};

// The search steps (-vv) and the files examined (trace) of resolved components.
void log_components(const StageLog& log, const std::vector<ComponentResult>& components) {
  if (!log.wants_detail()) {
    return;
  }
  for (const auto& component : components) {
    const std::string name(component.spec->name);
    for (const auto& line : component.trace) {
      log.say(Detail::step, name + ": " + line);
    }
    for (const auto& candidate : component.candidates) {
      std::string facts = candidate.realpath ? "realpath " + *candidate.realpath : std::string("no realpath");
      if (candidate.elf) {
        facts += candidate.elf->soname ? "; ELF SONAME " + *candidate.elf->soname
                                       : std::string("; ELF, no SONAME");
      }
      if (candidate.version) {
        facts += "; version " + candidate.version->version + " (" +
                 std::string(versions::to_string(candidate.version->source)) + ")";
      }
      if (candidate.is_stub) {
        facts += "; toolkit stub";
      }
      if (candidate.rejected) {
        facts += "; rejected: " + *candidate.rejected;
      }
      log.say(Detail::file, name + ": examined " + candidate.first.path + ": " + facts);
    }
  }
}

// One run's state, handed from stage to stage (run() below is the schedule). Each stage reads
// what the stages before it left and adds its part of the report; the futures are the stages
// running beside others, each joined by a later stage.
struct Run {
  explicit Run(const Plan& asked) : plan(asked), log(asked), options(asked.discovery) {}

  const Plan& plan;
  StageLog log;
  discovery::DiscoveryOptions options; // the plan's, with the loader cache it named
  std::vector<const probes::ComponentSpec*> specs;
  std::optional<discovery::DiscoveryContext> context; // until finish_discovery takes it
  bool framework_closures = false;
  std::optional<linkage::FrameworksAhead> frameworks_ahead;
  discovery::DiscoveryResult loaded;       // the verified components, as verification reads them
  std::vector<ComponentResult> others;     // the rest of the catalog
  std::optional<linkage::LoadCache> cache; // read before verification, written after the load check
  report::Report report;
  std::future<std::vector<python::FrameworkBuild>> gpu_code;
  std::future<void> load_check;
  std::future<health::KernelLog> kernel_log;
};

// The loader cache the plan named checked, the environment's snapshot taken (Python environments,
// the loader cache parsed): a usage error when the named cache is not one or --python cannot run.
Expected<void> prepare(Run& run) {
  const auto& plan = run.plan;
  run.log.start("finding CUDA components");
  if (plan.ld_so_cache) {
    CUDADIAG_TRY(check_ld_so_cache(*plan.ld_so_cache));
    run.options.layout.ld_so_cache = *plan.ld_so_cache;
  }
  run.specs = plan.components.empty() ? discovery::wanted_components({}) : plan.components;
  {
    const timeline::Span span("prepare");
    run.context = discovery::prepare_discovery(plan.environment, run.options, run.specs);
  }
  const auto& context = *run.context;
  if (run.options.python_exe && context.python_error) {
    return Error{*context.python_error};
  }
  run.log.done("environment",
               std::to_string(context.python.environments.size()) + " Python environment(s), " +
                   context.ld_cache.path + ": " +
                   (context.ld_cache.error ? *context.ld_cache.error
                                           : std::to_string(context.ld_cache.entries) + " entries"));
  for (const auto& line : context.python.trace) {
    run.log.say(Detail::step, "python: " + line);
  }
  run.report.host = report::read_host_info(plan.environment);
  run.report.environment = plan.environment;
  run.report.root = plan.root;
  if (!plan.root.empty()) {
    run.report.target_host = plan.target_host;
  }
  if (plan.image) {
    run.report.image = plan.image->info;
  }
  return {};
}

// torch's and JAX's own loads (a report of the whole catalog only: `find NAME` asks for one library,
// and `find --for` predicts its framework itself) are predicted while the components are resolved.
void start_framework_closures(Run& run) {
  run.framework_closures = run.plan.framework_closures && run.plan.components.empty();
  if (run.framework_closures) {
    run.frameworks_ahead =
        linkage::predict_frameworks_ahead(*run.context, run.plan.environment, run.options.layout);
  }
}

void log_verification_steps(const Run& run) {
  for (const auto& step : run.report.verification.steps) {
    run.log.say(Detail::step,
                "worker " + step.id + ": " + std::string(worker::to_string(step.status)) + " in " +
                    std::to_string(static_cast<long long>(step.elapsed_ms)) + " ms" +
                    (step.proven_at ? " (from the cache)" : "") + ", last phase " +
                    (step.last_phase.empty() ? std::string("-") : step.last_phase) +
                    (step.detail.empty() ? std::string() : ": " + step.detail) +
                    (step.stderr_tail.empty() ? std::string() : "; stderr: " + step.stderr_tail));
  }
}

// The components verification loads come first, so that the workers start while the rest of the
// catalog is still being resolved; without verification, every component in one parallel pass.
void resolve_and_verify(Run& run) {
  const auto& plan = run.plan;
  const auto& context = *run.context;
  std::vector<const probes::ComponentSpec*> verified;
  std::vector<const probes::ComponentSpec*> rest;
  for (const auto* spec : run.specs) {
    (spec->verify ? verified : rest).push_back(spec);
  }
  run.log.start("finding CUDA components");
  if (!plan.verify.enabled) {
    {
      const timeline::Span span("resolve");
      run.others = discovery::resolve_components(context, run.specs);
    }
    run.report.verification = verify::verify(run.loaded, plan.verify, plan.environment);
    if (!plan.not_loaded_reason.empty()) {
      run.report.verification.skipped_reason = plan.not_loaded_reason;
    }
    run.log.done("discovery", std::to_string(run.specs.size()) + " components; nothing loaded");
    return;
  }
  run.loaded.components = discovery::resolve_components(context, verified);
  run.log.done("discovery of the verified components", std::to_string(verified.size()) + " components");
  // The per-user cache of proven loads and of the libraries' own answers (linkage/load_cache.hpp).
  run.cache =
      linkage::LoadCache::open(plan.load_cache, plan.environment, plan.verify.executable, run.options.layout);
  run.cache->set_default_dirs(run.options.layout.default_lib_dirs);
  auto verify_options = plan.verify;
  verify_options.cache = &*run.cache;
  run.log.start("loading libraries in isolated workers");
  auto workers = std::async(std::launch::async, [&run, &context, &verify_options] {
    // The workers load what the load model answers (each load followed, closures and
    // cuda-pathfinder's control flow included), not select()'s file-by-file choice; on a copy, as
    // finish_discovery follows the loads of the run's components once, traces and all.
    discovery::DiscoveryResult answers;
    answers.components = run.loaded.components;
    static_cast<void>(discovery::follow_loads_from(context, answers.components));
    return verify::verify(answers, verify_options, run.plan.environment);
  });
  run.others = discovery::resolve_components(context, rest, run.loaded.components);
  run.report.verification = workers.get();
  run.log.done("verification and the rest of the discovery",
               std::to_string(run.report.verification.steps.size()) + " libraries loaded, " +
                   std::to_string(rest.size()) + " more components found");
  log_verification_steps(run);
}

// One result in the order asked for, each load followed (discovery::finish_discovery).
void finish_discovery(Run& run) {
  log_components(run.log, run.loaded.components);
  log_components(run.log, run.others);
  std::vector<ComponentResult> components;
  components.reserve(run.specs.size());
  for (const auto* spec : run.specs) {
    for (auto* part : {&run.loaded.components, &run.others}) {
      for (auto& component : *part) {
        if (component.spec == spec) {
          components.push_back(std::move(component));
        }
      }
    }
  }
  const timeline::Span span("finish");
  run.report.discovery = discovery::finish_discovery(std::move(*run.context), std::move(components));
  run.context.reset();
}

// The GPU code in the frameworks' libraries is read only when there is a GPU to judge it against,
// beside the closures, the load check and the self-test (a cold read of torch's library takes a
// few hundred milliseconds); a copy is read, and joined before the findings.
void start_gpu_code_read(Run& run) {
  const auto& devices = run.report.verification.devices;
  const bool gpu_known = std::any_of(devices.begin(), devices.end(), [](const auto& device) {
    return device.driver && device.driver->compute_capability;
  });
  if (gpu_known) {
    run.gpu_code = std::async(std::launch::async, [frameworks = run.report.discovery.frameworks]() mutable {
      python::read_framework_gpu_code(frameworks);
      return frameworks;
    });
  }
}

// `hangs` is never predicted, only observed: an answer whose worker was killed at its deadline
// while loading or answering (verify.timeout) hangs, whatever its closure predicted.
void mark_observed_hangs(Run& run) {
  for (auto& component : run.report.discovery.components) {
    const auto* step = run.report.verification.step(component.spec->name);
    if (step == nullptr || step->status != worker::StepStatus::timeout) {
      continue;
    }
    for (auto* answer : {&component.selected, &component.loader}) {
      if (*answer && (*answer)->loads() && (*answer)->via.path == step->path) {
        (*answer)->set_outcome(probes::LoadOutcome::hangs, "hangs (observed: " + step->detail + ")");
      }
    }
    component.status = discovery::status_of(component);
  }
}

void predict_closures(Run& run) {
  run.log.start("predicting each library's dependency closure");
  const timeline::Span span("linkage");
  auto& report = run.report;
  report.linkage = linkage::analyze_linkage(report.discovery, run.plan.environment, run.options.layout,
                                            run.framework_closures ? linkage::FrameworkClosures::predict
                                                                   : linkage::FrameworkClosures::skip,
                                            run.frameworks_ahead ? &*run.frameworks_ahead : nullptr);
  run.log.done("closures", std::to_string(report.linkage.components.size()) + " libraries, " +
                               std::to_string(report.linkage.files_read) + " files read");
}

// Every closure loaded in a worker beside the self-test (the one only opens files, the other works
// the GPU; each writes its own part of the report), unless verification is off, --no-load-check, or
// the driver crashed or hung (then the report says why).
void start_load_check(Run& run) {
  const auto& plan = run.plan;
  auto& report = run.report;
  if (!plan.verify.enabled) {
    report.linkage.load_check_skipped = report.verification.skipped_reason;
    return;
  }
  const auto* driver_step = report.verification.step("cuda");
  const bool driver_dies = driver_step != nullptr && (driver_step->status == worker::StepStatus::crashed ||
                                                      driver_step->status == worker::StepStatus::timeout);
  if (driver_dies) {
    // cuBLASLt and others load libcuda.so.1 when they are loaded: with a driver that crashes or
    // hangs, each of their workers would end the same way, and tell nothing new.
    report.linkage.load_check_skipped =
        "the driver (" + driver_step->path + ") " +
        (driver_step->status == worker::StepStatus::crashed ? "crashed" : "hung") + " when loaded (verify." +
        (driver_step->status == worker::StepStatus::crashed ? "crashed" : "timeout") +
        "); libraries that load it would too: fix the driver first";
    return;
  }
  if (!plan.load_check) {
    report.linkage.load_check_skipped =
        "--no-load-check: the closures were predicted from the files and verification loaded the selected "
        "libraries, but no closure was loaded to prove its prediction";
    return;
  }
  // A file verification saw hang or crash is not loaded again (its closures take that outcome).
  linkage::LoadCheckOptions load_options;
  load_options.executable = plan.verify.executable;
  load_options.step_timeout = plan.verify.step_timeout;
  for (const auto& step : report.verification.steps) {
    if (step.status == worker::StepStatus::timeout || step.status == worker::StepStatus::crashed) {
      const auto real = fs::real_path(step.path);
      load_options.proven[real ? *real : step.path] = {
          step.status, std::string(step.status == worker::StepStatus::timeout
                                       ? "loading " + step.path + " did not finish within --timeout"
                                       : step.path + " crashed when loaded") +
                           " in verification (verify." + std::string(worker::to_string(step.status)) + ")"};
    }
  }
  load_options.cache = run.cache ? &*run.cache : nullptr;
  run.load_check = std::async(std::launch::async, [&run, load_options = std::move(load_options)] {
    linkage::check_by_loading(run.report.linkage, load_options, run.plan.environment);
  });
}

void run_selftest(Run& run) {
  const auto& plan = run.plan;
  auto& report = run.report;
  run.log.start("GPU self-test");
  report.selftest =
      selftest::run_selftest(report.discovery, report.verification, plan.selftest, plan.environment);
  if (plan.selftest_skipped) {
    report.selftest.skipped_reason = *plan.selftest_skipped;
  }
  if (report.selftest.ran) {
    run.log.done("self-test", std::to_string(report.selftest.tests.size()) + " tests");
  } else if (!report.selftest.skipped_reason.empty()) {
    run.log.done("self-test", "skipped: " + report.selftest.skipped_reason);
  }
}

// The driver's Xid/SXid events: a question about this GPU's health, read with verification (never
// under --no-load, which promises no more than files), or from the file CUDADIAG_KMSG names. Read
// after everything that drove the GPU (verification's cuInit and nvmlInit, the self-test), so that
// the events they caused are in it, beside the stages that only join or read files.
void start_kernel_log_read(Run& run) {
  const auto& plan = run.plan;
  if (const auto file = plan.environment.non_empty("CUDADIAG_KMSG")) {
    run.kernel_log = std::async(std::launch::async, [file = *file] { return health::read_kernel_log(file); });
  } else if (plan.verify.enabled && plan.root.empty()) {
    run.kernel_log = std::async(std::launch::async, [] { return health::read_kernel_log("/dev/kmsg"); });
  } else {
    run.report.kernel_log = health::kernel_log_not_read(
        "/dev/kmsg", plan.not_loaded_reason.empty() ? "read only with verification" : plan.not_loaded_reason);
  }
}

// Joins what ran beside the self-test: the load check (then the cache is written), the
// frameworks' GPU code and the kernel log.
void join_background_stages(Run& run) {
  auto& report = run.report;
  if (run.load_check.valid()) {
    run.log.start("loading every closure in a worker");
    run.load_check.get();
    std::size_t checked = 0;
    std::size_t agree = 0;
    for (const auto& component : report.linkage.components) {
      for (const auto& closure : component.closures) {
        checked += closure.check ? 1U : 0U;
        agree += closure.check && closure.check->agrees() ? 1U : 0U;
      }
    }
    run.log.done("load check", std::to_string(checked) + " closures loaded in " +
                                   std::to_string(static_cast<long long>(report.linkage.load_check_ms)) +
                                   " ms, " + std::to_string(agree) + " as predicted");
  }
  if (run.cache) {
    run.cache->save();
    report.linkage.load_cache = run.cache->use();
  }
  if (run.gpu_code.valid()) {
    run.log.start("reading the frameworks' GPU code");
    report.discovery.frameworks = run.gpu_code.get();
    run.log.done("frameworks' GPU code", std::to_string(report.discovery.frameworks.size()) + " frameworks");
  }
  if (run.kernel_log.valid()) {
    report.kernel_log = run.kernel_log.get();
  }
}

// The GPUs the node must show, at each layer that answered (gpu.missing names the layer short).
std::vector<findings::Finding> expected_gpus_findings(const Run& run, std::size_t expected) {
  const auto& plan = run.plan;
  const auto& verification = run.report.verification;
  health::GpuRoots roots;
  roots.pci_devices = plan.environment.non_empty("CUDADIAG_PCI_DEVICES").value_or(roots.pci_devices);
  roots.nvidia_gpus = plan.environment.non_empty("CUDADIAG_NVIDIA_GPUS").value_or(roots.nvidia_gpus);
  auto counts = health::count_gpu_layers(roots);
  // NVML's and CUDA's counts only where they answered: nvmlInit and cuInit succeeded.
  if (const auto* step = verification.step("nvml");
      step != nullptr && step->status == worker::StepStatus::ok) {
    const auto* facts = std::get_if<verify::NvmlFacts>(&step->facts);
    if (facts != nullptr && facts->init && facts->init->code == 0 && facts->device_count) {
      counts.nvml = *facts->device_count;
    }
  }
  if (const auto* step = verification.step("cuda");
      step != nullptr && step->status == worker::StepStatus::ok) {
    const auto* facts = std::get_if<verify::DriverFacts>(&step->facts);
    if (facts != nullptr && facts->init && facts->init->code == 0 && facts->device_count) {
      counts.cuda = static_cast<std::size_t>(*facts->device_count);
    }
  }
  return findings::evaluate_expected_gpus(expected, counts);
}

// Each stage's findings in stage order, causes shared between them merged; then the policy's gates,
// which read the report as its JSON document says it (as they would a report from a file), so they
// run on everything above; last the summary.
void evaluate_findings(Run& run) {
  const auto& plan = run.plan;
  auto& report = run.report;
  run.log.start("evaluating findings");
  const timeline::Span span("findings");
  FindingList found(plan.problems_only);
  found.add(plan.observed);
  auto discovered = findings::evaluate_discovery(report.discovery, plan.environment);
  if (!plan.root.empty()) {
    // A container's libcuda is the host's, injected when it starts: none in the image is the norm.
    std::erase_if(discovered,
                  [](const findings::Finding& finding) { return finding.id == "driver.missing"; });
  }
  found.add(std::move(discovered));
  found.add(findings::evaluate_environment(plan.environment,
                                           plan.context.value_or(detect_run_context(plan.environment))));
  found.add(findings::evaluate_linkage(report.discovery, report.linkage, plan.environment));
  found.add(findings::evaluate_verification(report.discovery, report.verification));
  found.add(findings::evaluate_frameworks(report.discovery, report.verification));
  found.add(findings::evaluate_jax_checks(report.discovery, report.verification, plan.environment,
                                          &report.linkage));
  found.add(findings::evaluate_framework_loads(report.linkage));
  found.add(findings::evaluate_bound_needs(report.discovery, report.linkage, plan.environment));
  found.add(findings::evaluate_selftest(report.selftest));
  found.add(findings::evaluate_kernel_log(report.kernel_log, report.verification.devices));
  if (!plan.root.empty()) {
    found.add(findings::evaluate_container(plan.environment, plan.image.get(), plan.target_host));
  }
  if (const auto expected = plan.expect_gpus ? plan.expect_gpus : plan.policy.expect_gpus) {
    found.add(expected_gpus_findings(run, *expected));
  }
  report.findings = found.take();
  findings::merge_shared_causes(report.findings);
  if (!plan.policy.requirements.empty()) {
    auto outcomes = policy::evaluate_policy(report::report_to_json(report), plan.policy.requirements);
    auto unmet = policy::unmet_findings(outcomes);
    std::move(unmet.begin(), unmet.end(), std::back_inserter(report.findings));
    report.policy = report::PolicyResult{plan.policy.sources, std::move(outcomes)};
  }
  report.summary = report::summarize(report.findings, policy::stricter(plan.fail_on, plan.policy.fail_on));
  run.log.done("findings", std::to_string(report.findings.size()) + " findings");
}

} // namespace

Expected<report::Report> run(const Plan& plan) {
  const timeline::Span whole_run("run");
  // The run's helper threads, lent to each parallel section in turn (core/worker_pool.hpp): one
  // per CPU as a section uses them (it runs on this thread too), and two for the read-aheads
  // that run beside the sections; never more helpers than CPUs: on a 2-CPU machine a third could
  // not run beside the two busy threads, and only cost its start and the switches to it.
  constexpr auto k_any = std::numeric_limits<std::size_t>::max();
  WorkerPool pool(std::min(parallel_threads(k_any) + 1, parallel_threads(k_any, k_any)));
  const WorkerPool::Use use_pool(pool);

  // Every path below is read under the plan's root (none: this machine, beside other such runs).
  const fs::RootScope root(plan.root);
  Run run(plan);
  CUDADIAG_TRY(prepare(run));
  start_framework_closures(run); // beside the components' resolution
  resolve_and_verify(run);       // the verified components' workers beside the rest of the catalog
  finish_discovery(run);
  start_gpu_code_read(run); // beside everything up to the join
  mark_observed_hangs(run);
  predict_closures(run);
  start_load_check(run); // beside the self-test
  run_selftest(run);
  start_kernel_log_read(run); // after everything that drove the GPU
  join_background_stages(run);
  evaluate_findings(run);
  return std::move(run.report);
}

} // namespace cudadiag::pipeline
