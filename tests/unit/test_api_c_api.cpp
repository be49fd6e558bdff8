// The C API (include/cudadiag/cudadiag.h) through libcudadiag.so itself: this executable links only
// the shared library, so what is tested is the exported surface. Bad input: NULL everywhere,
// zero-length and short buffers, handles after free, malformed options; 8 threads at once.

#include "cudadiag/cudadiag.h"
#include "temp_tree.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <dlfcn.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using cudadiag::testing::TempTree;

struct OptionsDeleter {
  void operator()(cudadiag_options* options) const { cudadiag_options_free(options); }
};
struct ReportDeleter {
  void operator()(cudadiag_report* report) const { cudadiag_report_free(report); }
};
using OptionsPtr = std::unique_ptr<cudadiag_options, OptionsDeleter>;
using ReportPtr = std::unique_ptr<cudadiag_report, ReportDeleter>;

OptionsPtr make_options(const std::string& json = "{}") {
  cudadiag_options* raw = nullptr;
  REQUIRE(cudadiag_options_new(&raw) == CUDADIAG_OK);
  OptionsPtr options(raw);
  REQUIRE_MESSAGE(cudadiag_options_from_json(options.get(), json.c_str()) == CUDADIAG_OK,
                  cudadiag_last_error());
  return options;
}

std::string options_json(const cudadiag_options* options) {
  size_t needed = 0;
  REQUIRE(cudadiag_options_to_json(options, nullptr, 0, &needed) == CUDADIAG_OK);
  std::string text(needed, '\0');
  REQUIRE(cudadiag_options_to_json(options, text.data(), text.size(), &needed) == CUDADIAG_OK);
  text.resize(needed - 1);
  return text;
}

nlohmann::json report_json(const cudadiag_report* report) {
  const char* text = cudadiag_report_json_str(report);
  REQUIRE(text != nullptr);
  return nlohmann::json::parse(text);
}

