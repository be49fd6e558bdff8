// The self-test's parent-side pieces that need no GPU: the score, the findings it yields, the
// record and configuration JSON the worker protocol carries, and the report's "selftest" object.

#include "findings/selftest_rules.hpp"
#include "report/selftest_json.hpp"
#include "selftest/score.hpp"
#include "selftest/selftest.hpp"
#include "selftest/selftest_codec.hpp"
#include "selftest/selftest_worker.hpp"
#include "selftest/test_context.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <map>

using namespace cudadiag;
using selftest::Level;
using selftest::TestResult;

namespace {

TestResult passed(const std::string& key, int device, std::vector<selftest::Metric> metrics) {
  TestResult result;
  result.key = key;
  result.device = device;
  result.status = cudadiag::selftest::TestStatus::pass;
  result.metrics = std::move(metrics);
  return result;
}

// A device list like the report's, with one H200-like GPU of the given peak.
std::vector<cudadiag::verify::Device> devices_with_peak(double peak) {
  cudadiag::verify::DriverDevice device;
  device.ordinal = 0;
  device.peak_bandwidth_gbps = peak;
  return {{device, std::nullopt}};
}

std::vector<TestResult> h200_full_run(double factor) {
  return {
      passed("ptx", 0, {{"copy_gbps", 4260.0 * factor, "GB/s"}}),
      passed("reduce", 0, {{"f32_gbps", 4620.0 * factor, "GB/s"}}),
      passed("sort", 0,
             {{"u32_gkeys_per_s", 42.4 * factor, "Gkeys/s"}, {"u64_gkeys_per_s", 16.3 * factor, "Gkeys/s"}}),
      passed("ipc", 0, {}), passed("green_ctx", 0, {})};
}

} // namespace

TEST_CASE("selftest score: the reference figures score 100, slower ones proportionally less") {
  const auto at_reference =
      selftest::score(h200_full_run(1.0), devices_with_peak(selftest::k_reference_peak_gbps), Level::full);
  REQUIRE(at_reference.value);
  CHECK(*at_reference.value == doctest::Approx(100.0));
  CHECK(at_reference.correctness_passed);
  CHECK(at_reference.components.size() == 4);

  const auto faster =
      selftest::score(h200_full_run(1.2), devices_with_peak(selftest::k_reference_peak_gbps), Level::full);
  CHECK(*faster.value == doctest::Approx(100.0)); // capped at 1 per benchmark

  const auto half =
      selftest::score(h200_full_run(0.5), devices_with_peak(selftest::k_reference_peak_gbps), Level::full);
  CHECK(*half.value == doctest::Approx(50.0));
}

TEST_CASE("selftest score: expectations scale with the device's peak bandwidth") {
  // A GPU with half the H200's bandwidth that reaches half the H200's figures is healthy.
  const auto scaled = selftest::score(h200_full_run(0.5),
                                      devices_with_peak(selftest::k_reference_peak_gbps / 2), Level::full);
  CHECK(*scaled.value == doctest::Approx(100.0));
  // Without a known peak nothing can be scored.
  const auto unknown = selftest::score(h200_full_run(1.0), {}, Level::full);
  CHECK_FALSE(unknown.value);
}

TEST_CASE("selftest score: a failed or broken test is a correctness gate: the device scores 0") {
  for (const auto status : {selftest::TestStatus::fail, selftest::TestStatus::error}) {
    auto tests = h200_full_run(1.0);
    tests[3].status = status;
    const auto gated =
        selftest::score(tests, devices_with_peak(selftest::k_reference_peak_gbps), Level::full);
    CHECK_FALSE(gated.correctness_passed);
    REQUIRE(gated.value);
    CHECK(*gated.value == 0.0);
  }
  // Skips are not failures.
  auto tests = h200_full_run(1.0);
  tests[3].status = cudadiag::selftest::TestStatus::skip;
  CHECK(selftest::score(tests, devices_with_peak(selftest::k_reference_peak_gbps), Level::full)
            .correctness_passed);
}

