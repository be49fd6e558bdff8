// The health tests' arithmetic (selftest/health.hpp) and NVML reader (selftest/nvml_health.hpp) on
// CPU, with the fake NVML (tests/fixtures/fake_nvml.c): a x8 link, an active power cap and rising
// ECC counters each end in their finding through the same functions the worker uses.

#include "findings/selftest_rules.hpp"
#include "selftest/health.hpp"
#include "selftest/nvml_health.hpp"
#include "selftest/score.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <thread>

using namespace cudadiag;
using selftest::TestResult;

namespace {

// The fake NVML in `mode`, set through its test hook (no environment change), reset afterwards.
class FakeNvmlMode {
public:
  explicit FakeNvmlMode(const char* mode) : m_handle(CUDADIAG_FAKE_NVML_LIB) {
    REQUIRE(m_handle.loaded());
    m_set_mode = m_handle.symbol<SetModeFn>("cudadiag_fake_nvml_set_mode");
    const bool hook_found = m_set_mode != nullptr;
    REQUIRE(hook_found);
    m_set_mode(mode);
  }
  ~FakeNvmlMode() { m_set_mode(nullptr); }
  FakeNvmlMode(const FakeNvmlMode&) = delete;
  FakeNvmlMode& operator=(const FakeNvmlMode&) = delete;

private:
  using SetModeFn = void (*)(const char*);
  cuda_api::DlHandle m_handle;
  SetModeFn m_set_mode = nullptr;
};

std::vector<findings::Finding> with_id(const std::vector<findings::Finding>& all, std::string_view id) {
  std::vector<findings::Finding> out;
  std::copy_if(all.begin(), all.end(), std::back_inserter(out), [id](const auto& f) { return f.id == id; });
  return out;
}

selftest::SelfTestRun run_of(std::vector<TestResult> tests) {
  selftest::SelfTestRun run;
  run.ran = true;
  run.level = selftest::Level::full;
  run.tests = std::move(tests);
  run.score = selftest::score(run.tests, {}, run.level);
  return run;
}

TestResult test_result(const std::string& key) {
  TestResult result;
  result.key = key;
  result.device = 0;
  result.status = cudadiag::selftest::TestStatus::pass;
  return result;
}

// The pcie test's result for these figures over the link the fake NVML reports (pcie_test.cpp).
TestResult pcie_result(const selftest::NvmlDevice& device, double h2d, double d2h) {
  auto result = test_result("pcie");
  const auto link = device.link();
  const auto verdict = selftest::judge_pcie(link, h2d, d2h);
  result.metrics = {{"h2d_gbps", h2d, "GB/s"}, {"d2h_gbps", d2h, "GB/s"}};
  if (verdict.expected_max_gbps > 0) {
    result.metrics.push_back({"h2d_expected_gbps", verdict.expected_max_gbps, "GB/s"});
    result.metrics.push_back({"d2h_expected_gbps", verdict.expected_max_gbps, "GB/s"});
  }
  result.pcie = selftest::PcieFacts{link, verdict};
  return result;
}

} // namespace

TEST_CASE("selftest health: PCIe raw rates per generation and width, with their encodings") {
  CHECK(selftest::pcie_raw_gbps(5, 16) == doctest::Approx(63.015).epsilon(0.001));
  CHECK(selftest::pcie_raw_gbps(4, 16) == doctest::Approx(31.508).epsilon(0.001));
  CHECK(selftest::pcie_raw_gbps(3, 16) == doctest::Approx(15.754).epsilon(0.001));
  CHECK(selftest::pcie_raw_gbps(2, 16) == doctest::Approx(8.0));
  CHECK(selftest::pcie_raw_gbps(1, 1) == doctest::Approx(0.25));
  CHECK(selftest::pcie_raw_gbps(6, 16) == doctest::Approx(121.0));
  CHECK(selftest::pcie_raw_gbps(5, 8) == doctest::Approx(selftest::pcie_raw_gbps(5, 16) / 2));
  CHECK(selftest::pcie_raw_gbps(7, 16) == 0);
  CHECK(selftest::pcie_raw_gbps(5, 0) == 0);
  // The H200 host's pinned copies (55.5 / 55.3 GB/s) are at the expected rate of gen5 x16.
  CHECK(selftest::pcie_raw_gbps(5, 16) * selftest::k_pcie_efficiency == doctest::Approx(55.45).epsilon(0.01));
}

