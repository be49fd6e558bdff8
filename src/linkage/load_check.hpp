#pragma once
// The load check: every closure the closure stage predicted is loaded for real, in a worker of its
// own (the `link_map` worker kind, link_map.hpp), and the loader's link map is compared with the
// prediction. For the "python" and "direct" answers the preloads and then the root are opened by
// their paths; for the "loader" answer the root is opened by the name the loader searched for
// (dlopen(SONAME) in a fresh process), so the loader's choice is checked as well.
//
// The prediction agrees when dlopen succeeds exactly when predicted, a failure names what the
// prediction says stops it (the missing file, symbol or version), and every predicted object is
// in the link map by its real path. Two things are told apart from a wrong prediction: a
// dependency the worker already had under that name (the cudadiag binary's own libstdc++: any
// process has its own), and objects the link map holds beyond the closure (a library's
// constructor may dlopen more; DT_NEEDED cannot say so).

#include "core/environment.hpp"
#include "linkage/link_map.hpp"
#include "linkage/linkage.hpp"
#include "linkage/load_cache.hpp"

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace cudadiag::linkage {

struct ProvenOutcome {
  worker::StepStatus status = worker::StepStatus::error; // timeout | crashed, as LoadCheck::status
  std::string detail;                                    // what happened, for the check's detail
};

struct LoadCheckOptions {
  std::string executable;                        // the cudadiag binary to re-execute as the worker
  std::chrono::milliseconds step_timeout{15000}; // per closure
  unsigned parallel = 0;                         // workers at once; 0: twice the CPUs, 4 to 32
  // The whole load check's bound (0: 2 x step_timeout): no closure starts loading after it, and
  // none runs past it. The closures left are unchecked, and Linkage::load_check_cut says so.
  std::chrono::milliseconds total_budget{0};
  // Files this run already saw hang or crash when loaded (verification), by realpath: a closure
  // that holds one is not loaded again; its check takes that outcome ("timeout" or "crashed"),
  // with the detail saying where it was seen.
  std::map<std::string, ProvenOutcome> proven;
  // The cache of proven loads (load_cache.hpp), or null: a closure it answers is judged from the
  // stored answer, not loaded; every worker that ends normally is stored. The caller saves it.
  LoadCache* cache = nullptr;
};

// The comparison of one closure's prediction with its real load.
LoadCheck judge(const loader::Closure& closure, const std::string& loaded_as, const LinkMapFacts& real);

// Loads every closure of `linkage` (those whose root could be opened) and stores the result in
// its `check`. Never throws; a worker that crashes or hangs is a check with that status.
void check_by_loading(Linkage& linkage, const LoadCheckOptions& options, const Environment& env);

} // namespace cudadiag::linkage