TEST_CASE("selftest findings: failures become selftest.failed, benchmarks under half become selftest.slow") {
  selftest::SelfTestRun run;
  run.ran = true;
  run.level = Level::full;
  run.tests = h200_full_run(0.4);
  run.tests[4].status = cudadiag::selftest::TestStatus::fail;
  run.tests[4].reason = "the two partitions shared 8 SM(s)";
  run.score =
      selftest::score(h200_full_run(0.4), devices_with_peak(selftest::k_reference_peak_gbps), Level::full);
  const auto found = findings::evaluate_selftest(run);
  const auto failed =
      std::count_if(found.begin(), found.end(), [](const auto& f) { return f.id == "selftest.failed"; });
  const auto slow =
      std::count_if(found.begin(), found.end(), [](const auto& f) { return f.id == "selftest.slow"; });
  CHECK(failed == 1);
  CHECK(slow == 4);
  const auto it =
      std::find_if(found.begin(), found.end(), [](const auto& f) { return f.id == "selftest.failed"; });
  CHECK(it->severity == findings::Severity::error);
  CHECK(it->message.find("green_ctx") != std::string::npos);
  CHECK(it->message.find("shared 8 SM") != std::string::npos);
  CHECK(it->evidence.at("device") == 0);

  selftest::SelfTestRun healthy;
  healthy.ran = true;
  healthy.tests = h200_full_run(0.9);
  healthy.score =
      selftest::score(healthy.tests, devices_with_peak(selftest::k_reference_peak_gbps), Level::full);
  CHECK(findings::evaluate_selftest(healthy).empty());
}

TEST_CASE("selftest records: a test result survives the worker protocol unchanged") {
  TestResult result =
      passed("sort", 1, {{"u32_gkeys_per_s", 41.5, "Gkeys/s"}, {"u64_gkeys_per_s", 16.0, "Gkeys/s"}});
  result.primary = result.metrics.front();
  result.description = "radix sort";
  result.reason = "partly skipped: u64 needs more memory";
  result.wall_ms = 12.5;
  result.details = {{"u32", {{"count", 268435456}}}};
  const auto back = selftest::decode_result(selftest::encode_result(result));
  CHECK(back.key == "sort");
  CHECK(back.device == 1);
  CHECK(back.status == cudadiag::selftest::TestStatus::pass);
  CHECK(back.reason == result.reason);
  CHECK(back.wall_ms == 12.5);
  REQUIRE(back.metrics.size() == 2);
  CHECK(back.metrics[1].name == "u64_gkeys_per_s");
  CHECK(back.metrics[1].unit == "Gkeys/s");
  REQUIRE(back.primary);
  CHECK(back.primary->value == 41.5);
  CHECK(back.details.at("u32").at("count") == 268435456);

  // A hostile or broken record never throws; what is missing becomes an error status.
  const auto broken = selftest::decode_result(R"({"key": 7, "metrics": "x"})");
  CHECK(broken.status == cudadiag::selftest::TestStatus::error);
  CHECK(broken.metrics.empty());
  CHECK(selftest::decode_result("[1]").status == cudadiag::selftest::TestStatus::error);
  CHECK(selftest::decode_result("not json").status == cudadiag::selftest::TestStatus::error);
}

