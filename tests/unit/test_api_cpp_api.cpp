// The C++ API (include/cudadiag/cudadiag.hpp) through libcudadiag.so itself: value types, the
// exception type crossing the library boundary, the log handler, and the stages' options.

#include "cudadiag/cudadiag.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace {

using cudadiag::testing::TempTree;

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

const cudadiag::Finding* with_id(const std::vector<cudadiag::Finding>& findings, const std::string& id) {
  const auto it =
      std::find_if(findings.begin(), findings.end(), [&id](const auto& finding) { return finding.id == id; });
  return it == findings.end() ? nullptr : &*it;
}

// The fake driver on LD_LIBRARY_PATH and this build's cudadiag as the worker.
cudadiag::Options fake_driver_options() {
  const std::string driver = CUDADIAG_FAKE_DRIVER;
  cudadiag::Options options;
  options.components = {"cuda"};
  options.executable = CUDADIAG_TEST_EXECUTABLE;
  options.environment = {{"LD_LIBRARY_PATH", driver.substr(0, driver.rfind('/'))},
                         {"CUDADIAG_FAKE_CUDA", "ok"}};
  return options;
}

} // namespace

TEST_CASE("c++ api: the loaded library's version matches the headers") {
  CHECK(cudadiag::version() == CUDADIAG_VERSION_STRING);
}

TEST_CASE("c++ api: a bad option throws cudadiag::Exception, catchable by type across the library") {
  cudadiag::Options options;
  options.components = {"nvrtc", "warp_drive"};
  CHECK_THROWS_WITH_AS(cudadiag::discover(options), doctest::Contains("unknown component \"warp_drive\""),
                       cudadiag::Exception);
  CHECK_THROWS_AS(cudadiag::quick_check(options), cudadiag::Exception);
  options.components.clear();
  options.timeout_seconds = -1;
  CHECK_THROWS_WITH_AS(cudadiag::verify(options), doctest::Contains("timeout_seconds"), cudadiag::Exception);
  CHECK_THROWS_WITH_AS(cudadiag::inspect_process(-1), doctest::Contains("invalid PID -1"),
                       cudadiag::Exception);
}

TEST_CASE("c++ api: quick_check values agree with its JSON, and a default Report renders as {}") {
  TempTree tree;
  const auto stubs = tree.mkdir("cuda/lib64/stubs");
  tree.copy_file(CUDADIAG_TWO_COPIES_LIB, "cuda/lib64/stubs/libcuda.so.1");
  cudadiag::Options options;
  options.environment = {{"LD_LIBRARY_PATH", stubs}};
  const auto report = cudadiag::quick_check(options);
  CHECK(report.verdict == cudadiag::Verdict::error);
  CHECK(report.exit_code == 1);
  CHECK_FALSE(report.verified);
  CHECK(contains(report.verification_skipped, "quick_check()"));
  CHECK(report.elapsed_ms > 0);
  const auto* stub = with_id(report.findings, "driver.stub");
  REQUIRE(stub != nullptr);
  CHECK(stub->severity == cudadiag::Severity::error);
  CHECK(std::find(stub->components.begin(), stub->components.end(), "cuda") != stub->components.end());
  CHECK(std::none_of(report.findings.begin(), report.findings.end(),
                     [](const auto& finding) { return finding.severity == cudadiag::Severity::info; }));

  const auto cuda = std::find_if(report.components.begin(), report.components.end(),
                                 [](const auto& component) { return component.name == "cuda"; });
  REQUIRE(cuda != report.components.end());
  CHECK(cuda->kind == "dynamic_lib");
  REQUIRE(cuda->loader.has_value());
  CHECK(cuda->loader->found_via == "LD_LIBRARY_PATH");
  CHECK(contains(cuda->loader->path, "/stubs/libcuda.so.1"));

  CHECK(stub->repair == cudadiag::Repair::fix_environment); // reached through LD_LIBRARY_PATH

  const auto json = nlohmann::json::parse(cudadiag::to_json(report));
  CHECK(json["summary"]["status"] == "error");
  REQUIRE(json["findings"].size() == report.findings.size());
  CHECK(json["components"].size() == report.components.size());
  const std::vector<std::string> repair_names = {
      "none",      "fix_environment", "reinstall_package",  "restart_process",
      "reset_gpu", "reboot",          "hardware_inspection"};
  for (std::size_t i = 0; i < report.findings.size(); ++i) {
    CHECK(json["findings"][i]["id"] == report.findings[i].id);
    CHECK(json["findings"][i]["repair"] ==
          repair_names.at(static_cast<std::size_t>(report.findings[i].repair)));
  }
  CHECK(cudadiag::Finding{}.repair == cudadiag::Repair::none);

  CHECK(cudadiag::to_json(cudadiag::Report{}) == "{}\n");
  CHECK(cudadiag::to_json(cudadiag::ProcessInspection{}) == "{}\n");
}

