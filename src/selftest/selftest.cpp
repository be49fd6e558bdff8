// The parent side of the self-test: decides what can run where, starts one worker per device (all
// devices at once), restarts a worker after a test that hung or crashed so the tests after it still
// run, and scores the results.

#include "selftest/selftest.hpp"

#include "core/filesystem.hpp"
#include "core/text.hpp"
#include "selftest/health.hpp"
#include "selftest/libs.hpp"
#include "selftest/libs_apart.hpp"
#include "selftest/runner.hpp"
#include "selftest/score.hpp"
#include "selftest/selftest_codec.hpp"
#include "selftest/selftest_worker.hpp"
#include "selftest/test_context.hpp"
#include "verify/nvrtc_builtins_preload.hpp"
#include "verify/verification.hpp"
#include "worker/process.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <chrono>
#include <future>
#include <iterator>
#include <map>
#include <mutex>

namespace cudadiag::selftest {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::string_view k_module_file = "libcudadiag_cub_selftest.so";

std::string step_path(const std::vector<worker::WorkerStep>& steps, std::string_view kind) {
  for (const auto& step : steps) {
    if (step.kind == kind) {
      return step.path;
    }
  }
  return {};
}

// The libraries a test loads that verification loads first, by verification step kind: a test is
// not run when one of them hung or crashed there.
struct TestLoads {
  std::string_view key;
  std::array<std::string_view, 2> step_kinds;
};
constexpr TestLoads k_tests_loading[] = {
    {.key = "jit", .step_kinds = {"nvrtc", "nvjitlink"}}, // NVRTC compiles, nvJitLink links LTO-IR
};

// The files verification saw hang or crash when it loaded them, with what happened.
std::map<std::string, std::string> unloadable_files(const verify::Verification& verification) {
  std::map<std::string, std::string> files;
  for (const auto& step : verification.steps) {
    if (step.status == worker::StepStatus::timeout) {
      files[step.path] =
          "loading " + step.path + " did not finish within --timeout in verification (verify.timeout)";
    } else if (step.status == worker::StepStatus::crashed) {
      files[step.path] =
          step.path + " crashed when verification loaded it: " + step.detail + " (verify.crashed)";
    }
  }
  return files;
}

std::string cccl_include(const discovery::DiscoveryResult& discovery) {
  for (const auto& component : discovery.components) {
    if (component.spec != nullptr && component.spec->name == "cccl") {
      const auto& choice = component.selected ? component.selected : component.loader;
      return choice ? choice->via.path : std::string();
    }
  }
  return {};
}

// The file discovery selected (else the loader's) of each library the libs test loads.
std::map<std::string, std::string> library_paths(const discovery::DiscoveryResult& discovery) {
  std::map<std::string, std::string> paths;
  const auto needed = libs::components_needed();
  for (const auto& component : discovery.components) {
    if (component.spec == nullptr || component.spec->kind != probes::ComponentKind::dynamic_lib ||
        std::find(needed.begin(), needed.end(), component.spec->name) == needed.end()) {
      continue;
    }
    const auto& choice = component.selected ? component.selected : component.loader;
    if (choice && !choice->via.path.empty()) {
      paths[std::string(component.spec->name)] = choice->via.path;
    }
  }
  return paths;
}

// The module next to the executable (build tree), else in ../lib/cudadiag (install tree), or why
// there is none.
Expected<std::string> find_module(const SelfTestOptions& options) {
  if (!options.module_path.empty()) {
    if (fs::is_regular_file(options.module_path)) {
      return options.module_path;
    }
    return Error{"the self-test module " + options.module_path + " does not exist"};
  }
  const auto exe = fs::real_path(options.executable);
  const std::string dir = fs::parent(exe ? *exe : options.executable);
  for (const auto& candidate :
       {dir + "/" + std::string(k_module_file), dir + "/../lib/cudadiag/" + std::string(k_module_file)}) {
    if (fs::is_regular_file(candidate)) {
      const auto real = fs::real_path(candidate);
      return real ? *real : candidate;
    }
  }
#ifdef CUDADIAG_SELFTEST_MODULE_MISSING_REASON
  return Error{"the CUB self-test module (" + std::string(k_module_file) +
               ") is not installed: " CUDADIAG_SELFTEST_MODULE_MISSING_REASON};
#else
  return Error{"the CUB self-test module (" + std::string(k_module_file) +
               ") is not installed: this cudadiag was built without nvcc"};
#endif
}

// What the driver step of verification says about devices: their count, or why there are none.
struct DriverView {
  int device_count = 0;
  std::string no_device_reason;
};

DriverView driver_view(const verify::Verification& verification, const std::string& libcuda) {
  DriverView view;
  if (libcuda.empty()) {
    view.no_device_reason = "no GPU: no CUDA driver (libcuda.so.1) was found";
    return view;
  }
  const auto* step = verification.step("cuda");
  if (step == nullptr) {
    view.no_device_reason = "no GPU: the driver was not verified";
    return view;
  }
  if (step->status != worker::StepStatus::ok) {
    view.no_device_reason = "no GPU: loading the driver " + std::string(worker::to_string(step->status)) +
                            (step->detail.empty() ? "" : ": " + step->detail);
    return view;
  }
  const auto* driver = std::get_if<verify::DriverFacts>(&step->facts);
  if (driver == nullptr || !driver->init) {
    const auto dlopen_error = driver != nullptr ? driver->dlopen_error : std::nullopt;
    view.no_device_reason = "no GPU: the driver could not be initialised (" +
                            dlopen_error.value_or("cuInit was not reached") + ")";
    return view;
  }
  if (driver->init->code != 0) {
    view.no_device_reason = "no GPU: cuInit returned " + driver->init->name.value_or("error") + " (" +
                            std::to_string(driver->init->code) + ")";
    return view;
  }
  view.device_count = driver->device_count.value_or(0);
  if (view.device_count == 0) {
    view.no_device_reason = "no GPU: the driver sees no device (CUDA_VISIBLE_DEVICES?)";
  }
  return view;
}

// The compute capability verification reported for a device, as 10 x major + minor.
std::optional<int> device_arch(const std::vector<verify::Device>& devices, int ordinal) {
  for (const auto& device : devices) {
    if (device.driver && device.driver->ordinal == ordinal) {
      // The worker's text, which a loaded library could have forged: parsed without exceptions or
      // overflow ("9.0" -> 90; anything else, or a part above 999, is unknown).
      const auto cc = device.driver->compute_capability.value_or("");
      const auto number = [](std::string_view text) -> std::optional<int> {
        int value = 0;
        const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
        if (text.empty() || error != std::errc{} || end != text.data() + text.size() || value < 0 ||
            value > 999) {
          return std::nullopt;
        }
        return value;
      };
      const auto dot = cc.find('.');
      const auto major =
          dot == std::string::npos ? std::nullopt : number(std::string_view(cc).substr(0, dot));
      const auto minor =
          dot == std::string::npos ? std::nullopt : number(std::string_view(cc).substr(dot + 1));
      if (major && minor) {
        return *major * 10 + *minor;
      }
    }
  }
  return std::nullopt;
}

// CUDADIAG_SELFTEST_INJECT_MEMORY_ERRORS: 1..4096 words the memory test corrupts on purpose (a test
// of the test: WorkerConfig::inject_memory_errors); anything else is 0, no injection.
unsigned injected_memory_errors(const Environment& env) {
  const auto text = env.non_empty("CUDADIAG_SELFTEST_INJECT_MEMORY_ERRORS");
  unsigned value = 0;
  if (!text) {
    return 0;
  }
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  return error == std::errc{} && end == text->data() + text->size() && value <= 4096 ? value : 0;
}

// CUDADIAG_SELFTEST_WORKERS: a positive integer (1..4096); anything else is ignored.
std::optional<unsigned> configured_workers(const Environment& env) {
  const auto text = env.non_empty("CUDADIAG_SELFTEST_WORKERS");
  unsigned value = 0;
  if (!text) {
    return std::nullopt;
  }
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc{} || end != text->data() + text->size() || value < 1 || value > 4096) {
    return std::nullopt;
  }
  return value;
}

