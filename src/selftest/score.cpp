#include "selftest/score.hpp"

#include <algorithm>
#include <cmath>
#include <map>

namespace cudadiag::selftest {

const std::vector<BenchmarkReference>& benchmark_references() {
  // H200 (132 SMs, 4814.3 GB/s attribute peak), 2026-12-02. Full: CUB called directly at 2^30 (reduce)
  // and 2^28 (sort) elements, and the device-to-device copy; quick: the same at the quick sizes.
  // clang-format off
  static const std::vector<BenchmarkReference> references{
      {"ptx",    "copy_gbps",       4000.0, 4260.0},
      {"reduce", "f32_gbps",        4000.0, 4620.0},
      {"sort",   "u32_gkeys_per_s",   36.1,   42.4},
      {"sort",   "u64_gkeys_per_s",   14.5,   16.3},
      // Expected from the device itself: the link's max gen x width x 0.88 (pinned copies on the
      // H200: 55.5 / 55.3 GB/s of gen5 x16's 63.0), SMs x max SM clock x FMA per clock x 2.
      {"pcie",    "h2d_gbps",     0, 0, "h2d_expected_gbps"},
      {"pcie",    "d2h_gbps",     0, 0, "d2h_expected_gbps"},
      {"compute", "fp32_tflops",  0, 0, "fp32_expected_tflops"},
      // The libs test's GEMMs: cuBLASLt bf16 8192^3 and cuBLAS SGEMM 4096^3 against what a healthy
      // device reaches, SMs x max SM clock x FLOP/clock/SM x the share the H200 reached (selftest/libs.hpp).
      // The dense BF16 peak is 4096 FLOP/clock/SM on Hopper: 1070 TFLOP/s on an H200 at NVML's 1980 MHz
      // (NVIDIA's H200 datasheet states 989 dense, 1,979 with sparsity, at a lower clock).
      {"libs",    "bf16_gemm_tflops", 0, 0, "bf16_expected_tflops"},
      {"libs",    "sgemm_tflops",     0, 0, "sgemm_expected_tflops"},
  };
  // clang-format on
  return references;
}

namespace {

double device_peak(const std::vector<verify::Device>& devices, int ordinal) {
  for (const auto& device : devices) {
    if (device.driver && device.driver->ordinal == ordinal && device.driver->peak_bandwidth_gbps) {
      return *device.driver->peak_bandwidth_gbps;
    }
  }
  return 0;
}

const Metric* find_metric(const TestResult& test, std::string_view name) {
  for (const auto& metric : test.metrics) {
    if (metric.name == name) {
      return &metric;
    }
  }
  return nullptr;
}

} // namespace

Score score(const std::vector<TestResult>& tests, const std::vector<verify::Device>& devices, Level level) {
  Score result;
  std::map<int, std::vector<double>> ratios; // per device
  std::map<int, bool> gates;
  for (const auto& test : tests) {
    const int device = test.device.value_or(-1);
    // A checkpoint cycle that failed (not one that restored wrong data) says process snapshots do
    // not work here, not that the GPU computes wrongly: it is checkpoint.failed, not a correctness gate.
    const bool snapshot_only = test.checkpoint && test.checkpoint->outcome == CheckpointOutcome::failed;
    const bool broken =
        (test.status == TestStatus::fail || test.status == TestStatus::error) && !snapshot_only;
    gates[device] = gates.count(device) == 0 ? !broken : gates[device] && !broken;
    if (test.status != TestStatus::pass || !test.device) {
      continue;
    }
    const double peak = device_peak(devices, *test.device);
    for (const auto& reference : benchmark_references()) {
      const auto* metric = reference.test == test.key ? find_metric(test, reference.metric) : nullptr;
      if (metric == nullptr) {
        continue;
      }
      double expected = 0;
      if (!reference.expected_metric.empty()) {
        const auto* own = find_metric(test, reference.expected_metric);
        expected = own != nullptr ? own->value : 0;
      } else if (peak > 0) {
        expected = (level == Level::full ? reference.full : reference.quick) * peak / k_reference_peak_gbps;
      }
      if (expected <= 0) {
        continue;
      }
      const double ratio = metric->value / expected;
      // A figure taken while another process used the GPU measures the sharing, not the GPU.
      const bool busy = test.busy && test.busy->busy();
      if (busy) {
        ++result.busy_excluded;
      } else {
        ratios[*test.device].push_back(std::min(1.0, ratio));
      }
      result.components.push_back(
          ScoreComponent{*test.device, std::string(reference.test) + "." + std::string(reference.metric),
                         metric->value, expected, ratio, busy});
    }
  }
  std::optional<double> lowest;
  for (const auto& [device, passed] : gates) {
    if (!passed) {
      result.correctness_passed = false;
      lowest = 0.0;
      continue;
    }
    const auto found = ratios.find(device);
    if (found == ratios.end() || found->second.empty()) {
      continue;
    }
    double log_sum = 0;
    for (const double ratio : found->second) {
      log_sum += std::log(std::max(ratio, 1e-6));
    }
    const double value = 100.0 * std::exp(log_sum / static_cast<double>(found->second.size()));
    lowest = lowest ? std::min(*lowest, value) : value;
  }
  if (lowest) {
    result.value = std::round(*lowest * 10.0) / 10.0;
  }
  return result;
}

} // namespace cudadiag::selftest