TEST_CASE(
    "c++ api: quick_check covers what a process loads or reads: no programs, no frameworks' own loads") {
  const auto quick = cudadiag::quick_check();
  const auto full = cudadiag::discover();
  const auto kinds = [](const cudadiag::Report& report, const std::string& kind) {
    return std::count_if(report.components.begin(), report.components.end(),
                         [&](const auto& component) { return component.kind == kind; });
  };
  CHECK(kinds(quick, "binary") == 0);
  CHECK(kinds(full, "binary") > 0);
  for (const auto* kind : {"dynamic_lib", "headers", "static_lib", "bitcode_lib"}) {
    CAPTURE(kind);
    CHECK(kinds(quick, kind) == kinds(full, kind));
  }
  CHECK(quick.components.size() + static_cast<std::size_t>(kinds(full, "binary")) == full.components.size());
  // Leaving the frameworks' loads out is the plan's flag (test_pipeline_plan.cpp tests it on a torch).
  CHECK(nlohmann::json::parse(cudadiag::to_json(quick))["linkage"]["frameworks"].empty());
  // A program named by the caller is checked.
  cudadiag::Options options;
  options.components = {"nvcc"};
  const auto named = cudadiag::quick_check(options);
  CHECK(kinds(named, "binary") == 1);
}

TEST_CASE("c++ api: quick_check leaves the frameworks' pins to discover(): importing torch is another "
          "process's question") {
  // A venv whose torch pins nvidia-cudnn-cu13==9.19.0.56 beside a 9.14 cuDNN wheel.
  const TempTree tree;
  tree.write("venv/pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = false\nversion = 3.12.1\n");
  tree.write("venv/bin/python3.12", "", 0755);
  tree.symlink("venv/bin/python3", "python3.12");
  tree.copy_file(std::string(CUDADIAG_SOURCE_DIR) + "/tests/fixtures/python_metadata/torch-2.11.0.METADATA",
                 "venv/lib/python3.12/site-packages/torch-2.11.0.dist-info/METADATA");
  tree.write("venv/lib/python3.12/site-packages/nvidia_cudnn_cu13-9.14.0.64.dist-info/METADATA",
             "Metadata-Version: 2.1\nName: nvidia-cudnn-cu13\nVersion: 9.14.0.64\n");
  cudadiag::Options options;
  options.environment = {{"VIRTUAL_ENV", tree.path("venv")},
                         {"PATH", tree.path("venv/bin") + ":/usr/bin:/bin"}};
  const auto full = cudadiag::discover(options);
  const auto quick = cudadiag::quick_check(options);
  CHECK(with_id(full.findings, "python.requirement_unmet") != nullptr);
  CHECK(with_id(quick.findings, "python.requirement_unmet") == nullptr);
  const auto pins = [](const cudadiag::Report& report) {
    return nlohmann::json::parse(cudadiag::to_json(report))["environment"]["framework_requirements"].size();
  };
  CHECK(pins(full) > 0);
  CHECK(pins(quick) == 0);
}

