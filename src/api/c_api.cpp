// The C API (cudadiag.h) over the C++ one. Every entry point validates its handles through the
// registry, catches everything, and leaves a message in the calling thread's last error.

#include "api/c_handles.hpp"
#include "api/log.hpp"
#include "api/pipeline.hpp"
#include "cudadiag/cudadiag.hpp"

#include <cstring>
#include <new>

namespace cudadiag::api {

HandleRegistry<cudadiag_options>& options_registry() {
  // Never destroyed: an application may free handles from its own static destructors.
  static auto* registry = new HandleRegistry<cudadiag_options>();
  return *registry;
}

HandleRegistry<cudadiag_report>& report_registry() {
  static auto* registry = new HandleRegistry<cudadiag_report>();
  return *registry;
}

namespace {

thread_local std::string t_last_error;

cudadiag_status succeed() {
  t_last_error.clear();
  return CUDADIAG_OK;
}

// Records `message` as this thread's last error and returns `status`.
cudadiag_status fail(cudadiag_status status, std::string message) noexcept {
  t_last_error = std::move(message); // a move: no allocation
  return status;
}

// fail() for the exception handlers: "<function>: <detail>", built without letting an allocation
// failure escape (the message is then left empty).
cudadiag_status fail(cudadiag_status status, const char* function, const char* detail) noexcept {
  try {
    t_last_error.assign(function).append(": ").append(detail);
  } catch (...) { // NOLINT(bugprone-empty-catch): out of memory for the message; the status still tells
    t_last_error.clear();
  }
  return status;
}

// Runs `body`, turning any exception into a status. `body` returns the status of a normal return.
template <class Body> cudadiag_status guarded(const char* function, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return fail(CUDADIAG_ERROR_OUT_OF_MEMORY, function, "out of memory");
  } catch (const std::exception& error) {
    return fail(CUDADIAG_ERROR_INTERNAL, function, error.what());
  } catch (...) {
    return fail(CUDADIAG_ERROR_INTERNAL, function, "internal error");
  }
}

cudadiag_status invalid_handle(const char* function, const char* what, const void* handle) {
  return fail(CUDADIAG_ERROR_INVALID_HANDLE,
              std::string(function) + ": " +
                  (handle == nullptr ? std::string(what) + " is NULL"
                                     : std::string(what) + " is not a live handle (freed already?)"));
}

cudadiag_status null_output(const char* function) {
  return fail(CUDADIAG_ERROR_INVALID_ARGUMENT, std::string(function) + ": the output pointer is NULL");
}

// The buffer protocol of cudadiag_report_json and cudadiag_options_to_json.
cudadiag_status copy_out(const char* function, const std::string& text, char* buffer, size_t size,
                         size_t* needed) {
  const size_t required = text.size() + 1;
  if (buffer == nullptr && size != 0) {
    return fail(CUDADIAG_ERROR_INVALID_ARGUMENT,
                std::string(function) + ": buffer is NULL but size is not 0");
  }
  if (needed != nullptr) {
    *needed = required;
  }
  if (buffer == nullptr) {
    return needed != nullptr
               ? succeed()
               : fail(CUDADIAG_ERROR_INVALID_ARGUMENT,
                      std::string(function) + ": a size query (buffer NULL, size 0) needs `needed`");
  }
  if (size < required) {
    if (size > 0) {
      buffer[0] = '\0';
    }
    return fail(CUDADIAG_ERROR_BUFFER_TOO_SMALL, std::string(function) + ": the buffer holds " +
                                                     std::to_string(size) + " bytes; " +
                                                     std::to_string(required) + " are needed");
  }
  std::memcpy(buffer, text.c_str(), required);
  return succeed();
}

Settings settings_of(const cudadiag_options* options) {
  if (options == nullptr) {
    return {};
  }
  const std::lock_guard lock(options->mutex);
  return options->settings;
}

cudadiag_verdict to_c(Verdict verdict) {
  switch (verdict) {
  case Verdict::ok: return CUDADIAG_VERDICT_OK;
  case Verdict::warning: return CUDADIAG_VERDICT_WARNING;
  case Verdict::error: return CUDADIAG_VERDICT_ERROR;
  }
  return CUDADIAG_VERDICT_ERROR;
}

cudadiag_severity to_c(Severity severity) {
  switch (severity) {
  case Severity::info: return CUDADIAG_SEVERITY_INFO;
  case Severity::warning: return CUDADIAG_SEVERITY_WARNING;
  case Severity::error: return CUDADIAG_SEVERITY_ERROR;
  }
  return CUDADIAG_SEVERITY_ERROR;
}

cudadiag_repair to_c(Repair repair) {
  switch (repair) {
  case Repair::none: return CUDADIAG_REPAIR_NONE;
  case Repair::fix_environment: return CUDADIAG_REPAIR_FIX_ENVIRONMENT;
  case Repair::reinstall_package: return CUDADIAG_REPAIR_REINSTALL_PACKAGE;
  case Repair::restart_process: return CUDADIAG_REPAIR_RESTART_PROCESS;
  case Repair::reset_gpu: return CUDADIAG_REPAIR_RESET_GPU;
  case Repair::reboot: return CUDADIAG_REPAIR_REBOOT;
  case Repair::hardware_inspection: return CUDADIAG_REPAIR_HARDWARE_INSPECTION;
  }
  return CUDADIAG_REPAIR_NONE;
}

cudadiag_status publish(Report report, cudadiag_report** out) {
  auto handle = std::make_unique<cudadiag_report>();
  handle->verdict = to_c(report.verdict);
  handle->exit_code = report.exit_code;
  handle->findings = report.findings;
  handle->source = std::move(report);
  *out = report_registry().add(std::move(handle));
  return succeed();
}

cudadiag_status publish(ProcessInspection inspection, cudadiag_report** out) {
  auto handle = std::make_unique<cudadiag_report>();
  handle->verdict = to_c(inspection.verdict);
  handle->exit_code = inspection.verdict == Verdict::error ? 1 : 0; // `cudadiag inspect`'s exit code
  handle->findings = inspection.findings;
  handle->source = std::move(inspection);
  *out = report_registry().add(std::move(handle));
  return succeed();
}

// Runs one of the report-producing entry points: checks `out` and the options, then `run(options)`.
template <class Run>
cudadiag_status produce(const char* function, const cudadiag_options* options, cudadiag_report** out,
                        Run&& run) {
  return guarded(function, [&]() -> cudadiag_status {
    if (out == nullptr) {
      return null_output(function);
    }
    *out = nullptr;
    if (options != nullptr && !options_registry().contains(options)) {
      return invalid_handle(function, "options", options);
    }
    try {
      return publish(run(settings_of(options)), out);
    } catch (const Exception& error) {
      return fail(CUDADIAG_ERROR_INVALID_OPTIONS, std::string(function) + ": " + error.what());
    }
  });
}

// Finding `index` of a live report, or a status explaining why there is none.
template <class Read>
cudadiag_status read_finding(const char* function, const cudadiag_report* report, size_t index,
                             bool out_is_null, Read&& read) {
  return guarded(function, [&]() -> cudadiag_status {
    if (!report_registry().contains(report)) {
      return invalid_handle(function, "report", report);
    }
    if (out_is_null) {
      return null_output(function);
    }
    if (index >= report->findings.size()) {
      return fail(CUDADIAG_ERROR_INVALID_ARGUMENT,
                  std::string(function) + ": index " + std::to_string(index) +
                      " is out of range (the report has " + std::to_string(report->findings.size()) +
                      " findings)");
    }
    read(report->findings[index]);
    return succeed();
  });
}

} // namespace
} // namespace cudadiag::api