TEST_CASE(
    "selftest records: every field of a result, typed facts and evidence, survives the worker protocol") {
  TestResult result = passed("memory", 2, {{"tested_gib", 120.5, "GiB"}, {"wrong_words", 1, "count"}});
  result.primary = result.metrics.front();
  result.description = "memory patterns";
  result.status = cudadiag::selftest::TestStatus::fail;
  result.reason = "1 words read back wrong";
  result.wall_ms = 812.25;
  result.pcie =
      selftest::PcieFacts{{"00000000:19:00.0", 4U, 5U, 8U, 16U}, {31.5, 63.0, true, true, "x8 of x16"}};
  selftest::MemoryCounters before{1U, 2U, 3U, 4U, false, true};
  selftest::MemoryCounters after{std::uint64_t{1} << 40U, std::nullopt, std::nullopt, 5U, true, std::nullopt};
  result.memory =
      selftest::MemoryFacts{1, {{"0x7f0000001000", "0x0", "0x1"}}, before, after, {"ecc_corrected +1"}};
  result.clocks = selftest::ClockSummary{7,
                                         selftest::Spread{1500, 1700, 1980},
                                         std::nullopt,
                                         451.5,
                                         61U,
                                         std::vector<std::string>{"gpu_idle"},
                                         std::vector<std::string>{}};
  result.busy = selftest::BusyFacts{
      true,
      "",
      {{4242, "python3", std::uint64_t{10} << 30U, true, false}, {4300, "", std::nullopt, false, true}},
      37U};
  result.details = {
      {"memory", {{"bytes_tested", std::uint64_t{1} << 37U}, {"seed", std::uint64_t{18446744073709551615U}}}},
      {"negative", -3},
      {"flag", false},
      {"none", nullptr},
      {"list", Evidence::List{"a", 1.25, Evidence{{"k", "v"}}}}};
  const auto back = selftest::decode_result(selftest::encode_result(result));
  CHECK(back.key == result.key);
  CHECK(back.device == result.device);
  CHECK(back.description == result.description);
  CHECK(back.status == result.status);
  CHECK(back.reason == result.reason);
  CHECK(back.wall_ms == result.wall_ms);
  REQUIRE(back.metrics.size() == result.metrics.size());
  for (std::size_t i = 0; i < back.metrics.size(); ++i) {
    CHECK(back.metrics[i].name == result.metrics[i].name);
    CHECK(back.metrics[i].value == result.metrics[i].value);
    CHECK(back.metrics[i].unit == result.metrics[i].unit);
  }
  REQUIRE(back.primary);
  CHECK(back.primary->name == result.primary->name);
  CHECK(back.pcie == result.pcie);
  CHECK(back.memory == result.memory);
  CHECK(back.clocks == result.clocks);
  CHECK(back.busy == result.busy);
  CHECK(back.details == result.details);
  // A clock summary without samples, and facts that are absent, stay so.
  result.clocks = selftest::ClockSummary{};
  result.pcie.reset();
  result.memory.reset();
  result.busy =
      selftest::BusyFacts{false, "nvmlDeviceGetComputeRunningProcesses_v3: NVML_ERROR_NOT_SUPPORTED", {}, {}};
  const auto sparse = selftest::decode_result(selftest::encode_result(result));
  CHECK(sparse.busy == result.busy);
  CHECK(sparse.clocks == selftest::ClockSummary{});
  CHECK_FALSE(sparse.pcie.has_value());
  CHECK_FALSE(sparse.memory.has_value());
}

TEST_CASE("selftest records: the checkpoint test's facts survive the worker protocol and render as details") {
  TestResult result = passed("checkpoint", 0, {{"checkpoint_restore_gibps", 3.5, "GiB/s"}});
  result.status = cudadiag::selftest::TestStatus::fail;
  selftest::CheckpointFacts facts;
  facts.outcome = selftest::CheckpointOutcome::failed;
  facts.step = "lock";
  facts.code = 909;
  facts.driver_words = "the operation timed out";
  facts.detail = "lock returned CUDA_ERROR_TIMEOUT (909) after 5001 ms";
  facts.driver_version = 13000;
  facts.persistence_mode = false;
  facts.target_ended_checkpointed = true;
  result.checkpoint = facts;
  result.details = {{"checkpoint", {{"extra", 1}}}};
  const auto back = selftest::decode_result(selftest::encode_result(result));
  CHECK(back.checkpoint == result.checkpoint);
  const auto details = selftest::details_evidence(back);
  CHECK(details.at("checkpoint").at("outcome") == "failed");
  CHECK(details.at("checkpoint").at("step") == "lock");
  CHECK(details.at("checkpoint").at("extra") == 1);
  // Every outcome has a name that reads back; anything else is not an outcome.
  for (const auto outcome : {selftest::CheckpointOutcome::restored, selftest::CheckpointOutcome::unsupported,
                             selftest::CheckpointOutcome::failed, selftest::CheckpointOutcome::corrupt}) {
    CHECK(selftest::checkpoint_outcome_from(selftest::checkpoint_outcome_name(outcome)) == outcome);
  }
  CHECK_FALSE(selftest::checkpoint_outcome_from("RESTORED").has_value());
  result.checkpoint.reset();
  CHECK_FALSE(selftest::decode_result(selftest::encode_result(result)).checkpoint.has_value());
}

