#pragma once
// The libs test split over two workers of one device (the parent side). NCCL's check spends most
// of a second of CPU in its communicator setup (topology, bootstrap, proxy thread) and almost no
// GPU: in the device's main worker it was the self-test's critical path. It runs in a worker
// process of its own, started beside the main one, so a crash or hang in NCCL is still blamed on
// the libs test alone, and the two results are merged into the one `libs` result the report shows.

#include "selftest/selftest.hpp"
#include "selftest/test_context.hpp"

#include <optional>
#include <string_view>
#include <vector>

namespace cudadiag::selftest {

// The library checked apart from the others.
inline constexpr std::string_view k_library_checked_apart = "nccl";

// When `config` runs the libs test on a device and discovery found NCCL: the apart worker's
// configuration (the libs test, NCCL only), and `config` is changed to check the others. nullopt,
// and `config` unchanged, otherwise (no device, no libs test, no NCCL, or a subset already chosen).
std::optional<WorkerConfig> split_libs_apart(WorkerConfig& config);

// Merges the apart worker's `libs` result into the main worker's (in `results`): the libraries'
// records in the test's order, the verdict over all of them, the longer wall time. An apart
// result without records (its worker crashed, hung or failed before the test) becomes NCCL's
// record with that status and reason.
void merge_libs_apart(std::vector<TestResult>& results, const std::vector<TestResult>& apart);

} // namespace cudadiag::selftest