const std::string& cudadiag_report::json_text() const {
  json_once.call(
      [this] { json = std::visit([](const auto& value) { return cudadiag::to_json(value); }, source); });
  return json;
}

using namespace cudadiag::api; // NOLINT(google-build-using-namespace): this file implements the C API

extern "C" {

int cudadiag_version(void) {
  return CUDADIAG_VERSION_NUMBER;
}

const char* cudadiag_version_string(void) {
  return CUDADIAG_VERSION_STRING;
}

const char* cudadiag_last_error(void) {
  return t_last_error.c_str();
}

void cudadiag_set_log_callback(cudadiag_log_callback callback, cudadiag_log_level min_level,
                               void* user_data) {
  guarded("cudadiag_set_log_callback", [&] {
    if (callback == nullptr) {
      cudadiag::set_log_handler(nullptr);
      return succeed();
    }
    const auto level = static_cast<cudadiag::LogLevel>(min_level);
    cudadiag::set_log_handler(
        [callback, user_data](cudadiag::LogLevel message_level, const std::string& message) {
          callback(static_cast<cudadiag_log_level>(message_level), message.c_str(), user_data);
        },
        level);
    return succeed();
  });
}

cudadiag_status cudadiag_options_new(cudadiag_options** out) {
  return guarded("cudadiag_options_new", [&] {
    if (out == nullptr) {
      return null_output("cudadiag_options_new");
    }
    *out = options_registry().add(std::make_unique<cudadiag_options>());
    return succeed();
  });
}

void cudadiag_options_free(cudadiag_options* options) {
  guarded("cudadiag_options_free", [&] {
    if (options == nullptr) {
      return succeed();
    }
    if (!options_registry().remove(options)) {
      return invalid_handle("cudadiag_options_free", "options", options);
    }
    return succeed();
  });
}

cudadiag_status cudadiag_options_from_json(cudadiag_options* options, const char* json) {
  constexpr const char* k_function = "cudadiag_options_from_json";
  return guarded(k_function, [&] {
    if (!options_registry().contains(options)) {
      return invalid_handle(k_function, "options", options);
    }
    if (json == nullptr) {
      return fail(CUDADIAG_ERROR_INVALID_ARGUMENT, std::string(k_function) + ": json is NULL");
    }
    const std::lock_guard lock(options->mutex);
    auto next = apply_json(options->settings, json);
    if (!next) {
      return fail(CUDADIAG_ERROR_INVALID_OPTIONS, std::string(k_function) + ": " + next.error().message);
    }
    options->settings = std::move(*next);
    return succeed();
  });
}

cudadiag_status cudadiag_options_to_json(const cudadiag_options* options, char* buffer, size_t size,
                                         size_t* needed) {
  constexpr const char* k_function = "cudadiag_options_to_json";
  return guarded(k_function, [&] {
    if (!options_registry().contains(options)) {
      return invalid_handle(k_function, "options", options);
    }
    return copy_out(k_function, to_json(settings_of(options)).dump(), buffer, size, needed);
  });
}

cudadiag_status cudadiag_report_new(const cudadiag_options* options, cudadiag_report** out) {
  return produce("cudadiag_report_new", options, out, [](const Settings& settings) {
    if (settings.self_test) {
      return cudadiag::self_test(settings.options);
    }
    return settings.verify ? cudadiag::verify(settings.options) : cudadiag::discover(settings.options);
  });
}

cudadiag_status cudadiag_quick_check(const cudadiag_options* options, cudadiag_report** out) {
  return produce("cudadiag_quick_check", options, out,
                 [](const Settings& settings) { return cudadiag::quick_check(settings.options); });
}

cudadiag_status cudadiag_require(const cudadiag_options* options, const char* const* requirements,
                                 size_t count, cudadiag_report** out) {
  constexpr const char* k_function = "cudadiag_require";
  return guarded(k_function, [&]() -> cudadiag_status {
    if (out == nullptr) {
      return null_output(k_function);
    }
    *out = nullptr;
    if (requirements == nullptr && count > 0) {
      return fail(CUDADIAG_ERROR_INVALID_ARGUMENT,
                  std::string(k_function) + ": requirements is NULL but count is " + std::to_string(count));
    }
    std::vector<std::string> specs;
    specs.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      if (requirements[i] == nullptr) {
        return fail(CUDADIAG_ERROR_INVALID_ARGUMENT,
                    std::string(k_function) + ": requirement " + std::to_string(i) + " is NULL");
      }
      specs.emplace_back(requirements[i]);
    }
    return produce(k_function, options, out, [&](const Settings& settings) {
      return run_require(settings.options, specs, settings.verify, settings.self_test);
    });
  });
}