std::vector<std::string> finding_ids(const cudadiag_report* report) {
  size_t count = 0;
  REQUIRE(cudadiag_report_finding_count(report, &count) == CUDADIAG_OK);
  std::vector<std::string> ids;
  for (size_t i = 0; i < count; ++i) {
    const char* id = nullptr;
    REQUIRE(cudadiag_report_finding_id(report, i, &id) == CUDADIAG_OK);
    ids.emplace_back(id);
  }
  return ids;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

bool has(const std::vector<std::string>& ids, const std::string& id) {
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

// A failing call left a message; the next successful call clears it.
void check_failed_with(cudadiag_status status, cudadiag_status expected, const std::string& part = "") {
  CHECK(status == expected);
  const std::string message = cudadiag_last_error();
  CHECK_FALSE(message.empty());
  if (!part.empty()) {
    CHECK_MESSAGE(contains(message, part), message);
  }
}

// The toolkit's stub libcuda first on LD_LIBRARY_PATH: what quick_check must call an error. The file
// is the tiny two_copies library renamed: discovery judges a stub by its directory, not its code.
struct StubOnSearchPath {
  TempTree tree;
  std::string dir = tree.mkdir("cuda/lib64/stubs");
  std::string stub = tree.copy_file(CUDADIAG_TWO_COPIES_LIB, "cuda/lib64/stubs/libcuda.so.1");
  std::string options = R"({"components": ["cuda"], "environment": {"LD_LIBRARY_PATH": ")" + dir + R"("}})";
};

} // namespace

TEST_CASE("c api: the loaded library's version matches the headers") {
  CHECK(cudadiag_version() == CUDADIAG_VERSION_NUMBER);
  CHECK(std::string(cudadiag_version_string()) == CUDADIAG_VERSION_STRING);
}

TEST_CASE("c api: NULL handles and NULL outputs are rejected with a message, never a crash") {
  char buffer[16];
  size_t size = 0;
  int number = 0;
  const char* text = nullptr;
  cudadiag_verdict verdict{};
  cudadiag_severity severity{};
  cudadiag_repair repair{};
  cudadiag_report* report = nullptr;

  check_failed_with(cudadiag_options_new(nullptr), CUDADIAG_ERROR_INVALID_ARGUMENT, "output pointer is NULL");
  check_failed_with(cudadiag_options_from_json(nullptr, "{}"), CUDADIAG_ERROR_INVALID_HANDLE,
                    "options is NULL");
  check_failed_with(cudadiag_options_to_json(nullptr, buffer, sizeof buffer, &size),
                    CUDADIAG_ERROR_INVALID_HANDLE);
  check_failed_with(cudadiag_report_json(nullptr, buffer, sizeof buffer, &size),
                    CUDADIAG_ERROR_INVALID_HANDLE, "report is NULL");
  CHECK(cudadiag_report_json_str(nullptr) == nullptr);
  CHECK_FALSE(std::string(cudadiag_last_error()).empty());
  check_failed_with(cudadiag_report_verdict(nullptr, &verdict), CUDADIAG_ERROR_INVALID_HANDLE);
  check_failed_with(cudadiag_report_exit_code(nullptr, &number), CUDADIAG_ERROR_INVALID_HANDLE);
  check_failed_with(cudadiag_report_finding_count(nullptr, &size), CUDADIAG_ERROR_INVALID_HANDLE);
  check_failed_with(cudadiag_report_finding_id(nullptr, 0, &text), CUDADIAG_ERROR_INVALID_HANDLE);
  check_failed_with(cudadiag_report_finding_severity(nullptr, 0, &severity), CUDADIAG_ERROR_INVALID_HANDLE);
  check_failed_with(cudadiag_report_finding_message(nullptr, 0, &text), CUDADIAG_ERROR_INVALID_HANDLE);
  check_failed_with(cudadiag_report_finding_remedy(nullptr, 0, &text), CUDADIAG_ERROR_INVALID_HANDLE);
  check_failed_with(cudadiag_report_finding_repair(nullptr, 0, &repair), CUDADIAG_ERROR_INVALID_HANDLE,
                    "report is NULL");
  check_failed_with(cudadiag_report_new(nullptr, nullptr), CUDADIAG_ERROR_INVALID_ARGUMENT);
  check_failed_with(cudadiag_quick_check(nullptr, nullptr), CUDADIAG_ERROR_INVALID_ARGUMENT);
  check_failed_with(cudadiag_inspect_process(0, nullptr), CUDADIAG_ERROR_INVALID_ARGUMENT);

  // Freeing NULL is a no-op and a success.
  cudadiag_options_free(nullptr);
  CHECK(std::string(cudadiag_last_error()).empty());
  cudadiag_report_free(nullptr);
  CHECK(std::string(cudadiag_last_error()).empty());

  // A NULL options pointer means the defaults.
  REQUIRE(cudadiag_quick_check(nullptr, &report) == CUDADIAG_OK);
  CHECK(std::string(cudadiag_last_error()).empty());
  const ReportPtr owned(report);

  auto options = make_options();
  check_failed_with(cudadiag_options_from_json(options.get(), nullptr), CUDADIAG_ERROR_INVALID_ARGUMENT,
                    "json is NULL");
  check_failed_with(cudadiag_report_verdict(report, nullptr), CUDADIAG_ERROR_INVALID_ARGUMENT);
  check_failed_with(cudadiag_report_exit_code(report, nullptr), CUDADIAG_ERROR_INVALID_ARGUMENT);
  check_failed_with(cudadiag_report_finding_count(report, nullptr), CUDADIAG_ERROR_INVALID_ARGUMENT);
  check_failed_with(cudadiag_report_finding_id(report, 0, nullptr), CUDADIAG_ERROR_INVALID_ARGUMENT);
  check_failed_with(cudadiag_report_finding_severity(report, 0, nullptr), CUDADIAG_ERROR_INVALID_ARGUMENT);
  check_failed_with(cudadiag_report_finding_message(report, 0, nullptr), CUDADIAG_ERROR_INVALID_ARGUMENT);
  check_failed_with(cudadiag_report_finding_remedy(report, 0, nullptr), CUDADIAG_ERROR_INVALID_ARGUMENT);
  check_failed_with(cudadiag_report_finding_repair(report, 0, nullptr), CUDADIAG_ERROR_INVALID_ARGUMENT);
  check_failed_with(cudadiag_report_finding_id(report, 100000, &text), CUDADIAG_ERROR_INVALID_ARGUMENT,
                    "out of range");
  repair = CUDADIAG_REPAIR_REBOOT;
  check_failed_with(cudadiag_report_finding_repair(report, 100000, &repair), CUDADIAG_ERROR_INVALID_ARGUMENT,
                    "out of range");
  CHECK(repair == CUDADIAG_REPAIR_REBOOT); // left as it was
}

TEST_CASE("c api: JSON buffers - size query, zero length, too small by one, exact") {
  cudadiag_report* raw = nullptr;
  REQUIRE(cudadiag_quick_check(nullptr, &raw) == CUDADIAG_OK);
  const ReportPtr report(raw);
  const std::string expected = cudadiag_report_json_str(report.get());

  size_t needed = 0;
  REQUIRE(cudadiag_report_json(report.get(), nullptr, 0, &needed) == CUDADIAG_OK); // a size query
  CHECK(needed == expected.size() + 1);
  check_failed_with(cudadiag_report_json(report.get(), nullptr, 0, nullptr), CUDADIAG_ERROR_INVALID_ARGUMENT,
                    "needs `needed`");
  check_failed_with(cudadiag_report_json(report.get(), nullptr, 10, &needed),
                    CUDADIAG_ERROR_INVALID_ARGUMENT);

  std::vector<char> buffer(needed, 'x');
  needed = 0;
  check_failed_with(cudadiag_report_json(report.get(), buffer.data(), 0, &needed),
                    CUDADIAG_ERROR_BUFFER_TOO_SMALL);
  CHECK(buffer[0] == 'x'); // size 0: nothing written
  CHECK(needed == expected.size() + 1);
  check_failed_with(cudadiag_report_json(report.get(), buffer.data(), buffer.size() - 1, &needed),
                    CUDADIAG_ERROR_BUFFER_TOO_SMALL, "are needed");
  CHECK(buffer[0] == '\0');
  check_failed_with(cudadiag_report_json(report.get(), buffer.data(), buffer.size() - 1, nullptr),
                    CUDADIAG_ERROR_BUFFER_TOO_SMALL);
  REQUIRE(cudadiag_report_json(report.get(), buffer.data(), buffer.size(), &needed) == CUDADIAG_OK);
  CHECK(std::string(cudadiag_last_error()).empty());
  CHECK(std::string(buffer.data()) == expected);
}

TEST_CASE("c api: a handle used after free is rejected and a double free is ignored with a message") {
  cudadiag_report* report = nullptr;
  REQUIRE(cudadiag_quick_check(nullptr, &report) == CUDADIAG_OK);
  cudadiag_report_free(report);
  cudadiag_verdict verdict{};
  size_t size = 0;
  check_failed_with(cudadiag_report_verdict(report, &verdict), CUDADIAG_ERROR_INVALID_HANDLE,
                    "not a live handle");
  check_failed_with(cudadiag_report_json(report, nullptr, 0, &size), CUDADIAG_ERROR_INVALID_HANDLE);
  CHECK(cudadiag_report_json_str(report) == nullptr);
  cudadiag_report_free(report);
  CHECK(contains(cudadiag_last_error(), "not a live handle"));

  cudadiag_options* options = nullptr;
  REQUIRE(cudadiag_options_new(&options) == CUDADIAG_OK);
  cudadiag_options_free(options);
  check_failed_with(cudadiag_options_from_json(options, "{}"), CUDADIAG_ERROR_INVALID_HANDLE,
                    "not a live handle");
  check_failed_with(cudadiag_quick_check(options, &report), CUDADIAG_ERROR_INVALID_HANDLE);
  CHECK(report == nullptr);
  cudadiag_options_free(options);
  CHECK(contains(cudadiag_last_error(), "not a live handle"));

  // A handle of one type passed as the other is not a live handle of that type either.
  auto live_options = make_options();
  check_failed_with(cudadiag_report_verdict(reinterpret_cast<cudadiag_report*>(live_options.get()), &verdict),
                    CUDADIAG_ERROR_INVALID_HANDLE);
}

TEST_CASE("c api: malformed options, unknown keys and bad values are rejected and change nothing") {
  auto options =
      make_options(R"({"components": ["nvrtc"], "fail_on": "warning", "environment": {"CUDA_HOME": null}})");
  const auto before = options_json(options.get());
  struct Bad {
    const char* json;
    const char* message; // part of the error message
  };
  const Bad bad[] = {
      {"", "not valid JSON"},
      {"{", "not valid JSON"},
      {"{\"components\": [\"nvrtc\"],}", "not valid JSON"},
      {"[]", "must be a JSON object"},
      {"null", "must be a JSON object"},
      {"{\"colour\": true}", "unknown option \"colour\""},
      {"{\"components\": [\"nvrtc\"], \"fail_on\": \"error\", \"verbose\": 1}", "unknown option \"verbose\""},
      {"{\"components\": \"nvrtc\"}", "option \"components\": expected an array of strings"},
      {"{\"components\": [\"nvrtc\", 3]}", "expected an array of strings"},
      {"{\"components\": [\"nvrtcc\"]}", "unknown component \"nvrtcc\""},
      {"{\"fail_on\": \"info\"}", "option \"fail_on\": expected \"error\" or \"warning\""},
      {"{\"verify\": 1}", "option \"verify\": expected true or false"},
      {"{\"timeout_seconds\": 0}", "timeout_seconds"},
      {"{\"timeout_seconds\": \"15\"}", "expected a number"},
      {"{\"device\": -1}", "option \"device\""},
      {"{\"device\": 1.5}", "expected an integer or null"},
      {"{\"self_test_level\": \"medium\"}", "expected \"quick\" or \"full\""},
      {"{\"self_tests\": [\"warp_drive\"]}", "unknown self-test \"warp_drive\""},
      {"{\"environment\": {\"CUDA_PATH\": 1}}", "\"CUDA_PATH\": expected a string or null"},
      {"{\"environment\": {\"A=B\": \"x\"}}", "is not a variable name"},
      {"{\"environment\": []}", "expected an object"},
      // Out-of-range numbers and deep nesting are invalid options, not exceptions.
      {"{\"timeout_seconds\": 1e400}", "options JSON holds a number out of range"},
      {"{\"device\": -1e400}", "number out of range"},
      {"{\"components\": [[[[[[[[[[[[[[[[[[[[\"nvrtc\"]]]]]]]]]]]]]]]]]]]]}", "nested deeper than 16 levels"},
      {"{\"python\": \"\xff\"}", "not valid JSON"},
  };
  for (const auto& entry : bad) {
    CAPTURE(entry.json);
    check_failed_with(cudadiag_options_from_json(options.get(), entry.json), CUDADIAG_ERROR_INVALID_OPTIONS,
                      entry.message);
    CHECK(options_json(options.get()) == before);
  }
}

TEST_CASE("c api: options JSON merges key by key and round-trips through to_json") {
  auto options = make_options(R"({"components": ["nvrtc", "cuda"]})");
  REQUIRE(cudadiag_options_from_json(options.get(), R"({"fail_on": "warning", "device": 0})") == CUDADIAG_OK);
  const auto settings = nlohmann::json::parse(options_json(options.get()));
  CHECK(settings["components"] == nlohmann::json({"nvrtc", "cuda"}));
  CHECK(settings["fail_on"] == "warning");
  CHECK(settings["device"] == 0);
  CHECK(settings["verify"] == false);
  CHECK(settings["timeout_seconds"] == 15.0);

  auto copy = make_options(settings.dump());
  CHECK(options_json(copy.get()) == options_json(options.get()));

  // Where cudadiag runs, and --exclusive: null (from the environment) and false by default.
  CHECK(settings["context"].is_null());
  CHECK(settings["exclusive"] == false);
  REQUIRE(cudadiag_options_from_json(options.get(), R"({"context": "fleet", "exclusive": true})") ==
          CUDADIAG_OK);
  const auto fleet = nlohmann::json::parse(options_json(options.get()));
  CHECK(fleet["context"] == "fleet");
  CHECK(fleet["exclusive"] == true);
  check_failed_with(cudadiag_options_from_json(options.get(), R"({"context": "batch"})"),
                    CUDADIAG_ERROR_INVALID_OPTIONS, "\"interactive\" or \"ci\" or \"fleet\"");
  CHECK(nlohmann::json::parse(options_json(options.get()))["context"] == "fleet");
}

TEST_CASE("c api: quick_check calls the stub libcuda first on LD_LIBRARY_PATH an error and loads nothing") {
  const StubOnSearchPath world;
  auto options = make_options(world.options);
  cudadiag_report* raw = nullptr;
  REQUIRE(cudadiag_quick_check(options.get(), &raw) == CUDADIAG_OK);
  const ReportPtr report(raw);

  cudadiag_verdict verdict{};
  int exit_code = -1;
  REQUIRE(cudadiag_report_verdict(report.get(), &verdict) == CUDADIAG_OK);
  REQUIRE(cudadiag_report_exit_code(report.get(), &exit_code) == CUDADIAG_OK);
  CHECK(verdict == CUDADIAG_VERDICT_ERROR);
  CHECK(exit_code == 1);
  const auto ids = finding_ids(report.get());
  REQUIRE(has(ids, "driver.stub"));
  const auto index = static_cast<size_t>(std::find(ids.begin(), ids.end(), "driver.stub") - ids.begin());
  const char* message = nullptr;
  const char* remedy = nullptr;
  cudadiag_severity severity{};
  REQUIRE(cudadiag_report_finding_message(report.get(), index, &message) == CUDADIAG_OK);
  REQUIRE(cudadiag_report_finding_remedy(report.get(), index, &remedy) == CUDADIAG_OK);
  REQUIRE(cudadiag_report_finding_severity(report.get(), index, &severity) == CUDADIAG_OK);
  CHECK(contains(message, world.stub));
  CHECK_FALSE(std::string(remedy).empty());
  CHECK(severity == CUDADIAG_SEVERITY_ERROR);
  // Reached through LD_LIBRARY_PATH: changing the variable clears it.
  cudadiag_repair repair{};
  REQUIRE(cudadiag_report_finding_repair(report.get(), index, &repair) == CUDADIAG_OK);
  CHECK(repair == CUDADIAG_REPAIR_FIX_ENVIRONMENT);

  // Only warnings and errors are reported; the JSON says the same as the accessors.
  const auto json = report_json(report.get());
  CHECK(json["schema_version"] == 1);
  CHECK(json["summary"]["status"] == "error");
  CHECK(json["verification"]["ran"] == false);
  REQUIRE(json["findings"].size() == ids.size());
  // The JSON's "repair" names, in cudadiag_repair's order.
  const std::vector<std::string> repair_names = {
      "none",      "fix_environment", "reinstall_package",  "restart_process",
      "reset_gpu", "reboot",          "hardware_inspection"};
  for (size_t i = 0; i < ids.size(); ++i) {
    CHECK(json["findings"][i]["id"] == ids[i]);
    CHECK(json["findings"][i]["severity"] != "info");
    REQUIRE(cudadiag_report_finding_repair(report.get(), i, &repair) == CUDADIAG_OK);
    REQUIRE(static_cast<size_t>(repair) < repair_names.size());
    CHECK(json["findings"][i]["repair"] == repair_names[static_cast<size_t>(repair)]);
  }

  // Nothing was loaded: the stub is not mapped in this process.
  cudadiag_report* self = nullptr;
  REQUIRE(cudadiag_inspect_process(0, &self) == CUDADIAG_OK);
  const ReportPtr inspection(self);
  const auto mapped = report_json(inspection.get());
  REQUIRE(mapped["components"].is_array());
  for (const auto& component : mapped["components"]) {
    CHECK(component["path"] != world.stub);
  }
}

TEST_CASE("c api: quick_check reports two copies of one library mapped in this process") {
  TempTree tree;
  const auto a = tree.copy_file(CUDADIAG_TWO_COPIES_LIB, "wheel/nvidia/cu13/lib/libnvJitLink.so.13.0.88");
  const auto b = tree.copy_file(CUDADIAG_TWO_COPIES_LIB, "toolkit/lib64/libnvJitLink.so.13.1.80");
  void* first = ::dlopen(a.c_str(), RTLD_NOW | RTLD_LOCAL);
  void* second = ::dlopen(b.c_str(), RTLD_NOW | RTLD_LOCAL);
  REQUIRE(first != nullptr);
  REQUIRE(second != nullptr);

  cudadiag_report* raw = nullptr;
  REQUIRE(cudadiag_quick_check(nullptr, &raw) == CUDADIAG_OK);
  const ReportPtr report(raw);
  const auto ids = finding_ids(report.get());
  CHECK(has(ids, "process.duplicate_lib"));
  CHECK(ids.front() == "process.duplicate_lib"); // facts about the process come first
  cudadiag_verdict verdict{};
  REQUIRE(cudadiag_report_verdict(report.get(), &verdict) == CUDADIAG_OK);
  CHECK(verdict == CUDADIAG_VERDICT_ERROR);
  ::dlclose(second);
  ::dlclose(first);
}

TEST_CASE("c api: report_new is discovery only by default and its JSON agrees with the accessors") {
  auto options = make_options(R"({"components": ["nvrtc", "cccl"]})");
  cudadiag_report* raw = nullptr;
  REQUIRE(cudadiag_report_new(options.get(), &raw) == CUDADIAG_OK);
  const ReportPtr report(raw);
  const auto json = report_json(report.get());
  CHECK(json["schema_version"] == 1);
  CHECK(json["tool"]["version"] == CUDADIAG_VERSION_STRING);
  CHECK(json["verification"]["ran"] == false);
  REQUIRE(json["components"].size() >= 2);
  for (const auto& component : json["components"]) {
    CHECK((component["name"] == "nvrtc" || component["name"] == "cccl"));
  }
  int exit_code = -1;
  REQUIRE(cudadiag_report_exit_code(report.get(), &exit_code) == CUDADIAG_OK);
  CHECK(json["summary"]["exit_code"] == exit_code);
  const auto ids = finding_ids(report.get());
  REQUIRE(json["findings"].size() == ids.size());
  for (size_t i = 0; i < ids.size(); ++i) {
    CHECK(json["findings"][i]["id"] == ids[i]);
  }
}

TEST_CASE("c api: each finding's repair class - an Xid's by its code, through the accessor and the JSON") {
  // A saved kernel log of lines public reports posted (tests/fixtures/kernel-log/).
  auto options =
      make_options(R"({"components": ["nvrtc"], "environment": {"CUDADIAG_KMSG": ")" CUDADIAG_SOURCE_DIR
                   R"(/tests/fixtures/kernel-log/public-reports.log"}})");
  cudadiag_report* raw = nullptr;
  REQUIRE(cudadiag_report_new(options.get(), &raw) == CUDADIAG_OK);
  const ReportPtr report(raw);
  const auto json = report_json(report.get());
  const auto ids = finding_ids(report.get());
  REQUIRE(json["findings"].size() == ids.size());
  std::map<int, cudadiag_repair> by_code;
  for (size_t i = 0; i < ids.size(); ++i) {
    cudadiag_repair repair{};
    REQUIRE(cudadiag_report_finding_repair(report.get(), i, &repair) == CUDADIAG_OK);
    if (ids[i] == "gpu.xid" || ids[i] == "nvswitch.sxid") {
      by_code[json["findings"][i]["evidence"]["code"].get<int>()] = repair;
    }
  }
  CHECK(by_code.at(45) == CUDADIAG_REPAIR_NONE);
  CHECK(by_code.at(13) == CUDADIAG_REPAIR_RESTART_PROCESS);
  CHECK(by_code.at(48) == CUDADIAG_REPAIR_RESET_GPU);
  CHECK(by_code.at(79) == CUDADIAG_REPAIR_REBOOT);
  CHECK(by_code.at(64) == CUDADIAG_REPAIR_HARDWARE_INSPECTION);
  CHECK(by_code.at(12028) == CUDADIAG_REPAIR_RESET_GPU);
}

