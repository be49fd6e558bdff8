// The entry points of the public API, run on the core (see pipeline.hpp).

#include "api/pipeline.hpp"

#include "api/convert.hpp"
#include "api/log.hpp"
#include "api/settings.hpp"
#include "api/worker_executable.hpp"
#include "cudadiag/version.h"
#include "report/json_report.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string_view>

// The headers' version macros must name the version the library is built as (project(VERSION)).
static_assert(std::string_view(CUDADIAG_VERSION) == CUDADIAG_VERSION_STRING,
              "include/cudadiag/version.h disagrees with project(VERSION) in CMakeLists.txt");

namespace cudadiag::api {
namespace {

using Clock = std::chrono::steady_clock;

double elapsed_ms(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

void require_valid(const Options& options) {
  if (auto problem = validate(options)) {
    throw Exception(*problem);
  }
}

// This process's environment, captured now, with the options' overrides applied.
Environment run_environment(const Options& options) {
  auto env = Environment::capture();
  for (const auto& [name, value] : options.environment) {
    if (value) {
      env.set(name, *value);
    } else {
      env.unset(name);
    }
  }
  return env;
}

report::ReportOptions report_options(const Options& options) {
  report::ReportOptions out;
  out.discovery.only = options.components;
  if (!options.python.empty()) {
    out.discovery.python_exe = options.python;
  }
  if (!options.ld_so_cache.empty()) {
    out.discovery.layout.ld_so_cache = options.ld_so_cache;
  }
  out.fail_on = options.fail_on_warning ? report::FailOn::warning : report::FailOn::error;
  return out;
}

void log_run(std::string_view what, const Report& report) {
  if (log_enabled(LogLevel::debug)) {
    char line[256];
    (void)std::snprintf(line, sizeof line, "%.*s: %zu components, %zu findings, %.2f ms",
                        static_cast<int>(what.size()), what.data(), report.components.size(),
                        report.findings.size(), report.elapsed_ms);
    log(LogLevel::debug, line);
  }
}

enum class Stages { discover, verify, self_test };

// discover(), verify() and self_test(): the core report with the stages asked for. Loading stages
// need the worker executable; without one they are skipped, with the reason in the report.
Report run_report(const Options& options, Stages stages, std::string_view what) {
  const auto start = Clock::now();
  require_valid(options);
  const auto env = run_environment(options);
  auto settings = report_options(options);
  std::string skipped = "discover(): files were inspected only; no code from them ran";
  if (stages != Stages::discover) {
    if (auto worker = worker_executable(options.executable, env)) {
      settings.verify.enabled = true;
      settings.verify.executable = *worker;
      settings.verify.step_timeout =
          std::chrono::milliseconds(static_cast<long long>(options.timeout_seconds * 1000.0));
      if (stages == Stages::self_test) {
        auto& selftest = settings.selftest;
        selftest.enabled = true;
        selftest.level =
            options.self_test_level == SelfTestLevel::full ? selftest::Level::full : selftest::Level::quick;
        selftest.only = options.self_tests;
        selftest.device = options.device;
        selftest.executable = *worker;
        selftest.progress = [](std::string_view line) { log(LogLevel::info, std::string(line)); };
      }
    } else {
      skipped = worker.error().message;
      log(LogLevel::warning, "verification skipped: " + skipped);
    }
  }
  auto data = std::make_shared<detail::ReportData>();
  data->report = report::make_report(env, settings);
  if (!settings.verify.enabled) {
    data->report.verification.skipped_reason = skipped;
    if (stages == Stages::self_test) {
      data->report.selftest.skipped_reason = skipped;
    }
  }
  auto out = to_public(std::move(data));
  out.elapsed_ms = elapsed_ms(start);
  log_run(what, out);
  return out;
}

} // namespace

Report run_discover(const Options& options) {
  return run_report(options, Stages::discover, "discover");
}
Report run_verify(const Options& options) {
  return run_report(options, Stages::verify, "verify");
}
Report run_self_test(const Options& options) {
  return run_report(options, Stages::self_test, "self_test");
}

Report run_quick_check(const Options& options) {
  const auto start = Clock::now();
  require_valid(options);
  auto settings = report_options(options);
  settings.discovery.python_exe.reset(); // never start a process here
  const auto process = inspect::inspect_this_process();

  auto data = std::make_shared<detail::ReportData>();
  auto& report = data->report;
  report.host = report::read_host_info();
  report.environment = run_environment(options);
  report.discovery = discovery::discover(report.environment, settings.discovery);
  report.verification.skipped_reason = "quick_check(): files were inspected only; nothing was loaded";
  // What is mapped already is a fact, so it comes first; what discovery predicts follows. Info
  // findings do not make CUDA fail and are left out; a stub named by both is reported once.
  auto keep = [&report](const findings::Finding& finding) {
    const bool repeated =
        finding.id == "driver.stub" &&
        std::any_of(report.findings.begin(), report.findings.end(),
                    [](const findings::Finding& known) { return known.id == "driver.stub"; });
    if (finding.severity != findings::Severity::info && !repeated) {
      report.findings.push_back(finding);
    }
  };
  std::for_each(process.findings.begin(), process.findings.end(), keep);
  const auto predicted = findings::evaluate_discovery(report.discovery, report.environment);
  std::for_each(predicted.begin(), predicted.end(), keep);
  report.summary = report::summarize(report.findings, settings.fail_on);

  auto out = to_public(std::move(data));
  std::transform(process.components.begin(), process.components.end(), std::back_inserter(out.loaded),
                 [](const auto& component) { return to_public(component); });
  out.elapsed_ms = elapsed_ms(start);
  log_run("quick_check", out);
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
