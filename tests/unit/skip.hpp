#pragma once
// Honest skips for doctest cases whose precondition is missing on this machine (a real CUDA
// library, ldconfig, a user to switch to): end the case with CUDADIAG_SKIP(why) instead of
// returning, so it is never counted as passed.
//
// Contract: the case's output says "SKIPPED: why". When every test case that one run of the test
// binary executed was skipped, the binary exits 77 instead of 0; the ctest entries (one test case
// each, tests/CMakeLists.txt) declare SKIP_RETURN_CODE 77, so ctest's summary counts them as
// skipped. A run of many cases lists the skipped ones at the end. A skip never hides a failure: a
// check that failed before the skip still fails the case and the run. Call it before the checks
// that need the precondition, and not inside a SUBCASE (the whole case counts as skipped).
// A run whose filters select no test case at all exits 1 (a ctest entry that runs nothing is broken).

#include <doctest/doctest.h>

#include <sstream>
#include <string>

namespace cudadiag::testing {

// Marks the running test case as skipped for `why`, reported at file:line; CUDADIAG_SKIP calls it
// and returns.
void skip_current_case(const std::string& why, const char* file, int line);

} // namespace cudadiag::testing

// Usage: CUDADIAG_SKIP("no " << path << " here"); — streams like doctest's MESSAGE, then returns.
#define CUDADIAG_SKIP(...)                                                                                   \
  do {                                                                                                       \
    std::ostringstream cudadiag_skip_why_;                                                                   \
    cudadiag_skip_why_ << __VA_ARGS__;                                                                       \
    ::cudadiag::testing::skip_current_case(cudadiag_skip_why_.str(), __FILE__, __LINE__);                    \
    return;                                                                                                  \
  } while (false)