TEST_CASE("c api: verify loads the driver in the worker the options name") {
  const auto driver_dir =
      std::string(CUDADIAG_FAKE_DRIVER).substr(0, std::string(CUDADIAG_FAKE_DRIVER).rfind('/'));
  auto options = make_options(
      R"({"components": ["cuda"], "verify": true, "executable": ")" + std::string(CUDADIAG_TEST_EXECUTABLE) +
      R"(", "environment": {"LD_LIBRARY_PATH": ")" + driver_dir + R"(", "CUDADIAG_FAKE_CUDA": "ok"}})");
  cudadiag_report* raw = nullptr;
  REQUIRE(cudadiag_report_new(options.get(), &raw) == CUDADIAG_OK);
  const ReportPtr report(raw);
  const auto json = report_json(report.get());
  CHECK(json["verification"]["ran"] == true);
  REQUIRE(json["devices"].size() == 1);
  CHECK(json["devices"][0]["sm_count"] == 132);
}

TEST_CASE("c api: the load-check cache is read by default and written only when the options ask") {
  const TempTree tree;
  const auto driver_dir =
      std::string(CUDADIAG_FAKE_DRIVER).substr(0, std::string(CUDADIAG_FAKE_DRIVER).rfind('/'));
  const auto cache_file = tree.path("xdg/cudadiag/load-check.json");
  const auto options_for = [&](std::string_view cache) {
    std::string json = R"({"components": ["cuda"], "verify": true, "executable": ")" +
                       std::string(CUDADIAG_TEST_EXECUTABLE) + R"(", "environment": {"LD_LIBRARY_PATH": ")" +
                       driver_dir + R"(", "CUDADIAG_FAKE_CUDA": "ok", "XDG_CACHE_HOME": ")" +
                       tree.path("xdg") + R"("})";
    if (!cache.empty()) {
      json += R"(, "cache": ")" + std::string(cache) + '"';
    }
    return make_options(json + "}");
  };
  const auto cache_use = [&](std::string_view cache) {
    auto options = options_for(cache);
    cudadiag_report* raw = nullptr;
    REQUIRE(cudadiag_report_new(options.get(), &raw) == CUDADIAG_OK);
    const ReportPtr report(raw);
    return report_json(report.get())["linkage"]["load_check"]["cache"];
  };

  CHECK(nlohmann::json::parse(options_json(options_for("").get()))["cache"] == "read");
  CHECK(nlohmann::json::parse(options_json(options_for("").get()))["load_check"] == true);
  const auto read_only = cache_use("");
  CHECK(read_only["mode"] == "read");
  CHECK(read_only["stored"] == 0);
  CHECK_FALSE(std::filesystem::exists(cache_file));

  const auto written = cache_use("read_write");
  CHECK(written["mode"] == "read_write");
  CHECK(written["stored"].get<int>() > 0);
  CHECK(std::filesystem::exists(cache_file));

  const auto answered = cache_use("read");
  CHECK(answered["hits"] == written["stored"]);
  CHECK(answered["stored"] == 0);
  CHECK(cache_use("off")["mode"] == "off");

  auto options = options_for("");
  check_failed_with(cudadiag_options_from_json(options.get(), R"({"cache": "sometimes"})"),
                    CUDADIAG_ERROR_INVALID_OPTIONS, "cache");
  check_failed_with(cudadiag_options_from_json(options.get(), R"({"load_check": 1})"),
                    CUDADIAG_ERROR_INVALID_OPTIONS, "load_check");
}

