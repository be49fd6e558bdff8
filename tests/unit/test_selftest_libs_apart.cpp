// The libs test split over two workers (selftest/libs_apart.hpp): which configurations split, and
// how the apart worker's NCCL result joins the main worker's libs result.

#include "selftest/libs_apart.hpp"

#include <doctest/doctest.h>

using namespace cudadiag;

namespace {

selftest::WorkerConfig device_config() {
  selftest::WorkerConfig config;
  config.device = 0;
  config.tests = {"ptx", "libs", "jit"};
  config.libraries = {{"cublasLt", "/lib/libcublasLt.so.13"}, {"nccl", "/lib/libnccl.so.2"}};
  return config;
}

selftest::TestResult libs_result(selftest::TestStatus status, EvidenceValue libraries) {
  selftest::TestResult result;
  result.key = "libs";
  result.device = 0;
  result.status = status;
  result.wall_ms = 300;
  if (!libraries.is_null()) {
    result.details["libraries"] = std::move(libraries);
  }
  return result;
}

EvidenceValue record(const char* library, const char* status, EvidenceValue reason = nullptr) {
  return {{"library", library}, {"status", status}, {"reason", std::move(reason)}};
}

} // namespace

TEST_CASE("libs apart: a device running the libs test with NCCL found checks NCCL in a worker of its own") {
  auto config = device_config();
  const auto apart = selftest::split_libs_apart(config);
  REQUIRE(apart);
  CHECK(apart->tests == std::vector<std::string>{"libs"});
  CHECK(apart->libs_checked == std::vector<std::string>{"nccl"});
  CHECK(apart->device == config.device);
  CHECK(apart->libraries == config.libraries);
  CHECK(config.tests == std::vector<std::string>{"ptx", "libs", "jit"});
  CHECK(config.libs_checked ==
        std::vector<std::string>{"cublasLt", "cublas", "cufft", "curand", "cusparse", "cusolver", "cudnn"});
}

TEST_CASE("libs apart: no split without a device, without the libs test, without NCCL or with a subset") {
  auto no_device = device_config();
  no_device.device.reset();
  auto no_libs = device_config();
  no_libs.tests = {"ptx", "jit"};
  auto no_nccl = device_config();
  no_nccl.libraries.erase("nccl");
  auto subset = device_config();
  subset.libs_checked = {"cublas"};
  for (auto* config : {&no_device, &no_libs, &no_nccl, &subset}) {
    const auto before = config->libs_checked;
    CHECK_FALSE(selftest::split_libs_apart(*config));
    CHECK(config->libs_checked == before);
  }
}

TEST_CASE("libs apart: the merged result lists every library in the test's order and judges them all") {
  std::vector<selftest::TestResult> results{
      libs_result(cudadiag::selftest::TestStatus::pass,
                  Evidence::List({record("cublasLt", "ok"), record("cudnn", "ok")}))};
  results.front().wall_ms = 400;
  const std::vector<selftest::TestResult> apart{
      libs_result(cudadiag::selftest::TestStatus::pass, Evidence::List({record("nccl", "ok")}))};
  selftest::merge_libs_apart(results, apart);
  const auto& merged = results.front();
  CHECK(merged.status == cudadiag::selftest::TestStatus::pass);
  REQUIRE(merged.details.at("libraries").size() == 3);
  CHECK(merged.details.at("libraries").at(2).at("library") == "nccl");
  CHECK(merged.details.at("libraries").at(2).at("own_worker") == true);
  CHECK_FALSE(merged.details.at("libraries").at(0).record()->contains("own_worker"));
  CHECK(merged.wall_ms == 400);
}

TEST_CASE("libs apart: NCCL failing apart fails the libs test, naming NCCL") {
  std::vector<selftest::TestResult> results{
      libs_result(cudadiag::selftest::TestStatus::pass, Evidence::List({record("cublasLt", "ok")}))};
  const std::vector<selftest::TestResult> apart{libs_result(
      cudadiag::selftest::TestStatus::fail,
      Evidence::List({record("nccl", "fail", "ncclCommInitAll(1 device): unhandled cuda error")}))};
  selftest::merge_libs_apart(results, apart);
  CHECK(results.front().status == cudadiag::selftest::TestStatus::fail);
  CHECK(results.front().reason == "nccl: ncclCommInitAll(1 device): unhandled cuda error");
}

TEST_CASE("libs apart: an apart worker that crashed or hung becomes NCCL's failed record") {
  std::vector<selftest::TestResult> results{
      libs_result(cudadiag::selftest::TestStatus::pass, Evidence::List({record("cublasLt", "ok")}))};
  auto crashed = libs_result(cudadiag::selftest::TestStatus::error, nullptr);
  crashed.reason = "crashed: SIGSEGV";
  selftest::merge_libs_apart(results, {crashed});
  const auto& merged = results.front();
  CHECK(merged.status == cudadiag::selftest::TestStatus::fail);
  CHECK(merged.reason == "nccl: crashed: SIGSEGV");
  REQUIRE(merged.details.at("libraries").size() == 2);
  CHECK(merged.details.at("libraries").at(1).at("status") == "fail");
}

TEST_CASE("libs apart: a main worker that broke keeps its error, and NCCL's record is still shown") {
  auto broken = libs_result(cudadiag::selftest::TestStatus::error, nullptr);
  broken.reason = "timed out after 60 s (the worker was killed)";
  std::vector<selftest::TestResult> results{broken};
  selftest::merge_libs_apart(
      results, {libs_result(cudadiag::selftest::TestStatus::pass, Evidence::List({record("nccl", "ok")}))});
  CHECK(results.front().status == cudadiag::selftest::TestStatus::error);
  CHECK(results.front().reason == "timed out after 60 s (the worker was killed)");
  CHECK(results.front().details.at("libraries").size() == 1);
}

TEST_CASE("libs apart: only skips on both sides make a skip") {
  std::vector<selftest::TestResult> results{libs_result(
      cudadiag::selftest::TestStatus::skip, Evidence::List({record("cublasLt", "skip", "not found")}))};
  selftest::merge_libs_apart(results, {libs_result(cudadiag::selftest::TestStatus::skip,
                                                   Evidence::List({record("nccl", "skip", "not found")}))});
  CHECK(results.front().status == cudadiag::selftest::TestStatus::skip);
  CHECK(results.front().reason == "no math library ran (cublasLt: not found; nccl: not found)");
}