TEST_CASE("selftest health: a healthy link passes, a x8 or gen3 link or a slow copy is named") {
  selftest::PcieLink link{"00000000:19:00.0", 5, 5, 16, 16};
  auto verdict = selftest::judge_pcie(link, 55.5, 55.3);
  CHECK_FALSE(verdict.link_below_max);
  CHECK_FALSE(verdict.slow);
  CHECK(verdict.problem.empty());

  link.width_current = 8;
  verdict = selftest::judge_pcie(link, 27.7, 27.6);
  CHECK(verdict.link_below_max);
  CHECK_FALSE(verdict.slow); // at the rate of a x8 link
  CHECK(verdict.problem == "the PCIe link at 00000000:19:00.0 runs at gen5 x8, below its max gen5 x16");
  CHECK(verdict.expected_current_gbps == doctest::Approx(verdict.expected_max_gbps / 2));

  link = {"00000000:19:00.0", 3, 5, 16, 16};
  verdict = selftest::judge_pcie(link, 13.0, 13.1);
  CHECK(verdict.problem.find("gen3 x16, below its max gen5 x16") != std::string::npos);

  link = {"00000000:19:00.0", 5, 5, 16, 16};
  verdict = selftest::judge_pcie(link, 30.0, 55.0); // under 70% of 55.5
  CHECK(verdict.slow);
  CHECK(verdict.problem.find("pinned H2D 30.0 GB/s is under 70%") != std::string::npos);
  CHECK(verdict.problem.find("D2H") == std::string::npos);

  verdict = selftest::judge_pcie(selftest::PcieLink{}, 1.0, 1.0); // NVML said nothing: no judgement
  CHECK(verdict.problem.empty());
  CHECK(verdict.expected_current_gbps == 0);
}

TEST_CASE("selftest health: FP32 FMA per clock per SM by architecture") {
  CHECK(selftest::fma_per_clock_per_sm(9, 0) == 128);  // Hopper
  CHECK(selftest::fma_per_clock_per_sm(8, 0) == 64);   // A100
  CHECK(selftest::fma_per_clock_per_sm(8, 6) == 128);  // GA10x
  CHECK(selftest::fma_per_clock_per_sm(8, 9) == 128);  // Ada
  CHECK(selftest::fma_per_clock_per_sm(7, 0) == 64);   // Volta
  CHECK(selftest::fma_per_clock_per_sm(10, 0) == 128); // Blackwell
  CHECK(selftest::fma_per_clock_per_sm(6, 0) == 64);
  CHECK(selftest::fma_per_clock_per_sm(6, 1) == 128);
  CHECK(selftest::fma_per_clock_per_sm(3, 5) == 0);
  // H200: 132 SMs x 1980 MHz x 128 x 2 FLOP = 66.9 TFLOP/s.
  CHECK(132 * 1980e6 * selftest::fma_per_clock_per_sm(9, 0) * 2 / 1e12 ==
        doctest::Approx(66.9).epsilon(0.001));
}

TEST_CASE("selftest health: slowdown reasons and the summary of clock samples") {
  CHECK(selftest::slowdown_reason_names(0x1).empty()); // idle is not a slowdown
  CHECK(selftest::slowdown_reason_names(0x45) ==
        std::vector<std::string>{"sw_power_cap", "hw_thermal_slowdown"});
  CHECK(selftest::slowdown_reason_names(0x8 | 0x80) ==
        std::vector<std::string>{"hw_slowdown", "hw_power_brake_slowdown"});
  CHECK(selftest::summarize_samples({}) == selftest::ClockSummary{});
  CHECK(selftest::clocks_evidence(selftest::summarize_samples({})) == Evidence{{"samples", 0}});
  std::vector<selftest::ClockSample> samples{{0, 1980, 3201, 500000, 40, 0x1},
                                             {10, 1500, 3201, 700000, 60, 0x4},
                                             {20, 1700, std::nullopt, 650000, 55, 0x0}};
  const auto summary = selftest::summarize_samples(samples);
  CHECK(summary.samples == 3);
  CHECK(summary.sm_mhz == selftest::Spread{1500, 1700, 1980});
  CHECK(summary.mem_mhz == selftest::Spread{3201, 3201, 3201});
  CHECK(summary.power_w_max == doctest::Approx(700.0));
  CHECK(summary.temperature_c_max == 60U);
  CHECK(summary.reasons_seen == std::vector<std::string>{"gpu_idle", "sw_power_cap"});
  CHECK(summary.slowdown_reasons == std::vector<std::string>{"sw_power_cap"});
  const auto rendered = selftest::clocks_evidence(summary);
  CHECK(rendered.at("sm_mhz") == EvidenceValue{{"min", 1500}, {"median", 1700}, {"max", 1980}});
  CHECK(rendered.at("mem_mhz").at("max") == 3201);
  CHECK(rendered.at("slowdown_reasons") == EvidenceValue(EvidenceValue::List{"sw_power_cap"}));
  samples = {{0, std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt}};
  CHECK_FALSE(selftest::summarize_samples(samples).slowdown_reasons.has_value()); // unknown, not "none"
  CHECK(selftest::clocks_evidence(selftest::summarize_samples(samples)).at("slowdown_reasons").is_null());
}

