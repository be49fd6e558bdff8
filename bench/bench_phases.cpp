// Where discovery's time goes, phase by phase, in this process: the snapshot and the reads done
// once (Python environments, ld.so.cache, ld.so.conf), resolving every catalog component (search,
// candidates, selection), the dependency pass, the closure stage (every found library's dependency
// closure and symbol check, from the files: first the libraries' alone, then with torch's and JAX's
// own loads, as a report computes them; the total counts the second only), the discovery and closure findings
// and the JSON rendering of the components. Each phase's median and 90th percentile over N runs (after one
// warm-up run).
//
//   bench_phases [N=50] [--lstat]
//
// --lstat: without the shared directory listings (every file name lstat'ed in every directory, per
// component: how discovery searched before the listings), for a before/after comparison.
// Prints one line per phase; exits 0 (figures for reading, not a pass/fail test).

#include "core/environment.hpp"
#include "discovery/discovery.hpp"
#include "findings/findings.hpp"
#include "findings/linkage_rules.hpp"
#include "linkage/linkage.hpp"
#include "probes/catalog.hpp"
#include "report/json_report.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double percentile(std::vector<double> values, double fraction) {
  std::sort(values.begin(), values.end());
  const auto index = static_cast<std::size_t>(fraction * static_cast<double>(values.size() - 1) + 0.5);
  return values[index];
}

} // namespace

int main(int argc, char** argv) {
  using namespace cudadiag;
  int runs = 50;
  bool lstat_each = false;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--lstat") {
      lstat_each = true;
    } else {
      runs = std::max(1, std::atoi(argv[i]));
    }
  }
  const char* const phases[] = {"snapshot + prepare (python, ld.so.cache, ld.so.conf)",
                                "resolve components",
                                "dependencies (finish_discovery)",
                                "closures of the libraries",
                                "closures with the frameworks' (analyze_linkage)",
                                "discovery and closure findings",
                                "components to JSON",
                                "total"};
  std::map<std::string, std::vector<double>> samples;
  std::size_t components = 0;
  std::size_t candidates = 0;
  std::size_t finding_count = 0;
  std::size_t json_bytes = 0;
  std::size_t closures = 0;
  std::size_t closure_files = 0;
  for (int run = 0; run <= runs; ++run) {
    const auto start = Clock::now();
    auto t = Clock::now();
    const auto env = Environment::capture();
    auto context =
        discovery::prepare_discovery(env, discovery::DiscoveryOptions{}, discovery::wanted_components({}));
    if (lstat_each) {
      context.dirs.reset();
    }
    const double prepare = since(t);
    t = Clock::now();
    auto resolved = discovery::resolve_components(context, discovery::wanted_components({}));
    const double resolve = since(t);
    t = Clock::now();
    const auto result = discovery::finish_discovery(std::move(context), std::move(resolved));
    const double finish = since(t);
    t = Clock::now();
    (void)linkage::analyze_linkage(result, env, SystemLayout{}, linkage::FrameworkClosures::skip);
    const double library_closures = since(t);
    t = Clock::now();
    const auto linkage = linkage::analyze_linkage(result, env, SystemLayout{});
    const double closure = since(t);
    t = Clock::now();
    auto found = findings::evaluate_discovery(result, env);
    const auto closure_findings = findings::evaluate_linkage(result, linkage, env);
    found.insert(found.end(), closure_findings.begin(), closure_findings.end());
    const double rules = since(t);
    closures = 0;
    for (const auto& component : linkage.components) {
      closures += component.closures.size();
    }
    closure_files = linkage.files_read;
    t = Clock::now();
    std::size_t bytes = 0;
    for (const auto& component : result.components) {
      std::string text;
      JsonStream stream(text, -1);
      report::write_component(stream, component);
      bytes += text.size();
    }
    const double json = since(t);
    const double total = since(start) - library_closures; // the libraries' closures are timed twice
    components = result.components.size();
    candidates = 0;
    for (const auto& component : result.components) {
      candidates += component.candidates.size();
    }
    finding_count = found.size();
    json_bytes = bytes;
    if (run == 0) {
      continue; // the warm-up run
    }
    const double values[] = {prepare, resolve, finish, library_closures, closure, rules, json, total};
    for (std::size_t i = 0; i < std::size(phases); ++i) {
      samples[phases[i]].push_back(values[i]);
    }
  }
  std::printf(
      "discovery phases (%s): %zu components (catalog %zu), %zu candidates, %zu closures from %zu files, "
      "%zu findings, %zu JSON bytes, %d runs\n",
      lstat_each ? "lstat per name" : "shared directory listings", components, probes::catalog().size(),
      candidates, closures, closure_files, finding_count, json_bytes, runs);
  std::printf("%-56s %10s %9s\n", "phase", "median ms", "p90 ms");
  for (const auto* phase : phases) {
    std::printf("%-56s %10.3f %9.3f\n", phase, percentile(samples[phase], 0.5),
                percentile(samples[phase], 0.9));
  }
  return 0;
}
