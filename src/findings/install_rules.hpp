#pragma once
// What an installation says of itself against what is on disk: the dist-info RECORDs of the
// primary Python environment's CUDA distributions (python.file_overwritten, python.record_mismatch)
// and the library roots that variables name against what the loader binds (env.root_release_differs).

#include "core/environment.hpp"
#include "discovery/discovery.hpp"
#include "findings/findings.hpp"

#include <string_view>
#include <vector>

namespace cudadiag::findings {

// The variables that name a library root a program is built against (its headers and its link-time
// libraries), one row each, in the order findings name them.
struct RootVariable {
  std::string_view name;
  std::string_view names; // what it names, as a message says it
};
const std::vector<RootVariable>& root_variables();

// python.file_overwritten: one finding per file two installed distributions claim; the file on
// disk matches at most one of their RECORDs. An error when a framework in the environment pins a
// claimant whose RECORD the file does not match (it loads another release's file), else a warning.
// python.record_mismatch: one finding per distribution whose library files are missing (error) or
// differ from its RECORD in size or, with hashes, in SHA-256 (warning).
std::vector<Finding> evaluate_records(const discovery::DiscoveryResult& result);

// env.root_release_differs: for each root a variable of root_variables() names, each library found
// there whose SONAME the loader binds to another file: a warning when the root's release is newer
// (programs built against the root get the older copy at run time), info when it is older or the
// same release. A root whose file is the one the loader binds says nothing.
std::vector<Finding> evaluate_variable_roots(const discovery::DiscoveryResult& result,
                                             const Environment& env);

// Whether env.root_release_differs compares `sighting` (a root variable's copy of `result`) with the
// loader's answer: the loader's answer loads and has the same SONAME. lib.multiple_versions leaves
// such a route to it.
bool root_compared_with_loader(const discovery::ComponentResult& result, const discovery::Sighting& sighting);

} // namespace cudadiag::findings
