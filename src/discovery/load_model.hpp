#pragma once
// The load model (DESIGN.md §7): each library's answers are the predicted outcome of a load —
// loads, fails (glibc's reason) or crashes (SIGBUS) — computed by the closure stage
// (loader/closure.hpp) over the files, with the system's preloads first in every closure, and
// CUDA Python's answer follows cuda-pathfinder 1.9.1's control flow over those outcomes
// (_load_lib_no_cache in _dynamic_libs/load_nvidia_dynamic_lib.py):
//   1. its early steps (site-packages, then conda) name the first file that exists;
//   2. it loads the library's declared dependencies, each with its own full search, required ones
//      first: a dependency that fails raises, and so does this library; a required one not found
//      raises DynamicLibNotFoundError, so this library is not found either (selected null);
//   3. a file from step 1 is loaded by its path: when that fails it raises RuntimeError ("Failed to
//      dlopen PATH: ..."), never falling back;
//   4. else its system search calls dlopen(SONAME) per declared SONAME, newest first, with the
//      dependencies already in the process (RTLD_GLOBAL); a failing dlopen is swallowed and the next
//      SONAME, then the next step, is tried;
//   5. then product roots and CUDA_PATH/CUDA_HOME (by path: a failure raises), then for the
//      canary's libraries the toolkit root derived from cudart when cudart's system search loads;
//   6. else DynamicLibNotFoundError: `selected` is null, and when a system-search dlopen failed
//      on a file, `python_failed` is that file (CUDA Python's load fails there: status error).
// Driver libraries are only system-searched. The loader's answer (a plain dlopen(SONAME) in a fresh
// process) is the first declared SONAME whose load succeeds; when none does, the first failure (a
// crash ends the process there).

#include "discovery/discovery.hpp"
#include "loader/closure.hpp"
#include "loader/object_store.hpp"

#include <vector>

namespace cudadiag::discovery {

// Re-answers `loader` and `selected` of every library in `components` and `dependencies` (the
// components cuda-pathfinder loads first, resolved for them) from the predicted loads, adds what
// the loads changed to each trace and sets status (status_of). `dependencies` must hold every
// cuda-pathfinder dependency of a component in `components` that is not itself there. Other
// kinds are left as select() answered them. `store` caches the files for the closure stage.
void follow_loads(std::vector<ComponentResult>& components, std::vector<ComponentResult>& dependencies,
                  const loader::SearchSetting& setting, loader::ObjectStore& store);

// follow_loads over `components` (resolved from `context`), with their cuda-pathfinder
// dependencies that are not among them resolved from `context` first; returns those dependencies.
// finish_discovery calls it once for the run's components; a stage that needs the load model's
// answers earlier (verification starts its workers before the rest is resolved) calls it on a copy.
std::vector<ComponentResult> follow_loads_from(const DiscoveryContext& context,
                                               std::vector<ComponentResult>& components);

} // namespace cudadiag::discovery
