#pragma once
// Findings from the closure stage (linkage/linkage.hpp): lib.undefined_symbol,
// lib.missing_symbol_version, lib.missing_dependency, and process.duplicate_lib as a prediction
// (two files of one component in one closure). One finding per distinct problem (the same symbol
// missing from the same file bound the same way), naming every component and answer it breaks.
// Severity: error when CUDA Python's or the native loader's answer breaks; warning when only the
// "direct" answer does (the selected file loaded by its path without cuda-pathfinder's preloads).

#include "core/environment.hpp"
#include "discovery/discovery.hpp"
#include "findings/findings.hpp"
#include "linkage/linkage.hpp"

#include <vector>

namespace cudadiag::findings {

std::vector<Finding> evaluate_linkage(const discovery::DiscoveryResult& discovery, const linkage::Linkage& linkage,
                                      const Environment& env);

} // namespace cudadiag::findings