TEST_CASE("c api: require - met and unmet requirements are policy.unmet findings, bad specs are errors") {
  const TempTree tree;
  const auto dir = tree.mkdir("lib");
  tree.copy_file(CUDADIAG_TWO_COPIES_LIB, "lib/libnvJitLink.so.13.0.88");
  tree.symlink("lib/libnvJitLink.so.13", "libnvJitLink.so.13.0.88");
  auto options =
      make_options(R"({"components": ["nvJitLink"], "environment": {"LD_LIBRARY_PATH": ")" + dir + R"("}})");
  const auto require = [&](std::vector<const char*> specs) {
    cudadiag_report* raw = nullptr;
    REQUIRE_MESSAGE(cudadiag_require(options.get(), specs.data(), specs.size(), &raw) == CUDADIAG_OK,
                    cudadiag_last_error());
    return ReportPtr(raw);
  };
  // The requirements of the report's policy.unmet findings, one per line.
  const auto unmet = [](const cudadiag_report* report) {
    std::string specs;
    const auto document = report_json(report);
    for (const auto& finding : document["findings"]) {
      if (finding["id"] == "policy.unmet") {
        specs += finding["evidence"]["requirement"].get<std::string>() + "\n";
        CHECK(finding["severity"] == "error");
        CHECK(finding["components"] == nlohmann::json::array({"nvJitLink"}));
      }
    }
    return specs;
  };

  // (unmet() checks each finding itself: its result is taken before it is compared.)
  const auto met = require({"nvJitLink>=13", "nvJitLink==13.0"});
  const auto met_unmet = unmet(met.get());
  CHECK(met_unmet.empty());
  const auto json = report_json(met.get());
  REQUIRE(json["policy"]["requirements"].size() == 2);
  CHECK(json["policy"]["requirements"][0]["met"] == true);

  const auto missed = require({"nvJitLink>=13", "nvJitLink>=14"});
  const auto missed_unmet = unmet(missed.get());
  CHECK(missed_unmet == "nvJitLink>=14\n");
  cudadiag_verdict verdict{};
  int exit_code = 0;
  REQUIRE(cudadiag_report_verdict(missed.get(), &verdict) == CUDADIAG_OK);
  REQUIRE(cudadiag_report_exit_code(missed.get(), &exit_code) == CUDADIAG_OK);
  CHECK(verdict == CUDADIAG_VERDICT_ERROR);
  CHECK(exit_code == 1);
  const auto ids = finding_ids(missed.get());
  const auto at = static_cast<size_t>(std::find(ids.begin(), ids.end(), "policy.unmet") - ids.begin());
  REQUIRE(at < ids.size());
  const char* message = nullptr;
  REQUIRE(cudadiag_report_finding_message(missed.get(), at, &message) == CUDADIAG_OK);
  CHECK(contains(message, "nvJitLink>=14"));
  CHECK(contains(message, "13.0.88"));

  const auto none = require({}); // no requirement: the plain report
  CHECK(unmet(none.get()).empty());

  cudadiag_report* raw = reinterpret_cast<cudadiag_report*>(&raw); // must be reset to NULL on failure
  const char* malformed[] = {"nvJitLink>=13", "nvJitLink>>13"};
  check_failed_with(cudadiag_require(options.get(), malformed, 2, &raw), CUDADIAG_ERROR_INVALID_OPTIONS,
                    "nvJitLink>>13");
  CHECK(raw == nullptr);
  const char* unknown[] = {"nvjitlnk>=13"};
  check_failed_with(cudadiag_require(options.get(), unknown, 1, &raw), CUDADIAG_ERROR_INVALID_OPTIONS,
                    "nvjitlnk");
  check_failed_with(cudadiag_require(options.get(), nullptr, 1, &raw), CUDADIAG_ERROR_INVALID_ARGUMENT);
  const char* with_null[] = {"nvJitLink>=13", nullptr};
  check_failed_with(cudadiag_require(options.get(), with_null, 2, &raw), CUDADIAG_ERROR_INVALID_ARGUMENT,
                    "requirement 1");
  check_failed_with(cudadiag_require(options.get(), malformed, 1, nullptr), CUDADIAG_ERROR_INVALID_ARGUMENT);
  REQUIRE(cudadiag_require(nullptr, nullptr, 0, &raw) == CUDADIAG_OK); // NULL options: the defaults
  cudadiag_report_free(raw);
}

