#pragma once
// Findings on the Python frameworks against this machine's GPUs (needs the verification stage's
// devices), framework.arch_unsupported:
// - error: a framework whose GPU code is known (torch's libtorch_cuda.so fatbinaries, TensorFlow's
//   cuda_compute_capabilities) carries nothing the GPU runs ("no kernel image is available for
//   execution on the device", pytorch/pytorch#150733);
// - warning: the ptxas Triton compiles with does not know the GPU's architecture
//   (triton-lang/triton#8539: "ptxas fatal: Value 'sm_121a' is not defined for option 'gpu-name'").

#include "discovery/discovery.hpp"
#include "findings/findings.hpp"
#include "verify/verification.hpp"

#include <optional>
#include <utility>
#include <vector>

namespace cudadiag::findings {

std::vector<Finding> evaluate_frameworks(const discovery::DiscoveryResult& discovery,
                                         const verify::Verification& verification);

// The first CUDA release (major, minor) whose ptxas compiles for compute capability `arch` (10 x
// major + minor, e.g. 121); nullopt for an architecture the table does not know.
std::optional<std::pair<int, int>> first_ptxas_for_arch(int arch);

} // namespace cudadiag::findings
