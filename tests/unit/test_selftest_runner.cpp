// The parent's worker loop (selftest/runner.hpp) against a stand-in worker that hangs or crashes
// inside chosen tests (tests/fixtures/fake_selftest_worker.py): the broken test is an "error" with
// the reason, a fresh worker runs the tests after it, and nothing waits past a test's deadline.

#include "selftest/runner.hpp"

#include <doctest/doctest.h>

#include <chrono>
#include <map>
#include <set>

using namespace cudadiag;

namespace {

std::vector<selftest::TestResult> run_with(const std::string& behaviour, std::vector<std::string> tests,
                                           double& seconds) {
  selftest::WorkerConfig config;
  config.device = 0;
  config.tests = std::move(tests);
  config.libcuda = "/nonexistent/libcuda.so.1";
  selftest::SelfTestOptions options;
  options.executable = CUDADIAG_SOURCE_DIR "/tests/fixtures/fake_selftest_worker.py";
  options.startup_timeout = std::chrono::seconds(5);
  Environment env;
  env.set("PATH", "/usr/bin:/bin");
  env.set("FAKE_SELFTEST", behaviour);
  std::mutex lock;
  const auto started = std::chrono::steady_clock::now();
  auto results = selftest::run_in_workers(config, options, env, lock);
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return results;
}

std::map<std::string, selftest::TestResult> by_key(const std::vector<selftest::TestResult>& results) {
  std::map<std::string, selftest::TestResult> out;
  for (const auto& result : results) {
    out[result.key] = result;
  }
  return out;
}

} // namespace

TEST_CASE("selftest runner: a healthy worker reports every test once, from one process") {
  double seconds = 0;
  const auto results = run_with("", {"ptx", "reduce", "sort"}, seconds);
  REQUIRE(results.size() == 3);
  std::set<int> pids;
  for (const auto& result : results) {
    CHECK(result.status == cudadiag::selftest::TestStatus::pass);
    CHECK(result.device == 0);
    pids.insert(static_cast<int>(result.details.at("pid").integer().value_or(-1)));
  }
  CHECK(pids.size() == 1);
}

TEST_CASE("selftest runner: a test that hangs or crashes costs that test, the others still run") {
  double seconds = 0;
  const auto results = run_with("hang:ptx,crash:sort", {"ptx", "reduce", "sort", "ipc"}, seconds);
  const auto found = by_key(results);
  REQUIRE(found.size() == 4);
  CHECK(found.at("ptx").status == cudadiag::selftest::TestStatus::error);
  CHECK(found.at("ptx").reason.find("timed out") != std::string::npos);
  CHECK(found.at("sort").status == cudadiag::selftest::TestStatus::error);
  CHECK(found.at("sort").reason.find("SIGSEGV") != std::string::npos);
  CHECK(found.at("reduce").status == cudadiag::selftest::TestStatus::pass);
  CHECK(found.at("ipc").status == cudadiag::selftest::TestStatus::pass);
  // Three workers: one killed in ptx, one crashed in sort, one for ipc.
  CHECK(found.at("reduce").details.at("pid") != found.at("ipc").details.at("pid"));
  // The hang cost its 0.5 s deadline, not the stand-in's 60 s sleep.
  CHECK(seconds < 10.0);
}

TEST_CASE("selftest runner: a worker that cannot start fails every test with the reason") {
  selftest::WorkerConfig config;
  config.tests = {"ptx", "sort"};
  selftest::SelfTestOptions options;
  options.executable = "/nonexistent/cudadiag";
  std::mutex lock;
  const auto results = selftest::run_in_workers(config, options, Environment{}, lock);
  REQUIRE(results.size() == 2);
  for (const auto& result : results) {
    CHECK(result.status == cudadiag::selftest::TestStatus::error);
    CHECK(result.reason.find("/nonexistent/cudadiag") != std::string::npos);
  }
}