cudadiag_status cudadiag_inspect_process(int pid, cudadiag_report** out) {
  constexpr const char* k_function = "cudadiag_inspect_process";
  return guarded(k_function, [&] {
    if (out == nullptr) {
      return null_output(k_function);
    }
    *out = nullptr;
    if (pid < 0) {
      return fail(CUDADIAG_ERROR_INVALID_ARGUMENT,
                  std::string(k_function) + ": invalid PID " + std::to_string(pid) + " (0 is this process)");
    }
    try {
      return publish(cudadiag::inspect_process(pid), out);
    } catch (const cudadiag::Exception& error) {
      return fail(CUDADIAG_ERROR_INSPECT_FAILED, std::string(k_function) + ": " + error.what());
    }
  });
}

void cudadiag_report_free(cudadiag_report* report) {
  guarded("cudadiag_report_free", [&] {
    if (report == nullptr) {
      return succeed();
    }
    if (!report_registry().remove(report)) {
      return invalid_handle("cudadiag_report_free", "report", report);
    }
    return succeed();
  });
}

cudadiag_status cudadiag_report_json(const cudadiag_report* report, char* buffer, size_t size,
                                     size_t* needed) {
  constexpr const char* k_function = "cudadiag_report_json";
  return guarded(k_function, [&] {
    if (!report_registry().contains(report)) {
      return invalid_handle(k_function, "report", report);
    }
    return copy_out(k_function, report->json_text(), buffer, size, needed);
  });
}