// The self-test's overall budget: CUDADIAG_SELFTEST_BUDGET_S (1-86400 seconds) from the snapshot,
// else 120 s at the quick level and 900 s at the full level - far above what 8 GPUs need, and a
// bound when a driver lists a thousand devices.
std::chrono::seconds overall_budget(const Environment& env, Level level) {
  if (const auto text = env.non_empty("CUDADIAG_SELFTEST_BUDGET_S")) {
    unsigned value = 0;
    const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
    if (error == std::errc{} && end == text->data() + text->size() && value >= 1 && value <= 86400) {
      return std::chrono::seconds(value);
    }
  }
  return level == Level::full ? std::chrono::seconds(900) : std::chrono::seconds(120);
}

std::size_t catalog_index(std::string_view key) {
  const auto& catalog = test_catalog();
  const auto found =
      std::find_if(catalog.begin(), catalog.end(), [key](const TestInfo& info) { return info.key == key; });
  return static_cast<std::size_t>(found - catalog.begin());
}

TestResult error_result(const std::string& key, std::optional<int> device, std::string reason) {
  TestResult result;
  result.key = key;
  result.device = device;
  if (const auto* info = find_test(key)) {
    result.description = std::string(info->description);
  }
  result.status = TestStatus::error;
  result.reason = std::move(reason);
  return result;
}

