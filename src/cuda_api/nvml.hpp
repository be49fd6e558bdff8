#pragma once
// The slice of NVML (libnvidia-ml.so.1) that the NVML probe calls, mirrored from nvml.h (NVML API
// version 13, read from the nvidia-nvml-dev 13.5.37 wheel's header) so that nothing here needs the
// header at build time. Symbol names are the versioned ones the header's #defines map to
// (nvmlInit -> nvmlInit_v2, nvmlDeviceGetCount -> _v2, nvmlDeviceGetHandleByIndex -> _v2,
// nvmlDeviceGetPciInfo -> _v3): dlsym needs those. The tests check every prototype, constant and
// the nvmlPciInfo_t layout against the real nvml.h when it is available.

#include <array>
#include <cstdint>
#include <string_view>

namespace cudadiag::cuda_api::nvml {

using Return = unsigned int;      // nvmlReturn_t (a C enum of non-negative values)
using EnableState = unsigned int; // nvmlEnableState_t
struct DeviceOpaque;              // struct nvmlDevice_st
using Device = DeviceOpaque*;     // nvmlDevice_t

constexpr Return k_success = 0;                   // NVML_SUCCESS
constexpr Return k_error_uninitialized = 1;       // NVML_ERROR_UNINITIALIZED
constexpr Return k_error_not_supported = 3;       // NVML_ERROR_NOT_SUPPORTED: "unknown", not a failure
constexpr Return k_error_no_permission = 4;       // NVML_ERROR_NO_PERMISSION
constexpr Return k_error_driver_not_loaded = 9;   // NVML_ERROR_DRIVER_NOT_LOADED
constexpr Return k_error_function_not_found = 13; // NVML_ERROR_FUNCTION_NOT_FOUND
constexpr Return k_error_unknown = 999;           // NVML_ERROR_UNKNOWN

constexpr EnableState k_feature_disabled = 0; // NVML_FEATURE_DISABLED
constexpr EnableState k_feature_enabled = 1;  // NVML_FEATURE_ENABLED
constexpr unsigned k_mig_disable = 0;         // NVML_DEVICE_MIG_DISABLE
constexpr unsigned k_mig_enable = 1;          // NVML_DEVICE_MIG_ENABLE

constexpr unsigned k_memory_error_type_corrected = 0;   // NVML_MEMORY_ERROR_TYPE_CORRECTED
constexpr unsigned k_memory_error_type_uncorrected = 1; // NVML_MEMORY_ERROR_TYPE_UNCORRECTED
constexpr unsigned k_volatile_ecc = 0;                  // NVML_VOLATILE_ECC (since the last driver load)
constexpr unsigned k_aggregate_ecc = 1;                 // NVML_AGGREGATE_ECC

constexpr unsigned k_clock_graphics = 0;  // NVML_CLOCK_GRAPHICS (nvmlClockType_t)
constexpr unsigned k_clock_sm = 1;        // NVML_CLOCK_SM
constexpr unsigned k_clock_mem = 2;       // NVML_CLOCK_MEM
constexpr unsigned k_temperature_gpu = 0; // NVML_TEMPERATURE_GPU (nvmlTemperatureSensors_t)

constexpr unsigned k_system_driver_version_buffer_size = 80; // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
constexpr unsigned k_system_nvml_version_buffer_size = 80;   // NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE
constexpr unsigned k_device_name_buffer_size = 96;           // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned k_device_uuid_buffer_size = 96;           // NVML_DEVICE_UUID_V2_BUFFER_SIZE
constexpr unsigned k_pci_bus_id_buffer_size = 32;            // NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE
constexpr unsigned k_pci_bus_id_legacy_buffer_size = 16;     // NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE

// nvmlPciInfo_t, as filled by nvmlDeviceGetPciInfo_v3.
struct PciInfo {
  char bus_id_legacy[k_pci_bus_id_legacy_buffer_size]; // busIdLegacy
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pci_device_id;            // pciDeviceId: device id << 16 | vendor id
  unsigned int pci_sub_system_id;        // pciSubSystemId
  char bus_id[k_pci_bus_id_buffer_size]; // busId: "00000000:19:00.0"
};

// Clock event ("throttle") reason bits: nvmlClocksEventReason* (nvmlClocksThrottleReason* before
// 12.x's rename), with the names the report uses.
struct ClocksEventReason {
  std::uint64_t bit;
  std::string_view name;
};
inline constexpr std::array<ClocksEventReason, 11> k_clocks_event_reasons{{
    {0x1, "gpu_idle"},                    // nvmlClocksEventReasonGpuIdle
    {0x2, "applications_clocks_setting"}, // nvmlClocksEventReasonApplicationsClocksSetting
    {0x4, "sw_power_cap"},                // nvmlClocksEventReasonSwPowerCap
    {0x8, "hw_slowdown"},                 // nvmlClocksThrottleReasonHwSlowdown
    {0x10, "sync_boost"},                 // nvmlClocksEventReasonSyncBoost
    {0x20, "sw_thermal_slowdown"},        // nvmlClocksEventReasonSwThermalSlowdown
    {0x40, "hw_thermal_slowdown"},        // nvmlClocksThrottleReasonHwThermalSlowdown
    {0x80, "hw_power_brake_slowdown"},    // nvmlClocksThrottleReasonHwPowerBrakeSlowdown
    {0x100, "display_clock_setting"},     // nvmlClocksEventReasonDisplayClockSetting
    {0x200, "board_limit"},               // nvmlClocksEventReasonBoardLimit (13.x header)
    {0x400, "reliability"},               // nvmlClocksEventReasonReliability (13.x header)
}};

// nvmlReturn_t's enumerator names (NVML API 13); nullptr-free, "" for an unknown code.
std::string_view return_name(Return code);

// Prototypes, in the order the probe calls them; each comment names the symbols it types.
using InitFn = Return (*)();                   // nvmlInit_v2
using ShutdownFn = Return (*)();               // nvmlShutdown
using ErrorStringFn = const char* (*)(Return); // nvmlErrorString
// nvmlSystemGetDriverVersion, nvmlSystemGetNVMLVersion
using SystemGetStringFn = Return (*)(char*, unsigned int);
// nvmlSystemGetCudaDriverVersion_v2, nvmlSystemGetCudaDriverVersion
using SystemGetCudaDriverVersionFn = Return (*)(int*);
// nvmlDeviceGetCount_v2
using DeviceGetCountFn = Return (*)(unsigned int*);
// nvmlDeviceGetHandleByIndex_v2
using DeviceGetHandleByIndexFn = Return (*)(unsigned int, Device*);
// nvmlDeviceGetName, nvmlDeviceGetUUID
using DeviceGetStringFn = Return (*)(Device, char*, unsigned int);
// nvmlDeviceGetPciInfo_v3
using DeviceGetPciInfoFn = Return (*)(Device, PciInfo*);
// nvmlDeviceGetCurrPcieLinkGeneration, nvmlDeviceGetMaxPcieLinkGeneration,
// nvmlDeviceGetCurrPcieLinkWidth, nvmlDeviceGetMaxPcieLinkWidth
using DeviceGetUintFn = Return (*)(Device, unsigned int*);
// nvmlDeviceGetEccMode(device, &current, &pending)
using DeviceGetEccModeFn = Return (*)(Device, EnableState*, EnableState*);
// nvmlDeviceGetTotalEccErrors(device, nvmlMemoryErrorType_t, nvmlEccCounterType_t, &count)
using DeviceGetTotalEccErrorsFn = Return (*)(Device, unsigned int, unsigned int, unsigned long long*);
// nvmlDeviceGetRemappedRows(device, &correctable, &uncorrectable, &is_pending, &failure_occurred)
using DeviceGetRemappedRowsFn = Return (*)(Device, unsigned int*, unsigned int*, unsigned int*,
                                           unsigned int*);
// nvmlDeviceGetPersistenceMode
using DeviceGetPersistenceModeFn = Return (*)(Device, EnableState*);
// nvmlDeviceGetMigMode(device, &current, &pending)
using DeviceGetMigModeFn = Return (*)(Device, unsigned int*, unsigned int*);
// nvmlDeviceGetCurrentClocksEventReasons, nvmlDeviceGetCurrentClocksThrottleReasons (DEPRECATED(13.0))
using DeviceGetClocksEventReasonsFn = Return (*)(Device, unsigned long long*);

// The self-test's health reader (selftest/nvml_health.hpp) also calls:
// nvmlDeviceGetHandleByPciBusId_v2(pciBusId, &device)
using DeviceGetHandleByPciBusIdFn = Return (*)(const char*, Device*);
// nvmlDeviceGetClockInfo, nvmlDeviceGetMaxClockInfo, nvmlDeviceGetApplicationsClock
// (device, nvmlClockType_t, &MHz)
using DeviceGetClockFn = Return (*)(Device, unsigned int, unsigned int*);
// nvmlDeviceGetTemperature(device, nvmlTemperatureSensors_t, &degrees C)
using DeviceGetTemperatureFn = Return (*)(Device, unsigned int, unsigned int*);
// nvmlDeviceGetPowerUsage, nvmlDeviceGetEnforcedPowerLimit (milliwatts): DeviceGetUintFn above

// The self-test's busy check (selftest/gpu_busy.hpp) reads the processes on the GPU and its
// utilisation:
// nvmlProcessInfo_t as the _v3 process queries fill it (nvmlProcessInfo_v2_t's layout).
struct ProcessInfo {
  unsigned int pid;
  unsigned long long used_gpu_memory; // usedGpuMemory, bytes; k_value_not_available when unknown
  unsigned int gpu_instance_id;       // gpuInstanceId (MIG); 0xFFFFFFFF when not MIG
  unsigned int compute_instance_id;   // computeInstanceId
};
inline constexpr unsigned long long k_value_not_available = ~0ULL; // NVML_VALUE_NOT_AVAILABLE
constexpr Return k_error_insufficient_size = 7;                    // NVML_ERROR_INSUFFICIENT_SIZE
// nvmlDeviceGetComputeRunningProcesses_v3, nvmlDeviceGetGraphicsRunningProcesses_v3
// (device, &count in: capacity, out: needed, infos)
using DeviceGetRunningProcessesFn = Return (*)(Device, unsigned int*, ProcessInfo*);
// nvmlUtilization_t: percent of the last sample period (1/6 s to 1 s) the GPU / memory was busy.
struct Utilization {
  unsigned int gpu;
  unsigned int memory;
};
// nvmlDeviceGetUtilizationRates
using DeviceGetUtilizationRatesFn = Return (*)(Device, Utilization*);

} // namespace cudadiag::cuda_api::nvml
