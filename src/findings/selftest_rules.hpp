#pragma once
// Findings from the GPU self-test: selftest.failed (a test failed or broke), selftest.slow (a
// benchmark below half of its expected figure; see selftest/score.hpp for "expected"),
// gpu.pcie_degraded (the pcie test's link below its max gen/width, or a pinned copy under 70% of
// the link's expected rate), gpu.memory_errors (the memory test read wrong words back, or NVML's
// ECC / remapped-row counters rose during it) and gpu.throttled (a benchmark under 95% of expected
// while NVML reported a slowdown reason: power cap, thermal, HW slowdown), and gpu.busy (another
// process used the GPU while the tests ran: named, with the figures it spoiled; those figures are
// not turned into selftest.slow or gpu.throttled). gpu.busy's severity: info interactively, a
// warning in the ci and fleet contexts, an error with --exclusive (gpu_busy_severity).

#include "findings/findings.hpp"
#include "selftest/selftest.hpp"

#include <vector>

namespace cudadiag::findings {

inline constexpr double k_slow_ratio = 0.5;
inline constexpr double k_throttled_ratio = 0.95;

// How loud gpu.busy is for a run in `context`, with or without --exclusive.
Severity gpu_busy_severity(RunContext context, bool exclusive);

std::vector<Finding> evaluate_selftest(const selftest::SelfTestRun& run);

} // namespace cudadiag::findings
