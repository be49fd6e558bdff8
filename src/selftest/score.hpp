#pragma once
// The self-test score (README.md, "Self-test score"). Per device: 0 when any test on it failed or
// broke (correctness gates come first); otherwise 100 x the geometric mean, over the benchmarks that
// ran, of min(1, measured / expected). `expected` is what a healthy H200 reaches (CUB and the copy
// kernel measured there, k_references) scaled by this device's attribute peak bandwidth over the
// H200's 4814.3 GB/s. A figure measured while another process used the GPU (the test's BusyFacts)
// is a component marked busy and left out of the mean. The overall score is the lowest device score.

#include "selftest/selftest.hpp"

#include <string_view>
#include <vector>

namespace cudadiag::selftest {

struct BenchmarkReference {
  std::string_view test;   // test key
  std::string_view metric; // metric name
  double quick;            // expected value on an H200 at the quick level
  double full;             // ... at the full level
  // When set, the expected value is this metric of the same test (what the test computed for this
  // device: the PCIe link's rate, SMs x clock x FMA/clock) and quick/full are unused.
  std::string_view expected_metric = {};
};

// The reference figures and the H200 peak they were measured against.
const std::vector<BenchmarkReference>& benchmark_references();
inline constexpr double k_reference_peak_gbps = 4814.3;

// `devices` is the report's merged device list (for each ordinal's peak_bandwidth_gbps).
Score score(const std::vector<TestResult>& tests, const std::vector<verify::Device>& devices, Level level);

} // namespace cudadiag::selftest