std::string cut_reason(const SelfTestOptions& options) {
  return "the self-test's overall budget of " + std::to_string(options.budget.count()) + " s (" +
         std::string(level_name(options.level)) + " level; CUDADIAG_SELFTEST_BUDGET_S) was reached";
}

} // namespace

std::vector<TestResult> run_in_workers(WorkerConfig config, const SelfTestOptions& options,
                                       const Environment& env, std::mutex& progress_lock) {
  std::vector<TestResult> results;
  std::vector<std::string> remaining = config.tests;
  while (!remaining.empty()) {
    config.tests = remaining;
    worker::WorkerStep step{"selftest", "selftest", config.libcuda, {encode_config(config)}, -1};
    worker::WorkerOptions worker;
    worker.executable = options.executable;
    worker.step_timeout = options.startup_timeout;
    // Each test moves the deadline to its own (deadline_ms); the whole worker never outlives the
    // startup plus every remaining test's deadline.
    worker.step_budget = options.startup_timeout;
    for (const auto& key : remaining) {
      worker.step_budget += test_timeout(key, config.level);
    }
    if (options.deadline) {
      // The overall budget: no worker outlives it, whatever its tests' own deadlines.
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(*options.deadline - Clock::now());
      if (left.count() <= 0) {
        for (const auto& key : remaining) {
          auto cut = error_result(key, config.device, "not run: " + cut_reason(options));
          cut.status = TestStatus::skip;
          results.push_back(std::move(cut));
        }
        break;
      }
      worker.step_budget = std::min(worker.step_budget, left);
      worker.step_timeout = std::min(worker.step_timeout, left);
    }
    if (options.progress) {
      worker.on_record = [&](const worker::StepOutcome&, const std::string& record) {
        const auto result = decode_result(record);
        const std::lock_guard lock(progress_lock);
        options.progress(result.key + (result.device ? " (GPU " + std::to_string(*result.device) + ")" : "") +
                         ": " + std::string(to_string(result.status)) +
                         (result.reason.empty() ? "" : " — " + result.reason));
      };
    }
    if (options.progress) {
      std::string tests;
      for (const auto& key : remaining) {
        tests += (tests.empty() ? "" : ", ") + key;
      }
      const std::lock_guard lock(progress_lock);
      options.progress("running " + tests +
                       (config.device ? " on GPU " + std::to_string(*config.device) : "") +
                       (std::find(remaining.begin(), remaining.end(), "jit") != remaining.end()
                            ? " (jit compiles with NVRTC and links with nvJitLink: a few seconds)"
                            : ""));
    }
    const auto outcomes = worker::run_steps({step}, worker, env);
    const auto& outcome = outcomes.front();
    for (const auto& record : outcome.records) {
      auto result = decode_result(record);
      remaining.erase(std::remove(remaining.begin(), remaining.end(), result.key), remaining.end());
      results.push_back(std::move(result));
    }
    if (remaining.empty()) {
      break;
    }
    // The worker ended before the rest reported: the test it was in broke; the others go on.
    // Its last phase is "test:KEY", or "test:KEY|load PATH" while that test loaded a library.
    const std::string prefix = "test:";
    const std::string loading_mark = "|load ";
    const auto& phase = outcome.last_phase;
    std::string current = phase.rfind(prefix, 0) == 0 ? phase.substr(prefix.size()) : std::string();
    std::string loading;
    if (const auto mark = current.find(loading_mark); mark != std::string::npos) {
      loading = current.substr(mark + loading_mark.size());
      current.resize(mark);
    }
    const bool cut = outcome.status == worker::StepStatus::timeout && options.deadline &&
                     Clock::now() >= *options.deadline;
    if (cut) {
      // The overall budget ended the worker: the test it was in is cut, the rest not started. Both
      // are skips (the run's bound, not evidence about the GPU), saying so.
      for (const auto& key : remaining) {
        auto result = error_result(
            key, config.device, (key == current ? "cut while running: " : "not run: ") + cut_reason(options));
        result.status = TestStatus::skip;
        results.push_back(std::move(result));
      }
      break;
    }
    const std::string what =
        outcome.status == worker::StepStatus::timeout   ? "timed out (the worker was killed)"
        : outcome.status == worker::StepStatus::crashed ? "crashed: " + outcome.detail
        : outcome.status == worker::StepStatus::ok      ? "the worker finished without reporting it"
                                                        : outcome.detail;
    if (current.empty() || std::find(remaining.begin(), remaining.end(), current) == remaining.end()) {
      for (const auto& key : remaining) {
        results.push_back(
            error_result(key, config.device, "the self-test worker failed before this test: " + what));
      }
      break;
    }
    std::string why = what;
    if (outcome.status == worker::StepStatus::timeout) {
      why = !loading.empty()
                ? "loading " + loading + " did not finish within --timeout " +
                      seconds_text(config.load_timeout) + " (the worker was killed)"
                : "timed out after " + std::to_string(test_timeout(current, config.level).count() / 1000) +
                      " s (the worker was killed)";
    } else if (!loading.empty()) {
      why = what + " while loading " + loading;
    }
    auto broken = error_result(current, config.device, why);
    remaining.erase(std::remove(remaining.begin(), remaining.end(), current), remaining.end());
    results.push_back(std::move(broken));
  }
  return results;
}