TEST_CASE("c api: verify without a usable worker executable is skipped with the reason") {
  auto options =
      make_options(R"({"components": ["cuda"], "verify": true, "executable": "/nonexistent/cudadiag"})");
  cudadiag_report* raw = nullptr;
  REQUIRE(cudadiag_report_new(options.get(), &raw) == CUDADIAG_OK);
  const ReportPtr report(raw);
  const auto json = report_json(report.get());
  CHECK(json["verification"]["ran"] == false);
  CHECK(contains(json["verification"]["skipped_reason"].get<std::string>(), "/nonexistent/cudadiag"));
}

TEST_CASE("c api: inspect_process - this process, a negative PID, a PID that does not exist") {
  cudadiag_report* raw = nullptr;
  REQUIRE(cudadiag_inspect_process(0, &raw) == CUDADIAG_OK);
  ReportPtr self(raw);
  CHECK(report_json(self.get())["pid"] == 0);
  REQUIRE(cudadiag_inspect_process(static_cast<int>(::getpid()), &raw) == CUDADIAG_OK);
  const ReportPtr by_pid(raw);
  CHECK(report_json(by_pid.get())["pid"] == ::getpid());

  raw = reinterpret_cast<cudadiag_report*>(&raw); // must be reset to NULL on failure
  check_failed_with(cudadiag_inspect_process(-3, &raw), CUDADIAG_ERROR_INVALID_ARGUMENT, "invalid PID -3");
  CHECK(raw == nullptr);
  // Above /proc/sys/kernel/pid_max's ceiling (2^22): never a live process.
  check_failed_with(cudadiag_inspect_process(1 << 23, &raw), CUDADIAG_ERROR_INSPECT_FAILED, "no process");
  CHECK(raw == nullptr);
}

