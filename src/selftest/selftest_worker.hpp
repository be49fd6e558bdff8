#pragma once
// The child side of the self-test (see selftest_worker.cpp) and the per-test deadlines both sides use.

#include "selftest/selftest.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <string_view>

namespace cudadiag::selftest {

// How long a test may run before the parent kills its worker.
std::chrono::milliseconds test_timeout(std::string_view key, Level level);

// Runs the tests named in the JSON configuration (see WorkerConfig) with the driver at
// `libcuda_path`; sends one record per test and returns the worker's summary. Throws only for a
// malformed configuration.
nlohmann::json run_selftest_worker(const std::string& libcuda_path, const std::string& config_text);

} // namespace cudadiag::selftest
