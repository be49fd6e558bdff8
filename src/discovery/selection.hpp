#pragma once
// The two answers per component, computed from its candidates' sightings:
//  - loader: what a plain native process gets from dlopen(SONAME). As glibc does, each declared
//    SONAME is resolved on its own, newest first: LD_LIBRARY_PATH, then the one ld.so.cache entry
//    glibc takes for that name, then the default directories. glibc passes over files of another
//    ELF class or machine and dangling links, but stops with an error at an empty, truncated or
//    non-ELF file or a directory. The answer is the first SONAME that resolves to a loadable file;
//    when none does but one stops at a broken file, that file is the answer with `fails` set, and
//    loader_blocked_by names the first such file either way. For binaries: the first executable on
//    PATH.
//  - selected: cuda-pathfinder's priority: site-packages (rel-dir-major), conda, its system search
//    (the loader's answer, when it loads), product roots, CUDA_PATH/CUDA_HOME, the toolkit root
//    derived from cudart, and for cuDNN, NCCL and NVSHMEM headers the system include directories.
//    Its file-system steps take the first name that is a file
//    (os.path.isfile) and never fall back: a broken first file is the answer, with `fails` set.
//
// select() also sets result.status (status_of). It looks at each file alone; for libraries,
// follow_loads (load_model.hpp) then re-answers both from the loads' predicted outcomes.

#include "discovery/discovery.hpp"

#include <string_view>
#include <vector>

namespace cudadiag::discovery {

// Fills result.loader, result.loader_blocked_by, result.selected and result.status.
void select(ComponentResult& result);

// cuda-pathfinder's descriptor dependencies (1.9.1; the catalog's .dependencies and
// .optional_dependencies) for the catalog's libraries: each is loaded,
// with its own full search, before the library itself, so a dependency that fails (or, when
// required, is not found) makes the library fail too.
struct PathfinderDependencies {
  std::string_view name;
  std::vector<std::string_view> required;
  std::vector<std::string_view> optional; // a plain not-found is ignored; a failing load is not
};
const std::vector<PathfinderDependencies>& pathfinder_dependencies();

// What dlopen(soname) meets first in glibc's order (LD_LIBRARY_PATH, the cache entry, the default
// directories) among `result`'s sightings, passing over files of another class or machine and
// dangling links: a file that opens (`found`; its dependencies not yet looked at), or a file it
// stops at (`blocked`, with the outcome set: fails, or crashes for a truncated file).
struct NameOutcome {
  std::optional<Choice> found;
  std::optional<Choice> blocked;
};
NameOutcome resolve_name(const ComponentResult& result, const std::string& soname);

// found when the answer CUDA Python gets loads (or, with no such answer, the loader's does),
// error when it does not or when CUDA Python's load failed before it raised "not found"
// (python_failed), not_found when there is no answer.
ComponentStatus status_of(const ComponentResult& result);

} // namespace cudadiag::discovery
