#pragma once
// Findings from the closure stage (linkage/linkage.hpp): lib.undefined_symbol,
// lib.missing_symbol_version, lib.missing_dependency, and process.duplicate_lib as a prediction
// (two files of one component in one closure). One finding per distinct problem (the same symbol
// missing from the same file bound the same way), naming every component and answer it breaks.
// Every load failure is an error, whichever answer it breaks ("direct" is what a framework's own
// library gets through its RUNPATH). A predicted duplicate is two files under one SONAME (two
// majors bind separately and are not reported).

#include "core/environment.hpp"
#include "discovery/discovery.hpp"
#include "findings/findings.hpp"
#include "linkage/linkage.hpp"

#include <vector>

namespace cudadiag::findings {

std::vector<Finding> evaluate_linkage(const discovery::DiscoveryResult& discovery,
                                      const linkage::Linkage& linkage, const Environment& env);

} // namespace cudadiag::findings