TEST_CASE(
    "selftest findings: the checkpoint test's outcome is one checkpoint finding, never selftest.failed") {
  const auto run_with = [](selftest::CheckpointOutcome outcome, selftest::TestStatus status) {
    selftest::SelfTestRun run;
    run.ran = true;
    auto test = passed("checkpoint", 0, {});
    test.status = status;
    test.reason = "why";
    selftest::CheckpointFacts facts;
    facts.outcome = outcome;
    facts.step = outcome == selftest::CheckpointOutcome::unsupported ? "gate" : "restore";
    facts.detail = "restore returned CUDA_ERROR_OUT_OF_MEMORY (2)";
    test.checkpoint = facts;
    run.tests = {test};
    return findings::evaluate_selftest(run);
  };
  const auto failed = run_with(selftest::CheckpointOutcome::failed, selftest::TestStatus::fail);
  REQUIRE(failed.size() == 1);
  CHECK(failed[0].id == "checkpoint.failed");
  CHECK(failed[0].severity == findings::Severity::warning);
  CHECK(failed[0].message.find("'restore'") != std::string::npos);
  CHECK(failed[0].message.find("CRIU") != std::string::npos);
  CHECK(failed[0].evidence.at("step") == "restore");
  const auto corrupt = run_with(selftest::CheckpointOutcome::corrupt, selftest::TestStatus::fail);
  REQUIRE(corrupt.size() == 1);
  CHECK(corrupt[0].id == "checkpoint.corrupt");
  CHECK(corrupt[0].severity == findings::Severity::error);
  const auto unsupported = run_with(selftest::CheckpointOutcome::unsupported, selftest::TestStatus::skip);
  REQUIRE(unsupported.size() == 1);
  CHECK(unsupported[0].id == "checkpoint.unsupported");
  CHECK(unsupported[0].severity == findings::Severity::info);
  CHECK(unsupported[0].message.find("R570 (CUDA 12.8)") != std::string::npos);
  CHECK(run_with(selftest::CheckpointOutcome::restored, selftest::TestStatus::pass).empty());
  // A failed cycle is not a correctness gate of the score; wrong data after a restore is.
  const auto scored = [](selftest::CheckpointOutcome outcome) {
    auto test = passed("checkpoint", 0, {});
    test.status = cudadiag::selftest::TestStatus::fail;
    test.checkpoint = selftest::CheckpointFacts{};
    test.checkpoint->outcome = outcome;
    return selftest::score({test}, devices_with_peak(selftest::k_reference_peak_gbps), Level::full);
  };
  CHECK(scored(selftest::CheckpointOutcome::failed).correctness_passed);
  CHECK_FALSE(scored(selftest::CheckpointOutcome::corrupt).correctness_passed);
  // A test that broke (no facts: the worker died) is still selftest.failed.
  selftest::SelfTestRun broken;
  broken.ran = true;
  auto test = passed("checkpoint", 0, {});
  test.status = cudadiag::selftest::TestStatus::error;
  test.reason = "timed out";
  broken.tests = {test};
  const auto found = findings::evaluate_selftest(broken);
  REQUIRE(found.size() == 1);
  CHECK(found[0].id == "selftest.failed");
}

TEST_CASE("selftest config: the worker's instructions round-trip") {
  selftest::WorkerConfig config;
  config.device = 3;
  config.level = Level::full;
  config.tests = {"ptx", "green_ctx"};
  config.libcuda = "/usr/lib/x86_64-linux-gnu/libcuda.so.1";
  config.cccl_include = "/usr/local/cuda/include/cccl";
  config.libraries = {{"cublas", "/usr/local/cuda/lib64/libcublas.so.13"},
                      {"cublasLt", "/usr/local/cuda/lib64/libcublasLt.so.13"}};
  config.no_device_reason = "none";
  config.libs_checked = {"nccl"};
  config.nvrtc = "/usr/local/cuda/lib64/libnvrtc.so.13";
  config.nvjitlink = "/usr/local/cuda/lib64/libnvJitLink.so.13";
  config.module_path = "/usr/lib/cudadiag/libcudadiag_cub_selftest.so";
  config.module_missing_reason = "not built";
  config.executable = "/usr/bin/cudadiag";
  config.nvml = "/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1";
  config.device_arch = 90;
  config.session_pid = 31337;
  config.tests_named = true;
  const auto decoded = selftest::decode_config(selftest::encode_config(config));
  REQUIRE(decoded.has_value());
  const auto& back = *decoded;
  CHECK(back.no_device_reason == config.no_device_reason);
  CHECK(back.libs_checked == config.libs_checked);
  CHECK(back.nvrtc == config.nvrtc);
  CHECK(back.nvjitlink == config.nvjitlink);
  CHECK(back.module_path == config.module_path);
  CHECK(back.module_missing_reason == config.module_missing_reason);
  CHECK(back.executable == config.executable);
  CHECK(back.nvml == config.nvml);
  CHECK(back.device_arch == 90);
  CHECK(back.session_pid == 31337);
  CHECK(back.tests_named);
  CHECK_FALSE(selftest::decode_config("{}")->tests_named);
  CHECK(back.device == 3);
  CHECK(back.level == Level::full);
  CHECK(back.tests == config.tests);
  CHECK(back.libcuda == config.libcuda);
  CHECK(back.cccl_include == config.cccl_include);
  CHECK(back.libraries == config.libraries);
  REQUIRE(selftest::decode_config("{}").has_value());
  CHECK_FALSE(selftest::decode_config("{}")->device);
  CHECK(selftest::decode_config("{}")->libraries.empty());
  CHECK_FALSE(selftest::decode_config("[]").has_value());
  // A hostile value is dropped, not thrown on.
  const auto hostile =
      selftest::decode_config(R"({"libraries": {"cublas": 7, "cufft": "/x/libcufft.so.12"}})");
  REQUIRE(hostile.has_value());
  CHECK(hostile->libraries == std::map<std::string, std::string>{{"cufft", "/x/libcufft.so.12"}});
}