const char* cudadiag_report_json_str(const cudadiag_report* report) {
  const char* text = nullptr;
  guarded("cudadiag_report_json_str", [&] {
    if (!report_registry().contains(report)) {
      return invalid_handle("cudadiag_report_json_str", "report", report);
    }
    text = report->json_text().c_str();
    return succeed();
  });
  return text;
}

cudadiag_status cudadiag_report_verdict(const cudadiag_report* report, cudadiag_verdict* out) {
  return guarded("cudadiag_report_verdict", [&] {
    if (!report_registry().contains(report)) {
      return invalid_handle("cudadiag_report_verdict", "report", report);
    }
    if (out == nullptr) {
      return null_output("cudadiag_report_verdict");
    }
    *out = report->verdict;
    return succeed();
  });
}

cudadiag_status cudadiag_report_exit_code(const cudadiag_report* report, int* out) {
  return guarded("cudadiag_report_exit_code", [&] {
    if (!report_registry().contains(report)) {
      return invalid_handle("cudadiag_report_exit_code", "report", report);
    }
    if (out == nullptr) {
      return null_output("cudadiag_report_exit_code");
    }
    *out = report->exit_code;
    return succeed();
  });
}

cudadiag_status cudadiag_report_finding_count(const cudadiag_report* report, size_t* out) {
  return guarded("cudadiag_report_finding_count", [&] {
    if (!report_registry().contains(report)) {
      return invalid_handle("cudadiag_report_finding_count", "report", report);
    }
    if (out == nullptr) {
      return null_output("cudadiag_report_finding_count");
    }
    *out = report->findings.size();
    return succeed();
  });
}

cudadiag_status cudadiag_report_finding_id(const cudadiag_report* report, size_t index, const char** out) {
  return read_finding("cudadiag_report_finding_id", report, index, out == nullptr,
                      [&](const cudadiag::Finding& finding) { *out = finding.id.c_str(); });
}

cudadiag_status cudadiag_report_finding_severity(const cudadiag_report* report, size_t index,
                                                 cudadiag_severity* out) {
  return read_finding("cudadiag_report_finding_severity", report, index, out == nullptr,
                      [&](const cudadiag::Finding& finding) { *out = to_c(finding.severity); });
}

cudadiag_status cudadiag_report_finding_message(const cudadiag_report* report, size_t index,
                                                const char** out) {
  return read_finding("cudadiag_report_finding_message", report, index, out == nullptr,
                      [&](const cudadiag::Finding& finding) { *out = finding.message.c_str(); });
}

cudadiag_status cudadiag_report_finding_remedy(const cudadiag_report* report, size_t index,
                                               const char** out) {
  return read_finding("cudadiag_report_finding_remedy", report, index, out == nullptr,
                      [&](const cudadiag::Finding& finding) { *out = finding.remedy.c_str(); });
}

cudadiag_status cudadiag_report_finding_repair(const cudadiag_report* report, size_t index,
                                               cudadiag_repair* out) {
  return read_finding("cudadiag_report_finding_repair", report, index, out == nullptr,
                      [&](const cudadiag::Finding& finding) { *out = to_c(finding.repair); });
}

} // extern "C"
