#pragma once
// The parent's loop over self-test workers for one device (see selftest.cpp): starts a worker for
// the tests still to run, collects their records, and when a worker dies inside a test (crash,
// deadline, protocol error) records that test as "error" and starts a fresh worker for the rest.

#include "core/environment.hpp"
#include "selftest/selftest.hpp"
#include "selftest/test_context.hpp"

#include <mutex>
#include <vector>

namespace cudadiag::selftest {

// Results in the order the workers reported them (jit last). `progress_lock` serialises
// options.progress between devices. Never throws for a worker that misbehaves.
std::vector<TestResult> run_in_workers(WorkerConfig config, const SelfTestOptions& options,
                                       const Environment& env, std::mutex& progress_lock);

} // namespace cudadiag::selftest
