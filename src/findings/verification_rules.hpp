#pragma once
// Findings that need the verification stage's facts: what the loaded libraries said about
// themselves (cuInit's result, versions through their APIs, NVRTC's builtins) and how the
// isolated workers ended (crash, hang, load failure).

#include "discovery/discovery.hpp"
#include "findings/findings.hpp"
#include "verify/verification.hpp"

#include <vector>

namespace cudadiag::findings {

std::vector<Finding> evaluate_verification(const discovery::DiscoveryResult& discovery,
                                           const verify::Verification& verification);

// The PTX ISA version ("9.0") a CUDA release (major, minor) emits and can JIT; nullopt when the
// release is not in the table (DESIGN.md §4 "Versions").
std::optional<std::pair<int, int>> ptx_isa_for_cuda(int major, int minor);

} // namespace cudadiag::findings
