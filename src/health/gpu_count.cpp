#include "health/gpu_count.hpp"

#include "core/filesystem.hpp"

#include <algorithm>

namespace cudadiag::health {
namespace {

std::string first_line(const std::string& path) {
  auto text = fs::read_file_prefix(path, 64);
  if (!text) {
    return {};
  }
  const auto end = text->find_first_of("\r\n");
  return end == std::string::npos ? *text : text->substr(0, end);
}

bool is_nvidia_gpu(const std::string& device_dir) {
  if (first_line(device_dir + "/vendor") != "0x10de") {
    return false;
  }
  const auto pci_class = first_line(device_dir + "/class");
  return pci_class.rfind("0x0300", 0) == 0 || pci_class.rfind("0x0302", 0) == 0;
}

} // namespace

GpuLayerCounts count_gpu_layers(const GpuRoots& roots) {
  GpuLayerCounts counts;
  if (auto entries = fs::list_directory(roots.pci_devices)) {
    for (const auto& name : *entries) {
      if (is_nvidia_gpu(roots.pci_devices + "/" + name)) {
        counts.pci_ids.push_back(name);
      }
    }
    std::sort(counts.pci_ids.begin(), counts.pci_ids.end());
    counts.pci = counts.pci_ids.size();
  }
  if (auto entries = fs::list_directory(roots.nvidia_gpus)) {
    counts.driver_ids = *entries;
    std::sort(counts.driver_ids.begin(), counts.driver_ids.end());
    counts.driver = counts.driver_ids.size();
  }
  return counts;
}

} // namespace cudadiag::health
