#pragma once
// Readers over the report's JSON document — the interchange form that `--json` prints, a bundle
// holds and `diff`, policy gates and the Markdown, HTML and JUnit renderers read. Working from the
// document (not the C++ Report) lets them handle reports from other machines and other runs.
// Every reader tolerates missing, null or mistyped fields (a --no-load run has no verification,
// an older report no self-test) and answers "unknown" then.

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::report {

// The component named `name`: of `kind` ("dynamic_lib", "headers", "binary") when given, else the
// first of any kind (libraries come first in a report). nullptr when absent.
const nlohmann::json* find_component(const nlohmann::json& report, std::string_view name,
                                     std::optional<std::string_view> kind = std::nullopt);

// The answer a program gets for a component: "selected" (what CUDA Python loads), else "loader"
// (what a native dlopen resolves). nullptr when it was not found.
const nlohmann::json* chosen_answer(const nlohmann::json& component);
// The component's "python_failed" answer when its "selected" is null (CUDA Python's load failed
// before it raised "not found"): CUDA Python then has no answer, whatever chosen_answer() returns.
const nlohmann::json* python_failed(const nlohmann::json& component);

// The verification step for a component name ("cuda", "nvml", "nvrtc", ...); nullptr if it did not run.
const nlohmann::json* verification_step(const nlohmann::json& report, std::string_view component);

struct DriverVersion {
  std::string version; // "580.159.04"
  std::string source;  // "NVML" or "libcuda file name"
};
// The NVIDIA driver version: NVML's answer, else the version in the file name of the libcuda the
// loader resolves (libcuda.so.580.159.04). nullopt when neither is known.
std::optional<DriverVersion> driver_version(const nlohmann::json& report);

// cuDriverGetVersion as "13.0" (from 13000); nullopt when verification did not get it.
std::optional<std::string> cuda_driver_version(const nlohmann::json& report);

// cuInit's result by name ("CUDA_SUCCESS", "CUDA_ERROR_NO_DEVICE"); nullopt when cuInit did not run.
std::optional<std::string> cuinit_result(const nlohmann::json& report);

// The self-test's tests, or an empty array when the report has no self-test.
const nlohmann::json& selftest_tests(const nlohmann::json& report);

// `object[key]` as text for display: strings as they are, numbers and booleans printed, anything
// else (missing, null) as `fallback`.
std::string display(const nlohmann::json& object, std::string_view key, std::string_view fallback = "");

// A number as people read it: integral values without a fraction ("132"), values of 1000 or more
// with one decimal ("4814.3"), others with 4 significant digits ("42.43", "0.9543").
std::string format_number(double value);

// One metric {"name","value","unit"} as "42.4 Gkeys/s".
std::string format_metric(const nlohmann::json& metric);

} // namespace cudadiag::report