TEST_CASE("selftest score: the libs test's GEMM figures are held against the peaks it reports") {
  auto libs = passed("libs", 0,
                     {{"bf16_gemm_tflops", 749.0, "TFLOP/s"},
                      {"bf16_expected_tflops", 1070.0, "TFLOP/s"},
                      {"sgemm_tflops", 50.0, "TFLOP/s"},
                      {"sgemm_expected_tflops", 66.9, "TFLOP/s"}});
  const auto result =
      selftest::score({libs}, devices_with_peak(selftest::k_reference_peak_gbps), Level::quick);
  REQUIRE(result.components.size() == 2);
  CHECK(result.components[0].benchmark == "libs.bf16_gemm_tflops");
  CHECK(result.components[0].ratio == doctest::Approx(0.7));
  CHECK(result.components[1].benchmark == "libs.sgemm_tflops");
  REQUIRE(result.value);
  CHECK(*result.value == doctest::Approx(100.0 * std::sqrt(0.7 * 50.0 / 66.9)).epsilon(0.01));
  // Without a known peak (an architecture not in the table) the figure is reported, not scored.
  libs.metrics = {{"bf16_gemm_tflops", 300.0, "TFLOP/s"}};
  CHECK(selftest::score({libs}, devices_with_peak(selftest::k_reference_peak_gbps), Level::quick)
            .components.empty());
}

TEST_CASE("selftest catalog and deadlines: every test has a key, a description and a deadline") {
  const auto& catalog = selftest::test_catalog();
  std::vector<std::string_view> keys;
  for (const auto& info : catalog) {
    keys.push_back(info.key);
  }
  CHECK(keys == std::vector<std::string_view>{"jit", "ptx", "reduce", "sort", "pcie", "compute", "memory",
                                              "ipc", "green_ctx", "libs", "checkpoint"});
  for (const auto& info : catalog) {
    CHECK_FALSE(info.description.empty());
    CHECK(selftest::test_timeout(info.key, Level::quick).count() >= 30000);
    CHECK(selftest::test_timeout(info.key, Level::full) >= selftest::test_timeout(info.key, Level::quick));
  }
}

TEST_CASE("selftest json: null when not asked for, the reason when it could not run, the status otherwise") {
  selftest::SelfTestRun off;
  CHECK(report::selftest_to_json(off).is_null());

  selftest::SelfTestRun no_gpu;
  no_gpu.skipped_reason = "no GPU: cuInit returned CUDA_ERROR_NO_DEVICE (100)";
  const auto skipped = report::selftest_to_json(no_gpu);
  CHECK(skipped["ran"] == false);
  CHECK(skipped["status"] == "skip");
  CHECK(skipped["skipped_reason"] == no_gpu.skipped_reason);

  selftest::SelfTestRun ran;
  ran.ran = true;
  ran.tests = h200_full_run(1.0);
  CHECK(ran.status() == cudadiag::selftest::TestStatus::pass);
  ran.tests[0].status = cudadiag::selftest::TestStatus::error;
  CHECK(ran.status() == cudadiag::selftest::TestStatus::fail);
  const auto object = report::selftest_to_json(ran);
  CHECK(object["tests"].size() == 5);
  CHECK(object["score"].contains("correctness_passed"));
}
