#pragma once
// NVML as the self-test worker reads it: one libnvidia-ml (the file discovery selected) loaded by
// path, the worker's GPU found by its PCI bus id, and the readings the health tests need: the PCIe
// link (current and max generation and width), clocks, power, temperature and clocks event reasons
// (sampled in the background while a test runs), and the memory error counters (ECC, remapped rows)
// read before and after the memory test. Whatever NVML does not give (NOT_SUPPORTED in VMs, an old
// driver without an entry point) is nullopt, never an error. Nothing here prints.

#include "core/expected.hpp"
#include "cuda_api/library.hpp"
#include "cuda_api/nvml.hpp"
#include "selftest/health.hpp"

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace cudadiag::selftest {

// The typed symbol table; a null entry is absent from the library.
struct NvmlHealthApi {
  cuda_api::nvml::InitFn init = nullptr;
  cuda_api::nvml::ShutdownFn shutdown = nullptr;
  cuda_api::nvml::DeviceGetHandleByPciBusIdFn device_get_handle_by_pci_bus_id = nullptr;
  cuda_api::nvml::DeviceGetUintFn curr_pcie_link_generation = nullptr;
  cuda_api::nvml::DeviceGetUintFn max_pcie_link_generation = nullptr;
  cuda_api::nvml::DeviceGetUintFn curr_pcie_link_width = nullptr;
  cuda_api::nvml::DeviceGetUintFn max_pcie_link_width = nullptr;
  cuda_api::nvml::DeviceGetClockFn clock_info = nullptr;
  cuda_api::nvml::DeviceGetClockFn max_clock_info = nullptr;
  cuda_api::nvml::DeviceGetClockFn applications_clock = nullptr;
  cuda_api::nvml::DeviceGetUintFn power_usage = nullptr;
  cuda_api::nvml::DeviceGetUintFn enforced_power_limit = nullptr;
  cuda_api::nvml::DeviceGetTemperatureFn temperature = nullptr;
  cuda_api::nvml::DeviceGetClocksEventReasonsFn clocks_event_reasons = nullptr;
  cuda_api::nvml::DeviceGetTotalEccErrorsFn total_ecc_errors = nullptr;
  cuda_api::nvml::DeviceGetRemappedRowsFn remapped_rows = nullptr;
  cuda_api::nvml::DeviceGetRunningProcessesFn compute_running_processes = nullptr;  // _v3
  cuda_api::nvml::DeviceGetRunningProcessesFn graphics_running_processes = nullptr; // _v3
  cuda_api::nvml::DeviceGetUtilizationRatesFn utilization_rates = nullptr;
  cuda_api::nvml::DeviceGetPersistenceModeFn persistence_mode = nullptr;
};

// One NVML listing of the processes on a GPU: the compute and graphics queries merged by pid.
struct NvmlProcess {
  unsigned pid = 0;
  std::optional<std::uint64_t> used_memory_bytes;
  bool compute = false, graphics = false;
  std::optional<unsigned> gpu_instance; // the MIG GPU instance it runs in; nullopt: not MIG
};
struct ProcessListing {
  bool known = false;
  std::string
      unknown_reason; // when !known: "nvmlDeviceGetComputeRunningProcesses_v3: NVML_ERROR_NOT_SUPPORTED"
  std::vector<NvmlProcess> processes; // in pid order
};

// What rose from `before` to `after` ("ecc_uncorrected +2", "remapped_uncorrectable +1", a remap
// that became pending or failed); empty when nothing did.
std::vector<std::string> new_memory_errors(const MemoryCounters& before, const MemoryCounters& after);

class NvmlDevice;

// One loaded and initialised NVML; nvmlShutdown and never dlclose on destruction.
class NvmlHealth {
public:
  // dlopens `path` and calls nvmlInit_v2; the error says which failed.
  static Expected<std::unique_ptr<NvmlHealth>> open(const std::string& path);
  ~NvmlHealth();
  NvmlHealth(const NvmlHealth&) = delete;
  NvmlHealth& operator=(const NvmlHealth&) = delete;

  // The GPU at `bus_id` (cuDeviceGetPCIBusId's "0000:19:00.0" form), or why NVML has none there.
  [[nodiscard]] Expected<NvmlDevice> device(const std::string& bus_id) const;
  [[nodiscard]] const NvmlHealthApi& api() const { return m_api; }
  [[nodiscard]] const cuda_api::MissingSymbols& missing() const { return m_missing; }

private:
  NvmlHealth() = default;
  cuda_api::DlHandle m_handle;
  cuda_api::MissingSymbols m_missing;
  NvmlHealthApi m_api;
};

// One GPU of a loaded NVML (which must outlive it). Every reading is safe from any thread.
class NvmlDevice {
public:
  NvmlDevice(const NvmlHealth& nvml, cuda_api::nvml::Device handle, std::string bus_id)
      : m_nvml(&nvml), m_handle(handle), m_bus_id(std::move(bus_id)) {}
  [[nodiscard]] PcieLink link() const;
  [[nodiscard]] ClockSample sample(double at_ms) const;
  [[nodiscard]] MemoryCounters memory_counters() const;
  [[nodiscard]] std::optional<unsigned> max_sm_clock_mhz() const;
  [[nodiscard]] std::optional<unsigned> applications_sm_clock_mhz() const;
  [[nodiscard]] std::optional<unsigned> power_limit_mw() const;
  // The running compute and graphics processes; unknown (not an error) where NVML does not say.
  [[nodiscard]] ProcessListing processes() const;
  // nvmlDeviceGetUtilizationRates' GPU percentage; nullopt where NVML does not say.
  [[nodiscard]] std::optional<unsigned> utilization_pct() const;
  // nvmlDeviceGetPersistenceMode: true when enabled; nullopt where NVML does not say.
  [[nodiscard]] std::optional<bool> persistence_mode() const;
  [[nodiscard]] const std::string& bus_id() const { return m_bus_id; }

private:
  const NvmlHealth* m_nvml;
  cuda_api::nvml::Device m_handle;
  std::string m_bus_id;
};

// Samples a device every `interval` on a thread of its own from construction until stop() (or
// destruction); stop() returns the samples, the first taken at once.
class ClockSampler {
public:
  ClockSampler(const NvmlDevice& device, std::chrono::milliseconds interval);
  ~ClockSampler();
  ClockSampler(const ClockSampler&) = delete;
  ClockSampler& operator=(const ClockSampler&) = delete;
  std::vector<ClockSample> stop();
  // How many samples were taken so far (the sampler goes on).
  [[nodiscard]] std::size_t taken();

private:
  const NvmlDevice& m_device;
  std::chrono::milliseconds m_interval;
  std::chrono::steady_clock::time_point m_started;
  std::atomic<bool> m_stop{false};
  std::mutex m_lock;
  std::vector<ClockSample> m_samples;
  std::thread m_thread;
};

} // namespace cudadiag::selftest
