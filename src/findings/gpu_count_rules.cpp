#include "findings/gpu_count_rules.hpp"

#include <array>
#include <string_view>

namespace cudadiag::findings {
namespace {

struct Layer {
  std::string_view key;  // evidence name
  std::string_view name; // in the message
  const std::optional<std::size_t>* count;
  Repair repair;          // when this layer is where they were lost
  std::string_view where; // what losing them here means
};

std::string counted(std::size_t n) {
  return std::to_string(n) + (n == 1 ? " GPU" : " GPUs");
}

} // namespace

std::vector<Finding> evaluate_expected_gpus(std::size_t expected, const health::GpuLayerCounts& counts) {
  const std::array<Layer, 4> layers = {{
      {"pci", "the PCI bus", &counts.pci, Repair::hardware_inspection,
       "not on the PCI bus: fallen off the bus, not seated, without power, or disabled in the BIOS"},
      {"driver", "the NVIDIA driver", &counts.driver, Repair::reboot,
       "on the bus but not initialised by the kernel driver (dmesg: RmInitAdapter failed, Xid 79)"},
      {"nvml", "NVML", &counts.nvml, Repair::reset_gpu, "initialised by the driver but not answering NVML"},
      {"cuda", "CUDA", &counts.cuda, Repair::fix_environment,
       "seen by NVML but hidden from CUDA (CUDA_VISIBLE_DEVICES, the container's device list)"},
  }};
  Evidence evidence{{"expected", expected}};
  std::string seen;
  for (const auto& layer : layers) {
    evidence.set(layer.key, *layer.count);
    if (*layer.count) {
      seen += std::string(seen.empty() ? "" : ", ") + std::string(layer.name) + " sees " +
              std::to_string(**layer.count);
    }
  }
  // Walk up from what the node should have: the first layer that sees fewer than the one below it.
  std::size_t below = expected;
  std::string_view below_name = "expected";
  for (const auto& layer : layers) {
    if (!*layer.count) {
      continue;
    }
    const auto here = **layer.count;
    if (here < below && here < expected) {
      evidence.set("lost_at", std::string(layer.key));
      auto finding = make_finding(
          "gpu.missing",
          counted(expected) + " expected, " + std::string(layer.name) + " sees " + std::to_string(here) +
              (below_name == "expected"
                   ? std::string()
                   : " where " + std::string(below_name) + " sees " + std::to_string(below)) +
              ": " + counted(below - here) + " " + std::string(layer.where) + " (" + seen + ")",
          {}, std::move(evidence));
      finding.repair = layer.repair;
      return {std::move(finding)};
    }
    below = here;
    below_name = layer.name;
  }
  if (seen.empty()) {
    auto finding =
        make_finding("gpu.missing",
                     counted(expected) + " expected, but no layer could be counted (no PCI devices "
                                         "directory, no NVIDIA driver, no verification)",
                     {}, std::move(evidence), Severity::warning);
    return {std::move(finding)};
  }
  return {};
}

} // namespace cudadiag::findings