TEST_CASE("selftest health: the worker limit comes from the CPU count unless configured") {
  CHECK(selftest::worker_limit(std::nullopt, 16) == 8);
  CHECK(selftest::worker_limit(std::nullopt, 128) == 64);
  CHECK(selftest::worker_limit(std::nullopt, 1) == 1);
  CHECK(selftest::worker_limit(3U, 128) == 3);
  CHECK(selftest::worker_limit(0U, 128) == 1);
  CHECK(selftest::usable_cpus() >= 1);
}

TEST_CASE(
    "selftest health: a fake NVML's x8 link is a gpu.pcie_degraded finding naming both links and the slot") {
  const FakeNvmlMode mode("link:5x8");
  auto opened = selftest::NvmlHealth::open(CUDADIAG_FAKE_NVML_LIB);
  REQUIRE_MESSAGE(opened, (opened ? std::string() : opened.error().message));
  const auto nvml = std::move(*opened);
  const auto device = nvml->device("0000:19:00.0");
  REQUIRE_MESSAGE(device.has_value(), (device ? std::string() : device.error().message));
  const auto link = device->link();
  CHECK(link.gen_current == 5U);
  CHECK(link.width_current == 8U);
  CHECK(link.width_max == 16U);

  const auto found =
      with_id(findings::evaluate_selftest(run_of({pcie_result(*device, 27.6, 27.5)})), "gpu.pcie_degraded");
  REQUIRE(found.size() == 1);
  CHECK(found[0].severity == findings::Severity::warning);
  CHECK(found[0].message == "GPU 0: the PCIe link at 0000:19:00.0 runs at gen5 x8, below its max gen5 x16");
  CHECK(found[0].evidence.at("link").at("width_current") == 8);
  // A x8 link also lowers the score: expected is what the slot gives at its max gen x width.
  const auto run = run_of({pcie_result(*device, 27.6, 27.5)});
  REQUIRE(run.score.value.has_value());
  CHECK(*run.score.value == doctest::Approx(49.7).epsilon(0.01));
}

TEST_CASE(
    "selftest health: a fake NVML's gen5 x16 link at the H200's rates gives no finding and scores 100") {
  const FakeNvmlMode mode("link:5x16");
  auto opened = selftest::NvmlHealth::open(CUDADIAG_FAKE_NVML_LIB);
  REQUIRE(opened);
  const auto nvml = std::move(*opened);
  const auto device = nvml->device("00000000:19:00.0");
  REQUIRE(device.has_value());
  const auto run = run_of({pcie_result(*device, 55.5, 55.3)});
  CHECK(with_id(findings::evaluate_selftest(run), "gpu.pcie_degraded").empty());
  REQUIRE(run.score.value.has_value());
  CHECK(*run.score.value == doctest::Approx(99.9).epsilon(0.002));
  const auto unknown = nvml->device("0000:3b:00.0");
  REQUIRE_FALSE(unknown.has_value());
  CHECK(unknown.error().message.find("0000:3b:00.0") != std::string::npos);
}