namespace {

// One device's tests: the main worker, and NCCL's check in a worker of its own beside it
// (selftest/libs_apart.hpp). The apart worker reports no progress lines of its own: its result is
// part of the libs test's.
std::vector<TestResult> run_device(WorkerConfig config, const SelfTestOptions& options,
                                   const Environment& env, std::mutex& progress_lock) {
  auto apart = split_libs_apart(config);
  std::future<std::vector<TestResult>> apart_results;
  if (apart) {
    SelfTestOptions quiet = options;
    quiet.progress = nullptr;
    apart_results = std::async(std::launch::async, [&env, &progress_lock, apart = std::move(*apart), quiet] {
      return run_in_workers(apart, quiet, env, progress_lock);
    });
  }
  auto results = run_in_workers(std::move(config), options, env, progress_lock);
  if (apart_results.valid()) {
    merge_libs_apart(results, apart_results.get());
  }
  return results;
}

} // namespace

std::string_view level_name(Level level) {
  return level == Level::full ? "full" : "quick";
}

TestStatus SelfTestRun::status() const {
  if (!ran) {
    return TestStatus::skip;
  }
  const bool broken = std::any_of(tests.begin(), tests.end(), [](const TestResult& t) {
    return t.status == TestStatus::fail || t.status == TestStatus::error;
  });
  if (broken) {
    return TestStatus::fail;
  }
  // A pass without a GPU (jit's compile-only check) proves nothing about the GPU: no "pass" for it.
  const bool passed_on_gpu = std::any_of(tests.begin(), tests.end(), [](const TestResult& t) {
    return t.status == TestStatus::pass && t.device;
  });
  return passed_on_gpu ? TestStatus::pass : TestStatus::skip;
}

