#pragma once
// Probes that load a CUDA library and ask it about itself. They run ONLY inside the isolated
// worker process (see worker/process.hpp): a library may crash in its constructor or hang in
// cuInit, and that must never take the report down. Each probe takes the absolute path of the file
// discovery selected, dlopens exactly that file, and returns its facts (facts.hpp); unknown values
// are nullopt, never guessed. A probe never throws and never prints (the worker owns
// stdout/stderr); it tells the parent which call comes next with worker::report_phase.

#include "verify/facts.hpp"

#include <string>

namespace cudadiag::verify {

// libcuda: cuGetProcAddress_v2 via dlsym, everything else through it (cuda_api::DriverResolver):
// cuInit's result, the driver version, the devices and their attributes; is_stub for error 34.
DriverFacts probe_driver(const std::string& path);

// libnvidia-ml: nvmlInit, the driver's versions, per device identity, PCIe link, ECC, row
// remapping, persistence, MIG and clock event reasons.
NvmlFacts probe_nvml(const std::string& path);

// libnvrtc: its version, supported archs, a compile of an empty kernel, and its builtins library.
NvrtcFacts probe_nvrtc(const std::string& path);

// libnvJitLink: its version (nvJitLinkVersion or the versioned symbols), the header versions it
// accepts, and creating a linker.
NvJitLinkFacts probe_nvjitlink(const std::string& path);

// libcudart: cudaRuntimeGetVersion and cudaDriverGetVersion.
CudartFacts probe_cudart(const std::string& path);

} // namespace cudadiag::verify
