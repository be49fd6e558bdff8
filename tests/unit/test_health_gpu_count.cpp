// Expected GPUs (health/gpu_count, findings/gpu_count_rules): each layer counted from fake
// /sys/bus/pci/devices and /proc/driver/nvidia/gpus trees, and gpu.missing naming the layer that
// lost them, with that layer's repair class.
#include "findings/gpu_count_rules.hpp"
#include "health/gpu_count.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

namespace {

using cudadiag::findings::Repair;
using cudadiag::findings::Severity;
using cudadiag::health::GpuLayerCounts;

// A PCI device directory with its vendor and class files, as sysfs has them.
void pci_device(const cudadiag::testing::TempTree& tree, const std::string& address,
                const std::string& vendor, const std::string& pci_class) {
  tree.write("pci/" + address + "/vendor", vendor + "\n");
  tree.write("pci/" + address + "/class", pci_class + "\n");
}

GpuLayerCounts counts(std::optional<std::size_t> pci, std::optional<std::size_t> driver,
                      std::optional<std::size_t> nvml, std::optional<std::size_t> cuda) {
  GpuLayerCounts out;
  out.pci = pci;
  out.driver = driver;
  out.nvml = nvml;
  out.cuda = cuda;
  return out;
}

} // namespace

TEST_CASE("gpu count: NVIDIA GPUs on the PCI bus (3D and VGA class), the driver's directories") {
  cudadiag::testing::TempTree tree;
  pci_device(tree, "0000:3b:00.0", "0x10de", "0x030200"); // H100: 3D controller
  pci_device(tree, "0000:5e:00.0", "0x10de", "0x030000"); // a VGA-class NVIDIA GPU
  pci_device(tree, "0000:86:00.0", "0x10de", "0x068000"); // an NVSwitch: a bridge, not a GPU
  pci_device(tree, "0000:00:02.0", "0x8086", "0x030000"); // another vendor's VGA
  tree.mkdir("gpus/0000:3b:00.0");
  cudadiag::health::GpuRoots roots{tree.path("pci"), tree.path("gpus")};
  const auto found = cudadiag::health::count_gpu_layers(roots);
  CHECK(found.pci == 2);
  CHECK(found.pci_ids == std::vector<std::string>{"0000:3b:00.0", "0000:5e:00.0"});
  CHECK(found.driver == 1);
  CHECK_FALSE(found.nvml);
  CHECK_FALSE(found.cuda);

  const auto absent = cudadiag::health::count_gpu_layers({tree.path("no-pci"), tree.path("no-gpus")});
  CHECK_FALSE(absent.pci);
  CHECK_FALSE(absent.driver);
}

TEST_CASE("gpu count: gpu.missing names the layer that lost them, with its repair class") {
  using cudadiag::findings::evaluate_expected_gpus;
  CHECK(evaluate_expected_gpus(8, counts(8, 8, 8, 8)).empty());
  CHECK(evaluate_expected_gpus(8, counts(9, 8, 8, 8)).empty()); // more than expected is not missing

  const auto driver = evaluate_expected_gpus(8, counts(8, 7, 7, 7));
  REQUIRE(driver.size() == 1);
  CHECK(driver[0].id == "gpu.missing");
  CHECK(driver[0].severity == Severity::error);
  CHECK(driver[0].repair == Repair::reboot);
  CHECK(driver[0].evidence.at("lost_at") == "driver");
  CHECK(driver[0].message.find("the NVIDIA driver sees 7 where the PCI bus sees 8") != std::string::npos);

  const auto bus = evaluate_expected_gpus(8, counts(7, 7, 7, 7));
  REQUIRE(bus.size() == 1);
  CHECK(bus[0].repair == Repair::hardware_inspection);
  CHECK(bus[0].evidence.at("lost_at") == "pci");
  CHECK(bus[0].message.find("8 GPUs expected, the PCI bus sees 7: 1 GPU not on the PCI bus") == 0);

  const auto nvml = evaluate_expected_gpus(4, counts(4, 4, 3, 3));
  REQUIRE(nvml.size() == 1);
  CHECK(nvml[0].repair == Repair::reset_gpu);

  const auto hidden = evaluate_expected_gpus(4, counts(4, 4, 4, 2));
  REQUIRE(hidden.size() == 1);
  CHECK(hidden[0].repair == Repair::fix_environment);
  CHECK(hidden[0].evidence.at("lost_at") == "cuda");

  // Layers that were not counted (no verification, no /proc/driver/nvidia) are passed over.
  const auto unverified = evaluate_expected_gpus(8, counts(8, std::nullopt, std::nullopt, std::nullopt));
  CHECK(unverified.empty());
  const auto nothing =
      evaluate_expected_gpus(8, counts(std::nullopt, std::nullopt, std::nullopt, std::nullopt));
  REQUIRE(nothing.size() == 1);
  CHECK(nothing[0].severity == Severity::warning);
}
