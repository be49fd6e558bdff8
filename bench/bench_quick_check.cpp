// Times cudadiag::quick_check() in this process: the first (cold) call, then the median and 90th
// percentile of N more. Target (issue 52): median <= 1 ms (repeated calls answer the kept report).
//
//   bench_quick_check [N=200] [--component NAME]...
//
// Prints one line per figure; exits 0 (the figures are for reading, not a pass/fail test).

#include "cudadiag/cudadiag.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

double time_ms(const cudadiag::Options& options, cudadiag::Report& out) {
  out = {}; // the previous call's report is freed before the clock starts: the call is timed, not the
            // caller's cleanup
  const auto start = std::chrono::steady_clock::now();
  out = cudadiag::quick_check(options);
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

double percentile(std::vector<double> values, double fraction) {
  std::sort(values.begin(), values.end());
  const auto index = static_cast<std::size_t>(fraction * static_cast<double>(values.size() - 1) + 0.5);
  return values[index];
}

} // namespace

int main(int argc, char** argv) {
  int runs = 200;
  cudadiag::Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--component" && i + 1 < argc) {
      options.components.emplace_back(argv[++i]);
    } else {
      runs = std::max(1, std::atoi(argv[i]));
    }
  }
  cudadiag::Report report;
  const double cold = time_ms(options, report);
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(runs));
  for (int i = 0; i < runs; ++i) {
    samples.push_back(time_ms(options, report));
  }
  static const char* const verdicts[] = {"ok", "warning", "error"};
  std::printf(
      "cudadiag %s quick_check: %zu components, %zu mapped CUDA libraries, %zu findings, verdict %s\n",
      cudadiag::version().c_str(), report.components.size(), report.loaded.size(), report.findings.size(),
      verdicts[static_cast<int>(report.verdict)]);
  std::printf("first call   %.3f ms\n", cold);
  std::printf("median       %.3f ms  (%d runs)\n", percentile(samples, 0.5), runs);
  std::printf("p90          %.3f ms\n", percentile(samples, 0.9));
  return 0;
}
