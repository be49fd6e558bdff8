// The entry points of the public API: each builds its plan (plans.hpp) and runs it.

#include "api/pipeline.hpp"

#include "api/convert.hpp"
#include "api/log.hpp"
#include "api/plans.hpp"
#include "api/settings.hpp"
#include "api/worker_executable.hpp"
#include "core/evidence_json.hpp"
#include "core/filesystem.hpp"
#include "core/read_record.hpp"
#include "core/timeline.hpp"
#include "cudadiag/version.h"
#include "image/image.hpp"
#include "report/json_report.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string_view>
#include <sys/utsname.h>

// The headers' version macros must name the version the library is built as (project(VERSION)).
static_assert(std::string_view(CUDADIAG_VERSION) == CUDADIAG_VERSION_STRING,
              "include/cudadiag/version.h disagrees with project(VERSION) in CMakeLists.txt");

namespace cudadiag::api {
namespace {

using Clock = std::chrono::steady_clock;

void log_run(std::string_view what, const Report& report) {
  if (log_enabled(LogLevel::debug)) {
    char line[256];
    (void)std::snprintf(line, sizeof line, "%.*s: %zu components, %zu findings, %.2f ms",
                        static_cast<int>(what.size()), what.data(), report.components.size(),
                        report.findings.size(), report.elapsed_ms);
    log(LogLevel::debug, line);
  }
}

// quick_check()'s last answer, kept with what it depended on (issue 52): the inputs that are not
// files (the options it reads, the environment as the search sees it, the working directory, the
// user and group ids, the host's name and kernel, the findings about what this process had mapped)
// as one key, and the identity of every path discovery read (core/read_record.hpp). A later call
// whose key is equal and whose paths are all unchanged (stats only) answers the kept report;
// anything else computes afresh. What this process has mapped is read fresh on every call.
struct KeptQuickCheck {
  std::string key;
  fs::ReadSnapshot read;
  Report report; // without `loaded`, which every call reads afresh
};

std::mutex& kept_quick_check_mutex() {
  static std::mutex mutex;
  return mutex;
}
std::shared_ptr<const KeptQuickCheck>& kept_quick_check() {
  static std::shared_ptr<const KeptQuickCheck> kept;
  return kept;
}

void add_field(std::string& key, std::string_view field) {
  key += std::to_string(field.size());
  key += ':';
  key += field;
}

std::string quick_check_key(const Options& options, const pipeline::Plan& plan) {
  std::string key;
  add_field(key, "components");
  for (const auto& name : options.components) {
    add_field(key, name);
  }
  add_field(key, options.ld_so_cache);
  add_field(key, options.ld_so_conf);
  add_field(key, options.root);
  add_field(key, options.fail_on_warning ? "warning" : "error");
  add_field(key, "environment");
  for (const auto& [name, value] : plan.environment.variables()) {
    add_field(key, name);
    add_field(key, value);
  }
  add_field(key, plan.environment.cwd);
  add_field(key, plan.environment.passwd_home);
  add_field(key, std::to_string(plan.environment.uid) + "," + std::to_string(::geteuid()) + "," +
                     std::to_string(::getegid()) + "," + std::to_string(::getgid()));
  struct utsname names {};
  if (::uname(&names) == 0) {
    add_field(key, names.nodename);
    add_field(key, names.release);
    add_field(key, names.machine);
  }
  add_field(key, "observed");
  for (const auto& finding : plan.observed) {
    add_field(key, finding.id);
    add_field(key, std::to_string(static_cast<int>(finding.severity)));
    add_field(key, finding.message);
    add_field(key, finding.remedy);
    for (const auto& component : finding.components) {
      add_field(key, component);
    }
    add_field(key, evidence_to_json(finding.evidence).dump());
  }
  return key;
}

} // namespace

// The plan reads the system in `root` (Options::root): its real path, the working directory and home
// directory taken inside it, nothing loaded. A usage error (Exception) when it is not a directory.
// The driver version of this machine's loaded NVIDIA kernel module ("NVRM version: NVIDIA UNIX x86_64
// Kernel Module  570.86.10  ..."), "" when there is none.
std::string this_machines_driver() {
  const auto text = fs::read_file_prefix("/proc/driver/nvidia/version", 4096);
  if (!text) {
    return "";
  }
  const auto at = text->find("Kernel Module");
  std::size_t start = at == std::string::npos ? 0 : at + 13;
  while (start < text->size() && (text->at(start) < '0' || text->at(start) > '9')) {
    ++start;
  }
  auto end = start;
  while (end < text->size() && ((text->at(end) >= '0' && text->at(end) <= '9') || text->at(end) == '.')) {
    ++end;
  }
  return text->substr(start, end - start);
}

// The host the container findings judge for (Options::assume_driver, assume_gpu).
findings::TargetHost target_host(const Options& options) {
  findings::TargetHost host;
  if (!options.assume_driver.empty()) {
    host.driver = options.assume_driver;
    host.source = "--assume-driver";
  } else if (auto driver = this_machines_driver(); !driver.empty()) {
    host.driver = std::move(driver);
    host.source = "/proc/driver/nvidia/version";
  }
  for (std::size_t start = 0; start < options.assume_gpu.size();) {
    const auto end = std::min(options.assume_gpu.find(',', start), options.assume_gpu.size());
    const auto part = options.assume_gpu.substr(start, end - start);
    if (part.rfind("brand=", 0) == 0) {
      host.brand = part.substr(6);
      std::transform(host.brand.begin(), host.brand.end(), host.brand.begin(),
                     [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    } else if (part.rfind("sm_", 0) == 0 && part.size() >= 5) {
      host.arch = part.substr(3, part.size() - 4) + "." + part.substr(part.size() - 1);
    }
    start = end + 1;
  }
  return host;
}

void set_root(pipeline::Plan& plan, const std::string& root) {
  auto real = fs::real_path(root);
  if (!real || !fs::is_directory(*real)) {
    throw Exception("root " + root + ": " + (real ? std::string("not a directory") : real.error().message));
  }
  plan.root = *real;
  plan.environment.cwd = "/";
  // The passwd database asked is this machine's: under a root, a home directory comes from HOME only.
  if (plan.environment.passwd_home.empty()) {
    plan.environment.passwd_home = "/nonexistent";
  }
  plan.not_loaded_reason = "--root " + plan.root +
                           ": the files of another system were inspected only; nothing of it was loaded (its "
                           "glibc and loader are not this machine's)";
}

// The plan reads the image `options.image` names (Options::image): materialised for the run, its
// config's Env the environment (Options::environment on top, as `docker run -e`; all of it when
// inherit_environment is false and the config has none), its WorkingDir the working directory.
void open_image_for(pipeline::Plan& plan, const Options& options) {
  auto opened = image::open_image(options.image, "");
  if (!opened) {
    throw Exception(opened.error().message);
  }
  auto kept = std::make_shared<image::Image>(std::move(*opened));
  set_root(plan, kept->root);
  Environment env;
  env.uid = 0;
  for (const auto& entry : kept->info.config.env) {
    if (const auto equals = entry.find('='); equals != std::string::npos && equals > 0) {
      env.set(entry.substr(0, equals), entry.substr(equals + 1));
    }
  }
  for (const auto& [name, value] : options.environment) {
    if (value) {
      env.set(name, *value);
    } else {
      env.unset(name);
    }
  }
  const auto& user = kept->info.config.user;
  const auto uid_text = user.substr(0, user.find(':'));
  if (!uid_text.empty() &&
      std::all_of(uid_text.begin(), uid_text.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
      uid_text.size() < 10) {
    env.uid = static_cast<unsigned>(std::stoul(uid_text));
  }
  env.cwd = kept->info.config.working_dir.empty() ? "/" : kept->info.config.working_dir;
  env.passwd_home = env.uid == 0 ? "/root" : "/nonexistent";
  plan.environment = std::move(env);
  plan.not_loaded_reason = "--image " + options.image +
                           ": the image's files were inspected only; nothing of it was loaded (its glibc and "
                           "loader are not this machine's)";
  plan.image = std::move(kept);
}

Environment run_environment(const Options& options) {
  auto env = options.inherit_environment ? Environment::capture() : Environment{};
  if (!options.inherit_environment) {
    env.uid = static_cast<unsigned>(::getuid());
  }
  for (const auto& [name, value] : options.environment) {
    if (value) {
      env.set(name, *value);
    } else {
      env.unset(name);
    }
  }
  return env;
}

pipeline::Plan make_plan(const Options& options, Stages stages) {
  if (auto problem = validate(options)) {
    throw Exception(*problem);
  }
  pipeline::Plan plan;
  plan.environment = run_environment(options);
  for (const auto& name : options.components) {
    for (const auto* spec : probes::components_named(name)) {
      if (std::find(plan.components.begin(), plan.components.end(), spec) == plan.components.end()) {
        plan.components.push_back(spec);
      }
    }
  }
  // In catalog order, as the report lists them.
  std::sort(plan.components.begin(), plan.components.end());
  if (!options.python.empty()) {
    plan.discovery.python_exe = options.python;
  }
  if (!options.ld_so_cache.empty()) {
    plan.ld_so_cache = options.ld_so_cache;
  }
  if (!options.ld_so_conf.empty()) {
    plan.discovery.layout.ld_so_conf = options.ld_so_conf;
  }
  plan.discovery.verify_record_hashes = options.verify_record_hashes;
  plan.fail_on = options.fail_on_warning ? report::FailOn::warning : report::FailOn::error;
  if (options.context) {
    plan.context = *options.context == Context::fleet ? RunContext::fleet
                   : *options.context == Context::ci  ? RunContext::ci
                                                      : RunContext::interactive;
  }
  plan.not_loaded_reason = "discover(): files were inspected only; no code from them ran";
  if (!options.image.empty()) {
    open_image_for(plan, options);
    plan.target_host = target_host(options);
    return plan;
  }
  if (!options.root.empty()) {
    set_root(plan, options.root);
    plan.target_host = target_host(options);
    return plan;
  }
  if (stages == Stages::discover) {
    return plan;
  }
  auto worker = worker_executable(options.executable, plan.environment);
  if (!worker) {
    plan.not_loaded_reason = worker.error().message;
    if (stages == Stages::self_test) {
      plan.selftest_skipped = plan.not_loaded_reason;
    }
    log(LogLevel::warning, "verification skipped: " + plan.not_loaded_reason);
    return plan;
  }
  const auto timeout = std::chrono::milliseconds(static_cast<long long>(options.timeout_seconds * 1000.0));
  plan.verify.enabled = true;
  plan.verify.executable = *worker;
  plan.verify.step_timeout = timeout;
  plan.load_check = options.load_check;
  plan.load_cache = plan.environment.get("CUDADIAG_CACHE") == "0" ? linkage::CacheMode::off
                    : options.cache == Cache::read_write          ? linkage::CacheMode::read_write
                    : options.cache == Cache::read                ? linkage::CacheMode::read
                                                                  : linkage::CacheMode::off;
  if (stages == Stages::self_test) {
    auto& selftest = plan.selftest;
    selftest.enabled = true;
    selftest.level =
        options.self_test_level == SelfTestLevel::full ? selftest::Level::full : selftest::Level::quick;
    selftest.only = options.self_tests;
    selftest.context = plan.context;
    selftest.exclusive = options.exclusive;
    selftest.device = options.device;
    selftest.executable = *worker;
    selftest.startup_timeout = timeout;
    selftest.load_timeout = timeout;
    selftest.progress = [](std::string_view line) { log(LogLevel::info, std::string(line)); };
  }
  return plan;
}

Report run_plan(const pipeline::Plan& plan, std::string_view what) {
  const auto start = Clock::now();
  auto report = pipeline::run(plan);
  if (!report) {
    throw Exception(report.error().message);
  }
  auto data = std::make_shared<detail::ReportData>();
  data->report = std::move(*report);
  auto out = to_public(std::move(data));
  out.elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  log_run(what, out);
  return out;
}

Report run_discover(const Options& options) {
  return run_plan(make_plan(options, Stages::discover), "discover");
}
Report run_verify(const Options& options) {
  return run_plan(make_plan(options, Stages::verify), "verify");
}
Report run_self_test(const Options& options) {
  return run_plan(make_plan(options, Stages::self_test), "self_test");
}

Report run_require(const Options& options, const std::vector<std::string>& requirements, bool verify,
                   bool self_test) {
  auto plan = make_plan(options, self_test ? Stages::self_test : verify ? Stages::verify : Stages::discover);
  if (auto added = policy::add_requirements(plan.policy, requirements); !added) {
    throw Exception(added.error().message);
  }
  return run_plan(plan, "require");
}

Report run_quick_check(const Options& options) {
  const timeline::Span whole_call("quick_check");
  auto plan = make_plan(options, Stages::discover);
  plan.discovery.python_exe.reset(); // never start a process here
  plan.not_loaded_reason = "quick_check(): files were inspected only; nothing was loaded";
  // What this process can load or read at run time: the libraries, headers (NVRTC), bitcode and
  // static libraries (NVVM, nvJitLink), unless the caller names components. Not the toolkit's
  // programs, which no process loads, nor what importing torch or JAX would load or pins (their
  // builds and CUDA requirements are not read), which is another process's question: the full
  // report answers both.
  if (options.components.empty()) {
    for (const auto& spec : probes::catalog()) {
      if (spec.kind != probes::ComponentKind::binary) {
        plan.components.push_back(&spec);
      }
    }
  }
  plan.framework_closures = false;
  plan.discovery.frameworks = false;
  // What is mapped already is a fact, so it comes first; what discovery predicts follows. Info
  // findings do not make CUDA fail and are left out.
  const auto process = [] {
    const timeline::Span span("inspect_process");
    return inspect::inspect_this_process();
  }();
  plan.observed = process.findings;
  plan.problems_only = true;
  auto key = quick_check_key(options, plan);
  const auto start = Clock::now();
  std::shared_ptr<const KeptQuickCheck> kept;
  {
    const std::lock_guard lock(kept_quick_check_mutex());
    kept = kept_quick_check();
  }
  Report out;
  // Without $HOME the search asks the passwd database (NSS: files, LDAP, sssd), which no path
  // names: such a call is computed every time.
  // Under a root the recorded paths are the root's names, which a snapshot cannot stat: never kept.
  const bool keepable = plan.root.empty() && (plan.environment.non_empty("HOME").has_value() ||
                                              !plan.environment.passwd_home.empty());
  if (keepable && kept && kept->key == key && kept->read.unchanged()) {
    out = kept->report;
    out.elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (log_enabled(LogLevel::debug)) {
      log(LogLevel::debug,
          "quick_check: the kept answer (" + std::to_string(kept->read.size()) + " paths it read unchanged)");
    }
  } else {
    fs::ReadRecorder recorder;
    out = run_plan(plan, "quick_check");
    if (auto read = recorder.finish(); read && keepable) {
      auto fresh = std::make_shared<KeptQuickCheck>(KeptQuickCheck{std::move(key), std::move(*read), out});
      const std::lock_guard lock(kept_quick_check_mutex());
      kept_quick_check() = std::move(fresh);
    }
  }
  std::transform(process.components.begin(), process.components.end(), std::back_inserter(out.loaded),
                 [](const auto& component) { return to_public(component); });
  return out;
}

ProcessInspection run_inspect(int pid) {
  if (pid < 0) {
    throw Exception("invalid PID " + std::to_string(pid) +
                    " (expected a positive process id, or 0 for this process)");
  }
  auto data = std::make_shared<detail::InspectionData>();
  if (pid == 0) {
    data->inspection = inspect::inspect_this_process();
  } else {
    auto inspection = inspect::inspect_process(pid);
    if (!inspection) {
      throw Exception(inspection.error().message);
    }
    data->inspection = std::move(*inspection);
  }
  return to_public(std::move(data));
}

std::string render_json(const Report& report) {
  const auto* data = detail::Access::data(report);
  return data == nullptr ? std::string("{}\n") : report::render_json(data->report);
}

std::string render_json(const ProcessInspection& inspection) {
  const auto* data = detail::Access::data(inspection);
  if (data == nullptr) {
    return "{}\n";
  }
  return inspect::inspection_to_json(data->inspection)
             .dump(2, ' ', false, nlohmann::json::error_handler_t::replace) +
         "\n";
}

} // namespace cudadiag::api