TEST_CASE("c++ api: environment overrides reach the search, and fail_on_warning sets the exit code") {
  // Two toolkit roots that exist and differ (a root naming no directory is env.bad_search_path's).
  cudadiag::testing::TempTree tree;
  cudadiag::Options options;
  options.components = {"nvrtc"};
  options.environment = {{"CUDA_PATH", tree.mkdir("opt/cuda-a")}, {"CUDA_HOME", tree.mkdir("opt/cuda-b")}};
  auto report = cudadiag::discover(options);
  const auto* differ = with_id(report.findings, "env.cuda_path_home_differ");
  REQUIRE(differ != nullptr);
  CHECK(differ->severity == cudadiag::Severity::warning);
  const bool errors = std::any_of(report.findings.begin(), report.findings.end(), [](const auto& finding) {
    return finding.severity == cudadiag::Severity::error;
  });
  CHECK(report.exit_code == (errors ? 1 : 0));
  options.fail_on_warning = true;
  CHECK(cudadiag::discover(options).exit_code == 1);
  options.environment = {{"CUDA_PATH", std::nullopt}, {"CUDA_HOME", std::nullopt}};
  CHECK(with_id(cudadiag::discover(options).findings, "env.cuda_path_home_differ") == nullptr);
}

TEST_CASE("c++ api: verify reports the devices the worker's driver sees") {
  const auto report = cudadiag::verify(fake_driver_options());
  CHECK(report.verified);
  REQUIRE(report.devices.size() == 1);
  const auto& device = report.devices.front();
  CHECK(device.ordinal == 0);
  CHECK(contains(device.name, "NVIDIA H200"));
  CHECK(device.sm_count == 132);
  REQUIRE(device.total_memory_bytes.has_value());
  CHECK(*device.total_memory_bytes == 150754820096ULL);
  CHECK(report.tests.empty());
}

TEST_CASE("c++ api: self_test without a worker executable skips, with the reason in the JSON") {
  cudadiag::Options options;
  options.components = {"cuda"};
  options.executable = "/nonexistent/cudadiag";
  const auto report = cudadiag::self_test(options);
  CHECK_FALSE(report.verified);
  CHECK(report.tests.empty());
  CHECK_FALSE(report.score.has_value());
  const auto json = nlohmann::json::parse(cudadiag::to_json(report));
  REQUIRE(json["selftest"].is_object());
  CHECK(contains(json["selftest"].dump(), "/nonexistent/cudadiag"));
}

TEST_CASE("c++ api: inspect_process of this process lists what it has mapped") {
  const auto self = cudadiag::inspect_process();
  CHECK(self.pid == 0);
  const auto by_pid = cudadiag::inspect_process(static_cast<int>(::getpid()));
  CHECK(by_pid.pid == ::getpid());
  const auto json = nlohmann::json::parse(cudadiag::to_json(by_pid));
  CHECK(json["pid"] == ::getpid());
  CHECK(json["components"].size() == by_pid.libraries.size());
}

TEST_CASE("c++ api: the log handler receives one debug line per run, and nothing once removed") {
  std::mutex mutex;
  std::vector<std::string> lines;
  cudadiag::set_log_handler(
      [&](cudadiag::LogLevel level, const std::string& message) {
        const std::lock_guard lock(mutex);
        lines.push_back((level == cudadiag::LogLevel::debug ? "debug " : "other ") + message);
      },
      cudadiag::LogLevel::debug);
  cudadiag::Options options;
  options.components = {"cuda"};
  (void)cudadiag::discover(options);
  cudadiag::set_log_handler(nullptr);
  (void)cudadiag::discover(options);
  REQUIRE(lines.size() == 1);
  CHECK(contains(lines.front(), "debug discover: 1 components"));
}

namespace {

// quick_check() through a log handler that notes whether each call answered its kept report.
class QuickCheckCalls {
public:
  QuickCheckCalls() {
    cudadiag::set_log_handler(
        [this](cudadiag::LogLevel, const std::string& message) {
          const std::lock_guard lock(m_mutex);
          m_kept = m_kept || contains(message, "quick_check: the kept answer");
        },
        cudadiag::LogLevel::debug);
  }
  ~QuickCheckCalls() { cudadiag::set_log_handler(nullptr); }
  QuickCheckCalls(const QuickCheckCalls&) = delete;
  QuickCheckCalls& operator=(const QuickCheckCalls&) = delete;