TEST_CASE(
    "selftest health: a fake NVML's active power cap during a slow benchmark is a gpu.throttled finding") {
  const FakeNvmlMode mode("reasons:0x4");
  auto opened = selftest::NvmlHealth::open(CUDADIAG_FAKE_NVML_LIB);
  REQUIRE(opened);
  const auto nvml = std::move(*opened);
  const auto device = nvml->device("0000:19:00.0");
  REQUIRE(device.has_value());
  CHECK(device->max_sm_clock_mhz() == 1980U);
  CHECK(device->power_limit_mw() == 700000U);

  auto compute = test_result("compute");
  {
    selftest::ClockSampler sampler(*device, std::chrono::milliseconds(2));
    // A benchmark of at least 20 ms, long enough for two samples even when a loaded machine starts
    // the sampler's thread late (CI once saw one sample in a plain 20 ms sleep).
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    while (sampler.taken() < 2 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    compute.clocks = selftest::summarize_samples(sampler.stop());
  }
  REQUIRE(compute.clocks.has_value());
  CHECK(compute.clocks->samples >= 2);
  REQUIRE(compute.clocks->sm_mhz.has_value());
  CHECK(compute.clocks->sm_mhz->max == 1980U);
  CHECK(compute.clocks->power_w_max.value_or(0) == doctest::Approx(450.0));
  compute.metrics = {{"fp32_tflops", 55.0, "TFLOP/s"}, {"fp32_expected_tflops", 66.9, "TFLOP/s"}};
  auto findings_seen = findings::evaluate_selftest(run_of({compute}));
  auto throttled = with_id(findings_seen, "gpu.throttled");
  REQUIRE(throttled.size() == 1);
  CHECK(throttled[0].severity == findings::Severity::warning);
  CHECK(throttled[0].message.find("compute.fp32_tflops on GPU 0 reached 82% of expected") !=
        std::string::npos);
  CHECK(throttled[0].message.find("while the GPU reported sw_power_cap") != std::string::npos);
  CHECK(throttled[0].evidence.at("reasons") ==
        cudadiag::EvidenceValue(cudadiag::EvidenceValue::List{"sw_power_cap"}));

  // At target, an active reason is no finding; below target without one, neither.
  compute.metrics = {{"fp32_tflops", 66.0, "TFLOP/s"}, {"fp32_expected_tflops", 66.9, "TFLOP/s"}};
  CHECK(with_id(findings::evaluate_selftest(run_of({compute})), "gpu.throttled").empty());
  compute.metrics = {{"fp32_tflops", 55.0, "TFLOP/s"}, {"fp32_expected_tflops", 66.9, "TFLOP/s"}};
  compute.clocks->slowdown_reasons = std::vector<std::string>();
  CHECK(with_id(findings::evaluate_selftest(run_of({compute})), "gpu.throttled").empty());
}

TEST_CASE(
    "selftest health: a fake NVML's new ECC errors during the memory test are a gpu.memory_errors error") {
  const FakeNvmlMode mode("ecc_rising");
  auto opened = selftest::NvmlHealth::open(CUDADIAG_FAKE_NVML_LIB);
  REQUIRE(opened);
  const auto nvml = std::move(*opened);
  const auto device = nvml->device("0000:19:00.0");
  REQUIRE(device.has_value());
  const auto before = device->memory_counters();
  const auto after = device->memory_counters();
  REQUIRE(before.ecc_uncorrected.has_value());
  CHECK(*after.ecc_uncorrected > *before.ecc_uncorrected);
  CHECK(after.remapped_uncorrectable == 0U);
  const auto rose = selftest::new_memory_errors(before, after);
  REQUIRE(rose.size() == 2);
  CHECK(rose[0] == "ecc_uncorrected +2");
  CHECK(rose[1] == "ecc_corrected +2");

  auto memory = test_result("memory");
  memory.status = cudadiag::selftest::TestStatus::fail;
  memory.memory = selftest::MemoryFacts{0, {}, before, after, rose};
  const auto found = with_id(findings::evaluate_selftest(run_of({memory})), "gpu.memory_errors");
  REQUIRE(found.size() == 1);
  CHECK(found[0].severity == findings::Severity::error);
  CHECK(found[0].message ==
        "GPU 0 memory: NVML counted new errors during it (ecc_uncorrected +2, ecc_corrected +2)");

  // Wrong words read back are the finding too, without NVML.
  memory.memory = selftest::MemoryFacts{3, {{"0x7f0000001000", "", ""}}, std::nullopt, std::nullopt, {}};
  const auto wrong = with_id(findings::evaluate_selftest(run_of({memory})), "gpu.memory_errors");
  REQUIRE(wrong.size() == 1);
  CHECK(wrong[0].message == "GPU 0 memory: 3 words read back wrong in the pattern test");

  // Steady counters: nothing new.
  const FakeNvmlMode quiet("");
  CHECK(selftest::new_memory_errors(device->memory_counters(), device->memory_counters()).empty());
}
