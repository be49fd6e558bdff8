#pragma once
// The checks JAX's CUDA plugin makes when it initializes (jax_plugins/xla_cudaNN/__init__.py,
// `_check_cuda_versions`, read in jax-cuda13-pjrt 0.11.2), made before `import jax` from the
// versions discovery read, as framework.version_rule:
// - error (JAX raises "Unable to use CUDA because of the following issues with CUDA components"):
//   CUDA runtime older than 12.1, cuBLAS older than 12.1.0, cuSPARSE older than 12.1.0; cuDNN
//   9.10.0 (a binary backward-compatibility break); cuDNN older than 9.10.1 with cuBLAS 12.9 or newer
//   on more than one GPU (wrong multi-GPU matmuls);
// - warning (JAX logs it and goes on): cuBLAS 12.8 up to 13.2 on a GPU of compute capability 10.x or
//   11.x (kernels that free Tensor Memory twice: silent data corruption under concurrent kernels).
// The checks against the versions JAX was built with (cuDNN, cuFFT) need the plugin's compiled build
// versions and are not made; they cannot fail in the releases read anyway (since JAX introduced
// `min_supported_version`, a check without one compares `build_version // scale_for_comparison`
// with the unscaled runtime version, 910 <= 90800). Which copy is checked: the one JAX's plugin
// binds (linkage.frameworks, `find --for jax`'s answer), else the nvidia wheel JAX loads first from
// site-packages, else the loader's answer (JAX's fallback). JAX_SKIP_CUDA_CONSTRAINTS_CHECK set, or
// no jax-cudaNN-pjrt in the primary environment: nothing is checked.

#include "core/environment.hpp"
#include "discovery/discovery.hpp"
#include "findings/findings.hpp"
#include "linkage/linkage.hpp"
#include "verify/verification.hpp"

#include <vector>

namespace cudadiag::findings {

// `linkage`: the frameworks' closures, when predicted: the copy JAX's plugin binds is checked first.
std::vector<Finding> evaluate_jax_checks(const discovery::DiscoveryResult& discovery,
                                         const verify::Verification& verification, const Environment& env,
                                         const linkage::Linkage* linkage = nullptr);

} // namespace cudadiag::findings
