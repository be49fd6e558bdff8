#pragma once
// The report's "selftest" object (docs/schema/report.schema.json): the run, each test's result with
// its details (selftest::details_evidence: the typed facts and the test's own evidence) and the score.

#include "selftest/score.hpp"
#include "selftest/selftest.hpp"

#include <nlohmann/json.hpp>

namespace cudadiag::report {

// Null when the self-test did not run and says no reason.
nlohmann::json selftest_to_json(const selftest::SelfTestRun& run);
nlohmann::json test_result_to_json(const selftest::TestResult& result);
nlohmann::json score_to_json(const selftest::Score& score);

} // namespace cudadiag::report
