#pragma once
// The symbol half of a closure's prediction, as glibc would find it at dlopen with RTLD_NOW (what
// ctypes, and so cuda-pathfinder and every Python framework, always passes):
//  - every version an object requires of a dependency (.gnu.version_r) must be defined by the
//    object bound for that dependency, when that object has version definitions at all
//    (dl-version.c; "version `V' not found (required by X)"; weak needs excepted);
//  - every undefined, non-weak symbol must be defined by some object in the process's scope: the
//    closure's objects in load order ("undefined symbol: S, version V").
// Fills closure.missing_versions, closure.unresolved, closure.unchecked and references_checked, in
// the closure's object order whatever `threads` (how many threads read and check the objects).

#include "loader/closure.hpp"

namespace cudadiag::loader {

void check_symbols(Closure& closure, ObjectStore& store, std::size_t threads = 1);

} // namespace cudadiag::loader