SelfTestRun run_selftest(const discovery::DiscoveryResult& discovery,
                         const verify::Verification& verification, const SelfTestOptions& options,
                         const Environment& env) {
  SelfTestRun run;
  run.level = options.level;
  run.context = options.context.value_or(detect_run_context(env));
  run.exclusive = options.exclusive;
  if (!options.enabled) {
    return run;
  }
  const auto started = Clock::now();
  try {
    const auto steps = verify::plan_steps(discovery);
    WorkerConfig base;
    base.level = options.level;
    for (const auto& info : test_catalog()) {
      if (options.only.empty() ||
          std::find(options.only.begin(), options.only.end(), info.key) != options.only.end()) {
        base.tests.emplace_back(info.key);
      }
    }
    base.tests_named = !options.only.empty();
    base.libcuda = step_path(steps, "driver");
    base.libraries = library_paths(discovery);
    base.nvrtc = step_path(steps, "nvrtc");
    base.nvrtc_builtins = verify::cuda_python_builtins_preload(discovery, base.nvrtc).value_or("");
    base.nvjitlink = step_path(steps, "nvjitlink");
    base.cccl_include = cccl_include(discovery);
    if (auto module = find_module(options)) {
      base.module_path = std::move(*module);
    } else {
      base.module_missing_reason = module.error().message;
    }
    base.executable = options.executable;
    base.nvml = step_path(steps, "nvml");
    base.load_timeout = options.load_timeout;
    base.session_pid = static_cast<int>(::getpid());
    base.inject_memory_errors = injected_memory_errors(env);
    run.module = SelfTestModule{base.module_path, base.module_missing_reason};
    // A library verification saw hang or crash is not loaded again: the tests that need it are
    // skipped, naming it (the verification's finding is the error), instead of paying for it twice.
    std::vector<TestResult> not_loaded_again;
    const auto unloadable = unloadable_files(verification);
    for (const auto& [key, needs] : k_tests_loading) {
      if (std::find(base.tests.begin(), base.tests.end(), key) == base.tests.end()) {
        continue;
      }
      for (const auto component : needs) {
        const auto path = step_path(steps, component);
        if (const auto found = unloadable.find(path); !path.empty() && found != unloadable.end()) {
          auto skip = error_result(std::string(key), std::nullopt, "not run: " + found->second);
          skip.status = TestStatus::skip;
          not_loaded_again.push_back(std::move(skip));
          base.tests.erase(std::remove(base.tests.begin(), base.tests.end(), key), base.tests.end());
          break;
        }
      }
    }

    const auto view = driver_view(verification, base.libcuda);
    if (options.require_gpu && view.device_count == 0) {
      run.skipped_reason = view.no_device_reason;
      return run;
    }
    std::vector<WorkerConfig> configs;
    if (view.device_count == 0) {
      auto config = base;
      config.no_device_reason = view.no_device_reason;
      configs.push_back(std::move(config));
    } else if (options.device) {
      if (*options.device < 0 || *options.device >= view.device_count) {
        run.ran = true;
        for (const auto& key : base.tests) {
          run.tests.push_back(error_result(key, options.device,
                                           "device " + std::to_string(*options.device) + " does not exist (" +
                                               std::to_string(view.device_count) +
                                               " visible; CUDA_VISIBLE_DEVICES applies)"));
        }
        run.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
        run.score = score(run.tests, verification.devices, options.level);
        return run;
      }
      auto config = base;
      config.device = *options.device;
      configs.push_back(std::move(config));
    } else {
      for (int ordinal = 0; ordinal < view.device_count; ++ordinal) {
        auto config = base;
        config.device = ordinal;
        configs.push_back(std::move(config));
      }
    }
    for (auto& config : configs) {
      if (config.device) {
        config.device_arch = device_arch(verification.devices, *config.device);
      }
    }

    // A bounded pool: `limit` threads, each taking the next device's worker until none is left.
    const unsigned limit = std::min<unsigned>(
        worker_limit(options.max_workers ? options.max_workers : configured_workers(env), usable_cpus()),
        static_cast<unsigned>(configs.size()));
    run.max_workers = limit;
    std::mutex progress_lock;
    std::vector<std::vector<TestResult>> per_config(configs.size());
    std::atomic<std::size_t> next{0};
    std::vector<std::future<void>> pool;
    // A device whose turn comes after the overall budget is not tested: its tests are skipped, saying
    // so; a worker still running at the budget is ended (run_in_workers).
    const auto budget = overall_budget(env, options.level);
    const auto cut_at = started + budget;
    SelfTestOptions bounded = options;
    bounded.deadline = cut_at;
    bounded.budget = budget;
    const std::string late = "not run: the self-test's overall budget of " + std::to_string(budget.count()) +
                             " s (CUDADIAG_SELFTEST_BUDGET_S) was spent before this device's turn (" +
                             std::to_string(configs.size()) + " devices, at most " + std::to_string(limit) +
                             " workers at once)";
    for (unsigned i = 0; i < limit; ++i) {
      pool.push_back(std::async(std::launch::async, [&] {
        for (std::size_t index = next++; index < configs.size(); index = next++) {
          if (Clock::now() >= cut_at) {
            for (const auto& key : configs[index].tests) {
              auto skipped = error_result(key, configs[index].device, late);
              skipped.status = TestStatus::skip;
              per_config[index].push_back(std::move(skipped));
            }
            continue;
          }
          per_config[index] = run_device(configs[index], bounded, env, progress_lock);
        }
      }));
    }
    for (auto& thread : pool) {
      thread.get();
    }
    for (std::size_t index = 0; index < configs.size(); ++index) {
      for (auto result : not_loaded_again) {
        result.device = configs[index].device;
        per_config[index].push_back(std::move(result));
      }
    }
    for (auto& results : per_config) {
      // Workers run jit last (its compiles overlap the GPU tests); report in catalog order.
      std::stable_sort(results.begin(), results.end(), [](const TestResult& a, const TestResult& b) {
        return catalog_index(a.key) < catalog_index(b.key);
      });
      std::move(results.begin(), results.end(), std::back_inserter(run.tests));
    }
    run.ran = true;
    run.score = score(run.tests, verification.devices, options.level);
  } catch (const std::exception& error) {
    run.ran = false;
    run.skipped_reason = std::string("internal error: ") + error.what();
  }
  run.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  return run;
}

} // namespace cudadiag::selftest