  // One call; kept() then says whether it answered the kept report.
  cudadiag::Report call(const cudadiag::Options& options) {
    {
      const std::lock_guard lock(m_mutex);
      m_kept = false;
    }
    return cudadiag::quick_check(options);
  }
  bool kept() {
    const std::lock_guard lock(m_mutex);
    return m_kept;
  }
  // Waits out the 2 s in which a just-changed file is not trusted, then calls twice until the second
  // call answers the kept report (a change elsewhere on the machine to something discovery reads, a
  // dpkg run, makes the first pair compute twice): whether it did, and the kept report.
  bool settle(const cudadiag::Options& options, cudadiag::Report& out) {
    for (int attempt = 0; attempt < 3; ++attempt) {
      ::usleep(2'100'000);
      const auto first = call(options);
      out = call(options);
      if (kept()) {
        CHECK(cudadiag::to_json(out) == cudadiag::to_json(first));
        return true;
      }
    }
    return false;
  }

private:
  std::mutex m_mutex;
  bool m_kept = false;
};

nlohmann::json answers(const cudadiag::Report& report) {
  const auto json = nlohmann::json::parse(cudadiag::to_json(report));
  return {{"components", json["components"]}, {"findings", json["findings"]}};
}

std::string cuda_loader_path(const cudadiag::Report& report) {
  const auto cuda = std::find_if(report.components.begin(), report.components.end(),
                                 [](const auto& component) { return component.name == "cuda"; });
  return cuda != report.components.end() && cuda->loader ? cuda->loader->path : std::string();
}

// The same question asked with an unrelated variable set: a different key, so computed afresh.
nlohmann::json fresh_answers(cudadiag::Options options) {
  options.environment["CUDADIAG_TEST_FRESH"] = std::to_string(::getpid());
  return answers(cudadiag::quick_check(options));
}

} // namespace

TEST_CASE("c++ api: quick_check answers a repeated call from what it kept, and never answers stale: a new "
          "directory entry, a file changed in place, a changed environment variable") {
  // The tree lives in the build directory: every directory above a file discovery read is part of
  // what must stay unchanged, and /tmp changes all the time on a shared machine.
  const std::string scratch = CUDADIAG_API_SCRATCH_DIR;
  const TempTree tree(scratch);
  const auto first_dir = tree.mkdir("first");
  const auto second_dir = tree.mkdir("second");
  tree.copy_file(CUDADIAG_FAKE_DRIVER, "second/libcuda.so.1");
  const char* saved_path = std::getenv("LD_LIBRARY_PATH");
  const std::string saved_library_path = saved_path != nullptr ? saved_path : "";
  ::setenv("LD_LIBRARY_PATH", (first_dir + ":" + second_dir).c_str(), 1);
  cudadiag::Options options;
  options.components = {"cuda"};
  options.environment = {{"HOME", tree.root()}};

  QuickCheckCalls calls;
  cudadiag::Report kept;
  REQUIRE(calls.settle(options, kept));
  CHECK(cuda_loader_path(kept) == second_dir + "/libcuda.so.1");

  // A new entry in a directory the search listed.
  tree.copy_file(CUDADIAG_FAKE_DRIVER, "first/libcuda.so.1");
  auto changed = calls.call(options);
  CHECK_FALSE(calls.kept());
  CHECK(cuda_loader_path(changed) == first_dir + "/libcuda.so.1");
  CHECK(answers(changed) == fresh_answers(options));

  // A file changed in place (same inode): no longer a library.
  REQUIRE(calls.settle(options, kept));
  CHECK(cuda_loader_path(kept) == first_dir + "/libcuda.so.1");
  {
    std::ofstream overwrite(first_dir + "/libcuda.so.1", std::ios::in | std::ios::out | std::ios::binary);
    overwrite << "not an ELF file";
  }
  changed = calls.call(options);
  CHECK_FALSE(calls.kept());
  CHECK(answers(changed) != answers(kept));
  CHECK(answers(changed) == fresh_answers(options));

  // A changed environment variable of this process.
  REQUIRE(calls.settle(options, kept));
  ::setenv("LD_LIBRARY_PATH", second_dir.c_str(), 1);
  changed = calls.call(options);
  CHECK_FALSE(calls.kept());
  CHECK(cuda_loader_path(changed) == second_dir + "/libcuda.so.1");
  CHECK(answers(changed) != answers(kept));

  if (saved_path != nullptr) {
    ::setenv("LD_LIBRARY_PATH", saved_library_path.c_str(), 1);
  } else {
    ::unsetenv("LD_LIBRARY_PATH");
  }
}