namespace {

std::mutex g_log_mutex;
std::vector<std::string> g_log_lines;

void collect(cudadiag_log_level level, const char* message, void* user_data) {
  const std::lock_guard lock(g_log_mutex);
  g_log_lines.push_back(std::to_string(static_cast<int>(level)) + " " + message);
  ++*static_cast<int*>(user_data);
}

// Runs `body` with file descriptor 2 sent to a temporary file; returns what was written there.
template <class Body> std::string stderr_of(Body&& body) {
  TempTree tree;
  const auto path = tree.path("stderr.txt");
  std::fflush(stderr);
  const int saved = ::dup(STDERR_FILENO);
  const int file = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  REQUIRE(saved >= 0);
  REQUIRE(file >= 0);
  ::dup2(file, STDERR_FILENO);
  ::close(file);
  body();
  std::fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

} // namespace

TEST_CASE("c api: nothing is printed without a log callback, and with one messages reach it") {
  // The no-worker path logs a warning: it must go nowhere by default.
  auto options =
      make_options(R"({"components": ["cuda"], "verify": true, "executable": "/nonexistent/cudadiag"})");
  const auto printed = stderr_of([&] {
    cudadiag_report* raw = nullptr;
    REQUIRE(cudadiag_report_new(options.get(), &raw) == CUDADIAG_OK);
    cudadiag_report_free(raw);
    REQUIRE(cudadiag_quick_check(nullptr, &raw) == CUDADIAG_OK);
    cudadiag_report_free(raw);
  });
  CHECK(printed.empty());

  {
    const std::lock_guard lock(g_log_mutex);
    g_log_lines.clear();
  }
  int calls = 0;
  cudadiag_set_log_callback(collect, CUDADIAG_LOG_DEBUG, &calls);
  cudadiag_report* raw = nullptr;
  REQUIRE(cudadiag_report_new(options.get(), &raw) == CUDADIAG_OK);
  cudadiag_report_free(raw);
  REQUIRE(cudadiag_quick_check(nullptr, &raw) == CUDADIAG_OK);
  cudadiag_report_free(raw);
  cudadiag_set_log_callback(nullptr, CUDADIAG_LOG_DEBUG, nullptr);
  REQUIRE(cudadiag_quick_check(nullptr, &raw) == CUDADIAG_OK); // after removal: not delivered
  cudadiag_report_free(raw);

  const std::lock_guard lock(g_log_mutex);
  CHECK(calls == static_cast<int>(g_log_lines.size()));
  auto logged = [](const std::string& part) {
    return std::any_of(g_log_lines.begin(), g_log_lines.end(),
                       [&](const auto& line) { return contains(line, part); });
  };
  CHECK(logged("2 verification skipped: the cudadiag worker executable /nonexistent/cudadiag"));
  CHECK(logged("0 quick_check: "));
  CHECK(std::count_if(g_log_lines.begin(), g_log_lines.end(),
                      [](const auto& line) { return contains(line, "quick_check: "); }) == 1);
}

TEST_CASE("c api: 8 threads at once - own and shared handles, option updates, per-thread last error") {
  constexpr int k_threads = 8;
  constexpr int k_rounds = 6;
  auto shared = make_options(R"({"components": ["cuda", "cudart", "nvrtc"]})");
  std::atomic<int> failures{0};
  std::atomic<int> reports{0};
  int callback_calls = 0; // written by collect() under g_log_mutex
  auto fail = [&failures](const char* what) {
    std::fprintf(stderr, "thread failure: %s: %s\n", what, cudadiag_last_error());
    ++failures;
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < k_threads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < k_rounds; ++round) {
        // The shared handle is rewritten by some threads while others read it.
        const char* update = (t + round) % 2 == 0 ? R"({"fail_on": "warning"})" : R"({"fail_on": "error"})";
        if (cudadiag_options_from_json(shared.get(), update) != CUDADIAG_OK) {
          fail("options_from_json");
        }
        cudadiag_options* own = nullptr;
        cudadiag_report* report = nullptr;
        if (cudadiag_options_new(&own) != CUDADIAG_OK ||
            cudadiag_options_from_json(own, R"({"components": ["nvrtc"]})") != CUDADIAG_OK) {
          fail("own options");
        }
        const bool quick = (t + round) % 3 != 0;
        const auto status = quick ? cudadiag_quick_check(t % 2 == 0 ? shared.get() : own, &report)
                                  : cudadiag_report_new(own, &report);
        if (status != CUDADIAG_OK) {
          fail(quick ? "quick_check" : "report_new");
        } else {
          size_t count = 0;
          const char* json = cudadiag_report_json_str(report);
          if (json == nullptr || cudadiag_report_finding_count(report, &count) != CUDADIAG_OK ||
              nlohmann::json::parse(json)["findings"].size() != count) {
            fail("reading the report");
          }
          ++reports;
        }
        // This thread's error stays this thread's, whatever the others do meanwhile.
        if (cudadiag_options_from_json(own, "{\"bad\": 1}") != CUDADIAG_ERROR_INVALID_OPTIONS) {
          fail("bad options accepted");
        }
        std::this_thread::yield();
        if (!contains(cudadiag_last_error(), "unknown option \"bad\"")) {
          fail("last error lost");
        }
        cudadiag_report_free(report);
        cudadiag_options_free(own);
        if (t == 0) { // the process-wide log callback changes under the others' feet
          cudadiag_set_log_callback(round % 2 == 0 ? collect : nullptr, CUDADIAG_LOG_DEBUG, &callback_calls);
        }
      }
    });
  }
  for (auto& thread : threads) {
    thread.join();
  }
  cudadiag_set_log_callback(nullptr, CUDADIAG_LOG_DEBUG, nullptr);
  CHECK(failures.load() == 0);
  CHECK(reports.load() == k_threads * k_rounds);
}
