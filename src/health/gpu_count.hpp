#pragma once
// How many NVIDIA GPUs each layer of the stack sees, bottom up, so that a node with fewer GPUs
// than it should have can be told where they were lost (GPUd and AKS flag the count; this says
// the layer):
//
//   pci     the PCI bus: devices of vendor 0x10de and class 0x0300xx (VGA) or 0x0302xx (3D
//           controller) under /sys/bus/pci/devices (NVSwitches, class 0x0680, are not GPUs)
//   driver  the NVIDIA kernel driver: one directory per GPU it initialised under /proc/driver/nvidia/gpus
//   nvml    NVML's device count (verification)
//   cuda    the CUDA driver API's devices (verification; CUDA_VISIBLE_DEVICES may hide some)
//
// The two roots are injectable (tests build fake trees; nothing reads the real /sys or /proc then).

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace cudadiag::health {

struct GpuRoots {
  std::string pci_devices = "/sys/bus/pci/devices";
  std::string nvidia_gpus = "/proc/driver/nvidia/gpus";
};

struct GpuLayerCounts {
  std::optional<std::size_t> pci; // nullopt: the directory could not be read
  std::optional<std::size_t>
      driver; // nullopt: no /proc/driver/nvidia (the module is not loaded, or not visible)
  std::optional<std::size_t> nvml;     // nullopt: NVML did not answer (or verification did not run)
  std::optional<std::size_t> cuda;     // nullopt: the driver API did not answer (or verification did not run)
  std::vector<std::string> pci_ids;    // the PCI GPUs' addresses ("0000:3b:00.0"), sorted
  std::vector<std::string> driver_ids; // the driver's directories' names, sorted
};

// The PCI and driver layers, from the roots (nvml and cuda are left for the caller, who knows
// whether verification's NVML and driver steps answered).
GpuLayerCounts count_gpu_layers(const GpuRoots& roots);

} // namespace cudadiag::health
