// The worker layer (worker/process.cpp, worker/child.cpp): real child processes (`cudadiag __worker driver
// PATH`) against the fake drivers of tests/fixtures, whose behaviour the step environment sets.

#include "checks.hpp"
#include "core/environment.hpp"
#include "core/filesystem.hpp"
#include "fake_driver.hpp"
#include "worker/process.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

using cudadiag::testing::contains;
using cudadiag::worker::StepOutcome;
using cudadiag::worker::WorkerStep;
using namespace std::chrono_literals;

namespace {

// A value no other process has in its environment, to find the processes a test started.
std::string unique_marker() {
  static std::atomic<int> counter{0};
  return std::to_string(::getpid()) + "-" + std::to_string(++counter) + "-" +
         std::to_string(std::chrono::steady_clock::now().time_since_epoch().count());
}

std::vector<StepOutcome> run(const std::vector<WorkerStep>& steps, const cudadiag::Environment& env,
                             std::chrono::milliseconds timeout = 10s) {
  cudadiag::worker::WorkerOptions options;
  options.executable = CUDADIAG_TEST_EXECUTABLE;
  options.step_timeout = timeout;
  return cudadiag::worker::run_steps(steps, options, env);
}

StepOutcome run_driver(const std::string& library, const std::string& mode,
                       std::chrono::milliseconds timeout = 10s) {
  auto outcomes = run({{"cuda", "driver", library}},
                      cudadiag::testing::fake_driver_env({{"CUDADIAG_FAKE_CUDA", mode}}), timeout);
  REQUIRE(outcomes.size() == 1);
  return outcomes.front();
}

// The result object the child sent (null when none).
nlohmann::json result(const StepOutcome& outcome) {
  return outcome.result.empty() ? nlohmann::json() : nlohmann::json::parse(outcome.result, nullptr, false);
}

// Processes whose parent is this one, zombies included (/proc/PID/stat: "pid (comm) state ppid ...").
std::vector<int> children_of_this_process() {
  std::vector<int> children;
  const auto entries = cudadiag::fs::list_directory("/proc");
  if (!entries) {
    return children;
  }
  for (const auto& entry : *entries) {
    if (entry.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    const auto stat = cudadiag::fs::read_file_prefix("/proc/" + entry + "/stat", 4096);
    const auto close = stat ? stat->rfind(')') : std::string::npos;
    if (close == std::string::npos || close + 4 >= stat->size()) {
      continue;
    }
    const auto fields = stat->substr(close + 4); // after ") S "
    if (std::stoi(fields) == ::getpid()) {
      children.push_back(std::stoi(entry));
    }
  }
  return children;
}

// Whether a live process carries CUDADIAG_TEST_MARKER=marker in its environment.
bool marked_process_alive(const std::string& marker) {
  const auto entries = cudadiag::fs::list_directory("/proc");
  if (!entries) {
    return false;
  }
  const std::string needle = "CUDADIAG_TEST_MARKER=" + marker;
  for (const auto& entry : *entries) {
    if (entry.find_first_not_of("0123456789") != std::string::npos) {
      continue;
    }
    const auto environ = cudadiag::fs::read_file_prefix("/proc/" + entry + "/environ", std::size_t{1} << 20U);
    if (environ && contains(*environ, needle)) {
      return true;
    }
  }
  return false;
}

// A killed process may take a moment to be torn down and reaped by init.
bool marked_processes_gone(const std::string& marker) {
  for (int attempt = 0; attempt < 100; ++attempt) {
    if (!marked_process_alive(marker)) {
      return true;
    }
    std::this_thread::sleep_for(20ms);
  }
  return false;
}

} // namespace

TEST_CASE("worker: a crash in cuInit is reported with the signal, the path and the phase") {
  const auto outcome = run_driver(CUDADIAG_FAKE_DRIVER, "crash");
  INFO(outcome.detail);
  CHECK(outcome.id == "cuda");
  CHECK(outcome.kind == "driver");
  CHECK(outcome.path == CUDADIAG_FAKE_DRIVER);
  CHECK(outcome.status == cudadiag::worker::StepStatus::crashed);
  CHECK(outcome.signal == 11);
  CHECK_FALSE(outcome.exit_code.has_value());
  CHECK(outcome.last_phase == "cuInit");
  CHECK(outcome.detail ==
        std::string("killed by SIGSEGV while loading ") + CUDADIAG_FAKE_DRIVER + " (in cuInit)");
  CHECK(contains(outcome.stderr_tail, "fake libcuda: crashing in cuInit"));
  CHECK(outcome.result.empty());
  CHECK(children_of_this_process().empty());
}

TEST_CASE("worker: a crash in the library's constructor is attributed to dlopen") {
  const auto outcome = run_driver(CUDADIAG_FAKE_DRIVER, "crash-on-load");
  CHECK(outcome.status == cudadiag::worker::StepStatus::crashed);
  CHECK(outcome.signal == 11);
  CHECK(outcome.last_phase == "dlopen");
  CHECK(contains(outcome.detail, "SIGSEGV"));
  CHECK(contains(outcome.detail, CUDADIAG_FAKE_DRIVER));
  CHECK(contains(outcome.detail, "(in dlopen)"));
}

TEST_CASE("worker: a hang is killed at the step timeout and leaves nothing behind") {
  for (const char* mode : {"hang", "hang-on-load"}) {
    CAPTURE(mode);
    const auto marker = unique_marker();
    auto env =
        cudadiag::testing::fake_driver_env({{"CUDADIAG_FAKE_CUDA", mode}, {"CUDADIAG_TEST_MARKER", marker}});
    const auto start = std::chrono::steady_clock::now();
    const auto outcomes = run({{"cuda", "driver", CUDADIAG_FAKE_DRIVER}}, env, 1000ms);
    const auto wall = std::chrono::steady_clock::now() - start;
    REQUIRE(outcomes.size() == 1);
    const auto& outcome = outcomes.front();
    INFO(outcome.detail);
    CHECK(outcome.status == cudadiag::worker::StepStatus::timeout);
    CHECK_FALSE(outcome.signal.has_value());
    CHECK(outcome.result.empty());
    CHECK(outcome.last_phase == (std::string_view(mode) == "hang" ? "cuInit" : "dlopen"));
    CHECK(contains(outcome.detail, "timed out after 1 s while loading"));
    CHECK(outcome.elapsed_ms >= 1000);
    CHECK(wall < 2500ms);
    CHECK(children_of_this_process().empty()); // killed and reaped: no zombie
    CHECK(marked_processes_gone(marker));
  }
}

TEST_CASE("worker: everything a child started dies with it, on timeout and on normal exit") {
  for (const char* mode : {"fork-and-hang", "fork-and-return"}) {
    CAPTURE(mode);
    const auto marker = unique_marker();
    auto env =
        cudadiag::testing::fake_driver_env({{"CUDADIAG_FAKE_CUDA", mode}, {"CUDADIAG_TEST_MARKER", marker}});
    const auto start = std::chrono::steady_clock::now();
    const auto outcomes = run({{"cuda", "driver", CUDADIAG_FAKE_DRIVER}}, env, 1000ms);
    REQUIRE(outcomes.size() == 1);
    INFO(outcomes.front().detail);
    // The grandchild holds the pipes open: the parent must notice the exit, not wait for EOF.
    CHECK(outcomes.front().status == (std::string_view(mode) == "fork-and-hang"
                                          ? cudadiag::worker::StepStatus::timeout
                                          : cudadiag::worker::StepStatus::ok));
    CHECK(std::chrono::steady_clock::now() - start < 2500ms);
    CHECK(children_of_this_process().empty());
    CHECK(marked_processes_gone(marker));
  }
}

TEST_CASE("worker: a daemon that double-forks and leaves the process group with setsid dies too") {
  const auto marker = unique_marker();
  auto env = cudadiag::testing::fake_driver_env(
      {{"CUDADIAG_FAKE_CUDA", "daemon"}, {"CUDADIAG_TEST_MARKER", marker}});
  const auto outcomes = run({{"cuda", "driver", CUDADIAG_FAKE_DRIVER}}, env, 5000ms);
  REQUIRE(outcomes.size() == 1);
  INFO(outcomes.front().detail);
  CHECK(outcomes.front().status == cudadiag::worker::StepStatus::ok);
  CHECK(children_of_this_process().empty());
  CHECK(marked_processes_gone(marker));
}

TEST_CASE("worker: a library writing a record nested a million deep on the protocol stops its step, not the "
          "parent") {
  const auto outcome = run_driver(CUDADIAG_FAKE_DRIVER, "protocol-deep", 10000ms);
  INFO(outcome.detail);
  CHECK(outcome.status == cudadiag::worker::StepStatus::error);
  CHECK(contains(outcome.detail, "the worker sent an unreadable protocol line"));
  CHECK(contains(outcome.detail, "deeper than 32"));
  CHECK(outcome.records.empty());
  CHECK(children_of_this_process().empty());
}

TEST_CASE("worker: deadline_ms lines never keep a step alive past its budget") {
  const auto start = std::chrono::steady_clock::now();
  const auto outcome = run_driver(CUDADIAG_FAKE_DRIVER, "protocol-deadline", 1000ms);
  const auto wall = std::chrono::steady_clock::now() - start;
  INFO(outcome.detail);
  CHECK(outcome.status == cudadiag::worker::StepStatus::timeout);
  CHECK(outcome.last_phase == "stalling");
  CHECK(wall < 3000ms); // 1 s budget, the kill and the reap; an hour or 2^64-1 ms asked
  CHECK(children_of_this_process().empty());
}

TEST_CASE("worker: a flood of records is cut at the record limit and the step stopped") {
  const auto start = std::chrono::steady_clock::now();
  const auto outcome = run_driver(CUDADIAG_FAKE_DRIVER, "protocol-flood", 10000ms);
  INFO(outcome.detail);
  CHECK(outcome.status == cudadiag::worker::StepStatus::error);
  CHECK(contains(outcome.detail, "more than 4096 records"));
  CHECK(outcome.records.size() == 4096);
  CHECK(std::chrono::steady_clock::now() - start < 5000ms);
  CHECK(children_of_this_process().empty());
}

TEST_CASE("worker: steps run concurrently and come back in step order") {
  const auto env = cudadiag::testing::fake_driver_env({{"CUDADIAG_FAKE_CUDA", "hang"}});
  const std::vector<WorkerStep> steps = {
      {"first", "driver", CUDADIAG_FAKE_DRIVER},         // hangs in cuInit
      {"second", "no-such-kind", CUDADIAG_FAKE_DRIVER},  // refused by the child
      {"third", "driver", CUDADIAG_FAKE_DRIVER},         // hangs in cuInit
      {"fourth", "driver", CUDADIAG_FAKE_DRIVER_NOPROC}, // never reaches cuInit
      {"fifth", "driver", CUDADIAG_FAKE_DRIVER},         // hangs in cuInit
  };
  const auto start = std::chrono::steady_clock::now();
  const auto outcomes = run(steps, env, 1000ms);
  const auto wall = std::chrono::steady_clock::now() - start;
  REQUIRE(outcomes.size() == steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    CHECK(outcomes[i].id == steps[i].id);
  }
  CHECK(outcomes[0].status == cudadiag::worker::StepStatus::timeout);
  CHECK(outcomes[1].status == cudadiag::worker::StepStatus::error);
  CHECK(outcomes[2].status == cudadiag::worker::StepStatus::timeout);
  CHECK(outcomes[3].status == cudadiag::worker::StepStatus::ok);
  CHECK(outcomes[4].status == cudadiag::worker::StepStatus::timeout);
  CHECK(outcomes[3].elapsed_ms < 1000); // not held up by its neighbours
  CHECK(wall < 2500ms);                 // three 1 s timeouts, at once
  CHECK(children_of_this_process().empty());
}

TEST_CASE("worker: an unknown kind is an error carrying the child's message") {
  const auto outcomes =
      run({{"x", "no-such-kind", "/nonexistent/libx.so"}}, cudadiag::testing::fake_driver_env());
  REQUIRE(outcomes.size() == 1);
  CHECK(outcomes[0].status == cudadiag::worker::StepStatus::error);
  CHECK(outcomes[0].exit_code == 2);
  CHECK(contains(outcomes[0].detail, "unknown worker kind 'no-such-kind'"));
  CHECK(contains(outcomes[0].detail,
                 "driver, nvml, nvrtc, nvjitlink, cudart, link_map, selftest, jit_lto, ipc_peer"));
  CHECK(outcomes[0].result.empty());
}

TEST_CASE("worker: an executable that cannot be started is an error, not an exception") {
  cudadiag::worker::WorkerOptions options;
  options.executable = "/nonexistent/cudadiag";
  const auto outcomes = cudadiag::worker::run_steps({{"cuda", "driver", CUDADIAG_FAKE_DRIVER}}, options,
                                                    cudadiag::testing::fake_driver_env());
  REQUIRE(outcomes.size() == 1);
  CHECK(outcomes[0].status == cudadiag::worker::StepStatus::error);
  CHECK(contains(outcomes[0].detail, "could not start the worker /nonexistent/cudadiag"));
  CHECK(cudadiag::worker::run_steps({}, options, cudadiag::testing::fake_driver_env()).empty());
}

TEST_CASE("worker: a library that cannot be loaded is a result, not a failure of the step") {
  SUBCASE("the file does not exist") {
    const auto outcome = run_driver("/nonexistent/libcuda.so.1", "ok");
    REQUIRE(outcome.status == cudadiag::worker::StepStatus::ok);
    CHECK(outcome.exit_code == 0);
    CHECK(outcome.last_phase == "dlopen");
    CHECK(result(outcome)["loaded"] == false);
    CHECK(contains(result(outcome)["dlopen_error"].get<std::string>(), "/nonexistent/libcuda.so.1"));
    CHECK(result(outcome)["init"].is_null());
  }
  SUBCASE("a dependency is missing") {
    const auto outcome = run_driver(CUDADIAG_NEEDS_GONE_LIB, "ok");
    REQUIRE(outcome.status == cudadiag::worker::StepStatus::ok);
    CHECK(result(outcome)["loaded"] == false);
    CHECK(contains(result(outcome)["dlopen_error"].get<std::string>(), "libcudadiag_gone.so"));
  }
}

TEST_CASE("worker: a chatty child does not block, and only the tail of its stderr is kept") {
  const auto outcome = run_driver(CUDADIAG_FAKE_DRIVER, "noisy");
  INFO(outcome.detail);
  CHECK(outcome.status == cudadiag::worker::StepStatus::ok);
  CHECK(result(outcome)["init"]["code"] == 0);
  CHECK(outcome.stderr_tail.size() <= 2048);
  CHECK(outcome.stderr_tail.size() > 1000);
  CHECK(contains(outcome.stderr_tail, "the last line of noise"));
}

TEST_CASE("worker memory limit: CUDADIAG_WORKER_MEMORY_MB in MiB, 0 for none, nonsense ignored") {
  using cudadiag::Environment;
  namespace worker = cudadiag::worker;
  const auto limit = [](const char* value) {
    Environment env;
    if (value != nullptr) {
      env.set("CUDADIAG_WORKER_MEMORY_MB", value);
    }
    return worker::memory_limit_mb(env);
  };
  CHECK(limit(nullptr) == worker::k_default_memory_limit_mb);
  CHECK(limit("") == worker::k_default_memory_limit_mb);
  CHECK(limit("4096") == 4096);
  CHECK(limit("0") == 0);
  CHECK(limit("64") == 64);
  for (const char* nonsense : {"63", "-1", "1e3", "4096MB", " 4096", "99999999999999999999999", "16777217"}) {
    CHECK(limit(nonsense) == worker::k_default_memory_limit_mb);
  }
}
