// probe_nvml: loads one libnvidia-ml file and asks NVML for the driver's versions and, per device,
// identity, PCIe link, ECC, row remapping, persistence, MIG and clock event reasons. Any per-field
// NVML error (NOT_SUPPORTED under VMs and gVisor, NO_PERMISSION, …) makes that field null and is
// named in the device's "errors"; it is never a failure of the probe.

#include "cuda_api/library.hpp"
#include "cuda_api/nvml.hpp"
#include "verify/probe_support.hpp"
#include "verify/probes.hpp"
#include "worker/child.hpp"

#include <array>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::verify {

namespace {

using worker::report_phase;
namespace nvml = cuda_api::nvml;
using cuda_api::DlHandle;
using cuda_api::MissingSymbols;
using cuda_api::SymbolResolver;

// The typed symbol table. A null entry was absent from the library (and is in missing_symbols,
// unless a fallback was found).
struct NvmlApi {
  nvml::InitFn init = nullptr;
  nvml::ShutdownFn shutdown = nullptr;
  nvml::ErrorStringFn error_string = nullptr;
  nvml::SystemGetStringFn system_get_driver_version = nullptr;
  nvml::SystemGetStringFn system_get_nvml_version = nullptr;
  nvml::SystemGetCudaDriverVersionFn system_get_cuda_driver_version = nullptr;
  const char* cuda_driver_version_api = nullptr;
  nvml::DeviceGetCountFn device_get_count = nullptr;
  nvml::DeviceGetHandleByIndexFn device_get_handle_by_index = nullptr;
  nvml::DeviceGetStringFn device_get_name = nullptr;
  nvml::DeviceGetStringFn device_get_uuid = nullptr;
  nvml::DeviceGetPciInfoFn device_get_pci_info = nullptr;
  nvml::DeviceGetUintFn device_get_curr_pcie_link_generation = nullptr;
  nvml::DeviceGetUintFn device_get_max_pcie_link_generation = nullptr;
  nvml::DeviceGetUintFn device_get_curr_pcie_link_width = nullptr;
  nvml::DeviceGetUintFn device_get_max_pcie_link_width = nullptr;
  nvml::DeviceGetEccModeFn device_get_ecc_mode = nullptr;
  nvml::DeviceGetTotalEccErrorsFn device_get_total_ecc_errors = nullptr;
  nvml::DeviceGetRemappedRowsFn device_get_remapped_rows = nullptr;
  nvml::DeviceGetPersistenceModeFn device_get_persistence_mode = nullptr;
  nvml::DeviceGetMigModeFn device_get_mig_mode = nullptr;
  nvml::DeviceGetClocksEventReasonsFn device_get_clocks_event_reasons = nullptr;
  const char* clocks_event_reasons_api = nullptr;
};

// Resolves the first of `names` that is present; `api` receives its name.
template <class Fn>
Fn resolve_first(const DlHandle& handle, std::initializer_list<const char*> names, const char*& api,
                 MissingSymbols& missing) {
  for (const char* name : names) {
    if (Fn fn = handle.symbol<Fn>(name); fn != nullptr) {
      api = name;
      return fn;
    }
  }
  missing.add(*names.begin());
  return nullptr;
}

NvmlApi resolve_api(const DlHandle& handle, MissingSymbols& missing) {
  const SymbolResolver sym(handle, missing);
  NvmlApi api;
  api.init = sym.require<nvml::InitFn>("nvmlInit_v2");
  api.shutdown = sym.require<nvml::ShutdownFn>("nvmlShutdown");
  api.error_string = sym.require<nvml::ErrorStringFn>("nvmlErrorString");
  api.system_get_driver_version = sym.require<nvml::SystemGetStringFn>("nvmlSystemGetDriverVersion");
  api.system_get_nvml_version = sym.require<nvml::SystemGetStringFn>("nvmlSystemGetNVMLVersion");
  // _v2 asks libcuda.so.1; the original returns "a known supported version" when libcuda is absent.
  api.system_get_cuda_driver_version = resolve_first<nvml::SystemGetCudaDriverVersionFn>(
      handle, {"nvmlSystemGetCudaDriverVersion_v2", "nvmlSystemGetCudaDriverVersion"},
      api.cuda_driver_version_api, missing);
  api.device_get_count = sym.require<nvml::DeviceGetCountFn>("nvmlDeviceGetCount_v2");
  api.device_get_handle_by_index =
      sym.require<nvml::DeviceGetHandleByIndexFn>("nvmlDeviceGetHandleByIndex_v2");
  api.device_get_name = sym.require<nvml::DeviceGetStringFn>("nvmlDeviceGetName");
  api.device_get_uuid = sym.require<nvml::DeviceGetStringFn>("nvmlDeviceGetUUID");
  api.device_get_pci_info = sym.require<nvml::DeviceGetPciInfoFn>("nvmlDeviceGetPciInfo_v3");
  api.device_get_curr_pcie_link_generation =
      sym.require<nvml::DeviceGetUintFn>("nvmlDeviceGetCurrPcieLinkGeneration");
  api.device_get_max_pcie_link_generation =
      sym.require<nvml::DeviceGetUintFn>("nvmlDeviceGetMaxPcieLinkGeneration");
  api.device_get_curr_pcie_link_width = sym.require<nvml::DeviceGetUintFn>("nvmlDeviceGetCurrPcieLinkWidth");
  api.device_get_max_pcie_link_width = sym.require<nvml::DeviceGetUintFn>("nvmlDeviceGetMaxPcieLinkWidth");
  api.device_get_ecc_mode = sym.require<nvml::DeviceGetEccModeFn>("nvmlDeviceGetEccMode");
  api.device_get_total_ecc_errors =
      sym.require<nvml::DeviceGetTotalEccErrorsFn>("nvmlDeviceGetTotalEccErrors");
  api.device_get_remapped_rows = sym.require<nvml::DeviceGetRemappedRowsFn>("nvmlDeviceGetRemappedRows");
  api.device_get_persistence_mode =
      sym.require<nvml::DeviceGetPersistenceModeFn>("nvmlDeviceGetPersistenceMode");
  api.device_get_mig_mode = sym.require<nvml::DeviceGetMigModeFn>("nvmlDeviceGetMigMode");
  // The Throttle spelling is DEPRECATED(13.0) but is all that drivers before the rename export.
  api.device_get_clocks_event_reasons = resolve_first<nvml::DeviceGetClocksEventReasonsFn>(
      handle, {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"},
      api.clocks_event_reasons_api, missing);
  return api;
}

// The enumerator name from nvml.h, the library's own text.
NvmlReturnInfo return_info(const NvmlApi& api, nvml::Return code) {
  const std::string_view name = nvml::return_name(code);
  NvmlReturnInfo info{code, name.empty() ? std::nullopt : std::optional(std::string(name)), std::nullopt};
  if (api.error_string != nullptr) {
    report_phase("nvmlErrorString");
    if (const char* text = api.error_string(code); text != nullptr) {
      info.description = library_text(text);
    }
  }
  return info;
}

std::string error_name(nvml::Return code) {
  const std::string_view name = nvml::return_name(code);
  return name.empty() ? "NVML error " + std::to_string(code) : std::string(name);
}

// Announces and makes one per-device call; a non-success code is recorded in `errors` under the
// function's name. Returns whether it succeeded.
class DeviceCalls {
public:
  DeviceCalls(unsigned index, std::map<std::string, std::string>& errors)
      : m_index(index), m_errors(errors) {}

  template <class Fn, class... Args> bool call(const char* name, Fn fn, Args... args) {
    if (fn == nullptr) {
      return false; // in missing_symbols already
    }
    report_phase(std::string(name) + " (device " + std::to_string(m_index) + ")");
    const nvml::Return code = fn(args...);
    if (code != nvml::k_success) {
      m_errors[name] = error_name(code);
      return false;
    }
    return true;
  }

private:
  unsigned m_index;
  std::map<std::string, std::string>& m_errors;
};

bool enable_state(nvml::EnableState state) {
  return state == nvml::k_feature_enabled;
}

NvmlDevice probe_device(const NvmlApi& api, unsigned index) {
  NvmlDevice device;
  device.index = index;
  DeviceCalls calls(index, device.errors);

  nvml::Device handle = nullptr;
  if (!calls.call("nvmlDeviceGetHandleByIndex_v2", api.device_get_handle_by_index, index, &handle)) {
    return device;
  }

  std::array<char, nvml::k_device_name_buffer_size> name{};
  if (calls.call("nvmlDeviceGetName", api.device_get_name, handle, name.data(),
                 nvml::k_device_name_buffer_size)) {
    device.name = library_text(name.data(), name.size());
  }
  std::array<char, nvml::k_device_uuid_buffer_size> uuid{};
  if (calls.call("nvmlDeviceGetUUID", api.device_get_uuid, handle, uuid.data(),
                 nvml::k_device_uuid_buffer_size)) {
    device.uuid = library_text(uuid.data(), uuid.size());
  }
  nvml::PciInfo pci{};
  if (calls.call("nvmlDeviceGetPciInfo_v3", api.device_get_pci_info, handle, &pci)) {
    device.pci_bus_id = library_text(pci.bus_id, sizeof pci.bus_id);
    device.pci_device_id = pci.pci_device_id;
  }

  NvmlPcie pcie;
  const auto link_value = [&](std::optional<unsigned>& field, const char* fn_name, nvml::DeviceGetUintFn fn) {
    unsigned value = 0;
    if (calls.call(fn_name, fn, handle, &value)) {
      field = value;
    }
  };
  link_value(pcie.gen_current, "nvmlDeviceGetCurrPcieLinkGeneration",
             api.device_get_curr_pcie_link_generation);
  link_value(pcie.gen_max, "nvmlDeviceGetMaxPcieLinkGeneration", api.device_get_max_pcie_link_generation);
  link_value(pcie.width_current, "nvmlDeviceGetCurrPcieLinkWidth", api.device_get_curr_pcie_link_width);
  link_value(pcie.width_max, "nvmlDeviceGetMaxPcieLinkWidth", api.device_get_max_pcie_link_width);
  device.pcie = pcie;

  nvml::EnableState ecc_current = 0;
  nvml::EnableState ecc_pending = 0;
  if (calls.call("nvmlDeviceGetEccMode", api.device_get_ecc_mode, handle, &ecc_current, &ecc_pending)) {
    device.ecc = NvmlEcc{enable_state(ecc_current), enable_state(ecc_pending)};
  } else {
    device.ecc = NvmlEcc{};
  }
  unsigned long long uncorrected = 0;
  if (calls.call("nvmlDeviceGetTotalEccErrors", api.device_get_total_ecc_errors, handle,
                 nvml::k_memory_error_type_uncorrected, nvml::k_aggregate_ecc, &uncorrected)) {
    device.ecc_uncorrected_aggregate = uncorrected;
  }
  unsigned correctable = 0;
  unsigned uncorrectable = 0;
  unsigned pending = 0;
  unsigned failed = 0;
  if (calls.call("nvmlDeviceGetRemappedRows", api.device_get_remapped_rows, handle, &correctable,
                 &uncorrectable, &pending, &failed)) {
    device.remapped_rows = NvmlRemappedRows{correctable, uncorrectable, pending != 0, failed != 0};
  }
  nvml::EnableState persistence = 0;
  if (calls.call("nvmlDeviceGetPersistenceMode", api.device_get_persistence_mode, handle, &persistence)) {
    device.persistence_mode = enable_state(persistence);
  }
  unsigned mig_current = 0;
  unsigned mig_pending = 0;
  if (calls.call("nvmlDeviceGetMigMode", api.device_get_mig_mode, handle, &mig_current, &mig_pending)) {
    device.mig_mode = NvmlMigMode{mig_current == nvml::k_mig_enable, mig_pending == nvml::k_mig_enable};
  }
  unsigned long long reasons = 0;
  if (api.clocks_event_reasons_api != nullptr &&
      calls.call(api.clocks_event_reasons_api, api.device_get_clocks_event_reasons, handle, &reasons)) {
    NvmlClocksEventReasons active{reasons, {}};
    for (const auto& reason : nvml::k_clocks_event_reasons) {
      if ((reasons & reason.bit) != 0) {
        active.active.emplace_back(reason.name);
      }
    }
    device.clocks_event_reasons = active;
  }
  return device;
}

void probe(const std::string& path, NvmlFacts& result) {
  report_phase("dlopen");
  const DlHandle handle(path);
  if (!handle.loaded()) {
    result.dlopen_error = library_text(handle.error().c_str());
    return;
  }
  result.loaded = true;
  MissingSymbols missing;
  const NvmlApi api = resolve_api(handle, missing);
  result.missing_symbols = missing.sorted();
  if (api.init == nullptr) {
    return;
  }

  report_phase("nvmlInit_v2");
  const nvml::Return init = api.init();
  result.init = return_info(api, init);
  if (init != nvml::k_success) {
    return;
  }

  auto& errors = result.errors;
  const auto system_call = [&](const char* name, auto fn, auto... args) {
    if (fn == nullptr) {
      return false;
    }
    report_phase(name);
    const nvml::Return code = fn(args...);
    if (code != nvml::k_success) {
      errors[name] = error_name(code);
      return false;
    }
    return true;
  };

  std::array<char, nvml::k_system_driver_version_buffer_size> driver{};
  if (system_call("nvmlSystemGetDriverVersion", api.system_get_driver_version, driver.data(),
                  nvml::k_system_driver_version_buffer_size)) {
    result.driver_version = library_text(driver.data(), driver.size());
  }
  std::array<char, nvml::k_system_nvml_version_buffer_size> nvml_version{};
  if (system_call("nvmlSystemGetNVMLVersion", api.system_get_nvml_version, nvml_version.data(),
                  nvml::k_system_nvml_version_buffer_size)) {
    result.nvml_version = library_text(nvml_version.data(), nvml_version.size());
  }
  int cuda_driver_version = 0;
  if (api.cuda_driver_version_api != nullptr &&
      system_call(api.cuda_driver_version_api, api.system_get_cuda_driver_version, &cuda_driver_version)) {
    result.cuda_driver_version = cuda_driver_version;
    result.cuda_driver_version_api = api.cuda_driver_version_api;
  }
  unsigned count = 0;
  if (system_call("nvmlDeviceGetCount_v2", api.device_get_count, &count)) {
    result.device_count = count;
    constexpr unsigned k_max_devices = 256; // a garbage count must not make the probe run for ever
    for (unsigned index = 0; index < count && index < k_max_devices; ++index) {
      result.devices.push_back(probe_device(api, index));
    }
  }

  if (api.shutdown != nullptr) {
    report_phase("nvmlShutdown");
    if (const nvml::Return code = api.shutdown(); code != nvml::k_success) {
      errors["nvmlShutdown"] = error_name(code);
    }
  }
}

} // namespace

NvmlFacts probe_nvml(const std::string& path) {
  return run_probe<NvmlFacts>(path, [&](NvmlFacts& result) { probe(path, result); });
}

} // namespace cudadiag::verify
