#pragma once
// gpu.missing: the node has fewer GPUs than it should (--expect-gpus N, or the policy file's
// expect_gpus), named by the layer that lost them (health/gpu_count.hpp): not on the PCI bus
// (hardware_inspection), on the bus but not initialised by the driver (reboot), known to the
// driver but not to NVML (reset_gpu), or known to NVML but not to CUDA (fix_environment:
// CUDA_VISIBLE_DEVICES, a container's device list).

#include "findings/findings.hpp"
#include "health/gpu_count.hpp"

#include <cstddef>
#include <vector>

namespace cudadiag::findings {

std::vector<Finding> evaluate_expected_gpus(std::size_t expected, const health::GpuLayerCounts& counts);

} // namespace cudadiag::findings
