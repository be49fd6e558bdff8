#pragma once
// The two answers per component, computed from its candidates' sightings:
//  - loader: what a plain native process gets from dlopen(SONAME): LD_LIBRARY_PATH, then
//    ld.so.cache, then the default directories; the first usable file wins. glibc passes over files
//    of another ELF class or machine and dangling links, but stops with an error at an empty,
//    truncated or non-ELF file: then there is no answer and loader_blocked_by names the file.
//    For binaries: the first executable on PATH.
//  - selected: cuda-pathfinder's priority: site-packages (rel-dir-major), conda, the loader's
//    answer (its "system-search"), product roots, CUDA_PATH/CUDA_HOME, the toolkit root derived
//    from cudart. Its file-system steps take the first file that exists; a file that exists but
//    cannot be loaded makes cuda-pathfinder fail, so such files are recorded in
//    shadowing_unusable and the selection continues to the first usable one.

#include "discovery/discovery.hpp"

namespace cudadiag::discovery {

// Fills result.loader, result.loader_blocked_by, result.selected, result.shadowing_unusable and
// result.status.
void select(ComponentResult& result);

} // namespace cudadiag::discovery
