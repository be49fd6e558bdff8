// The threads' timeline of quick_check() calls: after W warm-up calls, K calls each print their spans
// (core/timeline.hpp: thread, start and end in microseconds from the call's start, what, detail)
// after a "## call K" line. bench/timeline_summary.py reads them: the stages' spans, how busy each
// thread was, what the longest tasks were. Needs a build configured with -DCUDADIAG_TIMELINE=ON.
//
//   bench_timeline [W=50] [K=5] > timeline.txt
//
// Exits 0 (figures for reading, not a pass/fail test).

#include "core/timeline.hpp"
#include "cudadiag/cudadiag.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  const int warm_up = argc > 1 ? std::max(0, std::atoi(argv[1])) : 50;
  const int calls = argc > 2 ? std::max(1, std::atoi(argv[2])) : 5;
  static_assert(cudadiag::timeline::enabled, "bench_timeline needs -DCUDADIAG_TIMELINE=ON");
  for (int i = 0; i < warm_up; ++i) {
    static_cast<void>(cudadiag::quick_check({}));
  }
  for (int call = 1; call <= calls; ++call) {
    cudadiag::Report report;
    cudadiag::timeline::clear();
    report = cudadiag::quick_check({});
    std::printf("## call %d\n", call);
    cudadiag::timeline::write(stdout);
  }
  return 0;
}
