#include "selftest/nvml_health.hpp"

#include <algorithm>
#include <iterator>

namespace cudadiag::selftest {

namespace nvml = cuda_api::nvml;

Expected<std::unique_ptr<NvmlHealth>> NvmlHealth::open(const std::string& path) {
  std::unique_ptr<NvmlHealth> health(new NvmlHealth());
  health->m_handle = cuda_api::DlHandle(path);
  if (!health->m_handle.loaded()) {
    return Error{"cannot load " + path + ": " + health->m_handle.error()};
  }
  const cuda_api::SymbolResolver sym(health->m_handle, health->m_missing);
  auto& a = health->m_api;
  a.init = sym.require<nvml::InitFn>("nvmlInit_v2");
  a.shutdown = sym.require<nvml::ShutdownFn>("nvmlShutdown");
  a.device_get_handle_by_pci_bus_id =
      sym.require<nvml::DeviceGetHandleByPciBusIdFn>("nvmlDeviceGetHandleByPciBusId_v2");
  a.curr_pcie_link_generation = sym.require<nvml::DeviceGetUintFn>("nvmlDeviceGetCurrPcieLinkGeneration");
  a.max_pcie_link_generation = sym.require<nvml::DeviceGetUintFn>("nvmlDeviceGetMaxPcieLinkGeneration");
  a.curr_pcie_link_width = sym.require<nvml::DeviceGetUintFn>("nvmlDeviceGetCurrPcieLinkWidth");
  a.max_pcie_link_width = sym.require<nvml::DeviceGetUintFn>("nvmlDeviceGetMaxPcieLinkWidth");
  a.clock_info = sym.require<nvml::DeviceGetClockFn>("nvmlDeviceGetClockInfo");
  a.max_clock_info = sym.require<nvml::DeviceGetClockFn>("nvmlDeviceGetMaxClockInfo");
  a.applications_clock = sym.require<nvml::DeviceGetClockFn>("nvmlDeviceGetApplicationsClock");
  a.power_usage = sym.require<nvml::DeviceGetUintFn>("nvmlDeviceGetPowerUsage");
  a.enforced_power_limit = sym.require<nvml::DeviceGetUintFn>("nvmlDeviceGetEnforcedPowerLimit");
  a.temperature = sym.require<nvml::DeviceGetTemperatureFn>("nvmlDeviceGetTemperature");
  a.clocks_event_reasons =
      health->m_handle.symbol<nvml::DeviceGetClocksEventReasonsFn>("nvmlDeviceGetCurrentClocksEventReasons");
  if (a.clocks_event_reasons == nullptr) { // the name before the 12.x rename
    a.clocks_event_reasons =
        sym.require<nvml::DeviceGetClocksEventReasonsFn>("nvmlDeviceGetCurrentClocksThrottleReasons");
  }
  a.total_ecc_errors = sym.require<nvml::DeviceGetTotalEccErrorsFn>("nvmlDeviceGetTotalEccErrors");
  a.remapped_rows = sym.require<nvml::DeviceGetRemappedRowsFn>("nvmlDeviceGetRemappedRows");
  a.compute_running_processes =
      sym.require<nvml::DeviceGetRunningProcessesFn>("nvmlDeviceGetComputeRunningProcesses_v3");
  a.graphics_running_processes =
      sym.require<nvml::DeviceGetRunningProcessesFn>("nvmlDeviceGetGraphicsRunningProcesses_v3");
  a.utilization_rates = sym.require<nvml::DeviceGetUtilizationRatesFn>("nvmlDeviceGetUtilizationRates");
  a.persistence_mode = sym.require<nvml::DeviceGetPersistenceModeFn>("nvmlDeviceGetPersistenceMode");
  if (a.init == nullptr || a.shutdown == nullptr) {
    return Error{path + " has no nvmlInit_v2/nvmlShutdown"};
  }
  if (const auto code = a.init(); code != nvml::k_success) {
    const auto name = nvml::return_name(code);
    a.shutdown = nullptr; // nothing to shut down
    return Error{"nvmlInit_v2 returned " + (name.empty() ? std::to_string(code) : std::string(name))};
  }
  health->m_handle.release(); // never unloaded: other threads may still be inside NVML
  return health;
}

NvmlHealth::~NvmlHealth() {
  if (m_api.shutdown != nullptr) {
    m_api.shutdown();
  }
}

Expected<NvmlDevice> NvmlHealth::device(const std::string& bus_id) const {
  if (m_api.device_get_handle_by_pci_bus_id == nullptr) {
    return Error{"NVML has no nvmlDeviceGetHandleByPciBusId_v2"};
  }
  nvml::Device handle = nullptr;
  if (const auto code = m_api.device_get_handle_by_pci_bus_id(bus_id.c_str(), &handle);
      code != nvml::k_success || handle == nullptr) {
    const auto name = nvml::return_name(code);
    return Error{"NVML does not know the GPU at " + bus_id + " (" +
                 (name.empty() ? std::to_string(code) : std::string(name)) + ")"};
  }
  return NvmlDevice(*this, handle, bus_id);
}

namespace {
template <class Fn, class... Args> std::optional<unsigned> read_uint(Fn fn, Args... args) {
  unsigned value = 0;
  if (fn != nullptr && fn(args..., &value) == nvml::k_success) {
    return value;
  }
  return std::nullopt;
}
std::optional<std::uint64_t> read_ecc(const NvmlHealthApi& api, nvml::Device device, unsigned type) {
  unsigned long long count = 0;
  if (api.total_ecc_errors != nullptr &&
      api.total_ecc_errors(device, type, nvml::k_volatile_ecc, &count) == nvml::k_success) {
    return count;
  }
  return std::nullopt;
}
} // namespace

PcieLink NvmlDevice::link() const {
  const auto& api = m_nvml->api();
  PcieLink link;
  link.bus_id = m_bus_id;
  link.gen_current = read_uint(api.curr_pcie_link_generation, m_handle);
  link.gen_max = read_uint(api.max_pcie_link_generation, m_handle);
  link.width_current = read_uint(api.curr_pcie_link_width, m_handle);
  link.width_max = read_uint(api.max_pcie_link_width, m_handle);
  return link;
}

ClockSample NvmlDevice::sample(double at_ms) const {
  const auto& api = m_nvml->api();
  ClockSample sample;
  sample.at_ms = at_ms;
  sample.sm_mhz = read_uint(api.clock_info, m_handle, nvml::k_clock_sm);
  sample.mem_mhz = read_uint(api.clock_info, m_handle, nvml::k_clock_mem);
  sample.power_mw = read_uint(api.power_usage, m_handle);
  sample.temperature_c = read_uint(api.temperature, m_handle, nvml::k_temperature_gpu);
  unsigned long long reasons = 0;
  if (api.clocks_event_reasons != nullptr &&
      api.clocks_event_reasons(m_handle, &reasons) == nvml::k_success) {
    sample.reasons = reasons;
  }
  return sample;
}

MemoryCounters NvmlDevice::memory_counters() const {
  const auto& api = m_nvml->api();
  MemoryCounters counters;
  counters.ecc_corrected = read_ecc(api, m_handle, nvml::k_memory_error_type_corrected);
  counters.ecc_uncorrected = read_ecc(api, m_handle, nvml::k_memory_error_type_uncorrected);
  unsigned correctable = 0;
  unsigned uncorrectable = 0;
  unsigned pending = 0;
  unsigned failure = 0;
  if (api.remapped_rows != nullptr &&
      api.remapped_rows(m_handle, &correctable, &uncorrectable, &pending, &failure) == nvml::k_success) {
    counters.remapped_correctable = correctable;
    counters.remapped_uncorrectable = uncorrectable;
    counters.remap_pending = pending != 0;
    counters.remap_failure = failure != 0;
  }
  return counters;
}

std::optional<unsigned> NvmlDevice::max_sm_clock_mhz() const {
  return read_uint(m_nvml->api().max_clock_info, m_handle, nvml::k_clock_sm);
}
std::optional<unsigned> NvmlDevice::applications_sm_clock_mhz() const {
  return read_uint(m_nvml->api().applications_clock, m_handle, nvml::k_clock_sm);
}
std::optional<unsigned> NvmlDevice::power_limit_mw() const {
  return read_uint(m_nvml->api().enforced_power_limit, m_handle);
}

namespace {
std::string nvml_call_problem(const char* call, nvml::Return code) {
  const auto name = nvml::return_name(code);
  return std::string(call) + ": " + (name.empty() ? "NVML error " + std::to_string(code) : std::string(name));
}

// One query into `into` (merged by pid); "" or why it could not say.
std::string list_processes(nvml::DeviceGetRunningProcessesFn query, const char* call, nvml::Device device,
                           bool graphics, std::vector<NvmlProcess>& into) {
  if (query == nullptr) {
    return std::string("NVML has no ") + call;
  }
  std::vector<nvml::ProcessInfo> infos(16);
  for (int attempt = 0; attempt < 4; ++attempt) {
    auto count = static_cast<unsigned>(infos.size());
    const auto code = query(device, &count, infos.data());
    if (code == nvml::k_error_insufficient_size) {
      infos.resize(std::max<std::size_t>(count, infos.size()) + 16); // processes may start meanwhile
      continue;
    }
    if (code != nvml::k_success) {
      return nvml_call_problem(call, code);
    }
    for (std::size_t i = 0; i < std::min<std::size_t>(count, infos.size()); ++i) {
      const auto& info = infos[i];
      auto found =
          std::find_if(into.begin(), into.end(), [&](const NvmlProcess& p) { return p.pid == info.pid; });
      if (found == into.end()) {
        into.push_back(NvmlProcess{info.pid, std::nullopt, false, false, std::nullopt});
        found = std::prev(into.end());
      }
      if (info.used_gpu_memory != nvml::k_value_not_available) {
        found->used_memory_bytes =
            std::max<std::uint64_t>(found->used_memory_bytes.value_or(0), info.used_gpu_memory);
      }
      (graphics ? found->graphics : found->compute) = true;
      if (info.gpu_instance_id != 0xFFFFFFFFU) { // NVML's "not a MIG instance"
        found->gpu_instance = info.gpu_instance_id;
      }
    }
    return {};
  }
  return std::string(call) + ": the list kept growing";
}
} // namespace

ProcessListing NvmlDevice::processes() const {
  const auto& api = m_nvml->api();
  ProcessListing listing;
  auto problem = list_processes(api.compute_running_processes, "nvmlDeviceGetComputeRunningProcesses_v3",
                                m_handle, false, listing.processes);
  if (problem.empty()) {
    problem = list_processes(api.graphics_running_processes, "nvmlDeviceGetGraphicsRunningProcesses_v3",
                             m_handle, true, listing.processes);
  }
  listing.known = problem.empty();
  listing.unknown_reason = std::move(problem);
  std::sort(listing.processes.begin(), listing.processes.end(),
            [](const NvmlProcess& a, const NvmlProcess& b) { return a.pid < b.pid; });
  return listing;
}

std::optional<unsigned> NvmlDevice::utilization_pct() const {
  nvml::Utilization rates{};
  if (const auto fn = m_nvml->api().utilization_rates;
      fn != nullptr && fn(m_handle, &rates) == nvml::k_success) {
    return rates.gpu;
  }
  return std::nullopt;
}

std::optional<bool> NvmlDevice::persistence_mode() const {
  nvml::EnableState state = 0;
  if (const auto fn = m_nvml->api().persistence_mode;
      fn != nullptr && fn(m_handle, &state) == nvml::k_success) {
    return state != 0;
  }
  return std::nullopt;
}

std::vector<std::string> new_memory_errors(const MemoryCounters& before, const MemoryCounters& after) {
  std::vector<std::string> rose;
  const auto compare = [&rose](const char* name, const auto& was, const auto& now) {
    if (was && now && *now > *was) {
      rose.push_back(std::string(name) + " +" + std::to_string(*now - *was));
    }
  };
  compare("ecc_uncorrected", before.ecc_uncorrected, after.ecc_uncorrected);
  compare("ecc_corrected", before.ecc_corrected, after.ecc_corrected);
  compare("remapped_rows_uncorrectable", before.remapped_uncorrectable, after.remapped_uncorrectable);
  compare("remapped_rows_correctable", before.remapped_correctable, after.remapped_correctable);
  if (after.remap_pending.value_or(false) && !before.remap_pending.value_or(false)) {
    rose.emplace_back("a row remap became pending");
  }
  if (after.remap_failure.value_or(false) && !before.remap_failure.value_or(false)) {
    rose.emplace_back("a row remap failed");
  }
  return rose;
}

ClockSampler::ClockSampler(const NvmlDevice& device, std::chrono::milliseconds interval)
    : m_device(device), m_interval(interval), m_started(std::chrono::steady_clock::now()) {
  m_thread = std::thread([this] {
    while (true) {
      const double at =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - m_started).count();
      auto sample = m_device.sample(at);
      {
        const std::lock_guard lock(m_lock);
        m_samples.push_back(sample);
      }
      const auto wake = std::chrono::steady_clock::now() + m_interval;
      while (std::chrono::steady_clock::now() < wake) {
        if (m_stop.load()) {
          return;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
  });
}

ClockSampler::~ClockSampler() {
  static_cast<void>(stop());
}

std::vector<ClockSample> ClockSampler::stop() {
  m_stop.store(true);
  if (m_thread.joinable()) {
    m_thread.join();
  }
  const std::lock_guard lock(m_lock);
  return m_samples;
}

std::size_t ClockSampler::taken() {
  const std::lock_guard lock(m_lock);
  return m_samples.size();
}

} // namespace cudadiag::selftest
