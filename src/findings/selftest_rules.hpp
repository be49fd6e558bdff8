#pragma once
// Findings from the GPU self-test: selftest.failed (a test failed or broke) and selftest.slow (a
// benchmark below half of its expected figure; see selftest/score.hpp for "expected").

#include "findings/findings.hpp"
#include "selftest/selftest.hpp"

#include <vector>

namespace cudadiag::findings {

inline constexpr double k_slow_ratio = 0.5;

std::vector<Finding> evaluate_selftest(const selftest::SelfTestRun& run);

} // namespace cudadiag::findings
