#pragma once
// framework.load_fails: a Python framework's own CUDA library will not load as the files predict
// (linkage/framework_load.hpp): `import torch` raising in torch/__init__.py's preload of its CUDA
// libraries, or libtorch_cuda.so / JAX's PJRT plugin with a dependency, symbol or version the
// loader cannot supply. A missing driver library (libcuda.so.1) is left to the driver findings.

#include "findings/findings.hpp"
#include "linkage/linkage.hpp"

#include <vector>

namespace cudadiag::findings {

std::vector<Finding> evaluate_framework_loads(const linkage::Linkage& linkage);

} // namespace cudadiag::findings
