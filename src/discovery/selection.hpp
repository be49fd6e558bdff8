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
// select() also sets result.status: error when the answer CUDA Python gets fails (or, with no such
// answer, the loader's does), found when an answer loads, not_found otherwise.

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

// Marks `result`'s selected answer as failing when one of its dependencies (already selected, in
// `resolved`, looked up by name) fails or a required one is missing; updates result.status.
void apply_dependencies(ComponentResult& result, const std::vector<const ComponentResult*>& resolved);

} // namespace cudadiag::discovery
