#include "cuda_api/library.hpp"
#include "cuda_api/nvml.hpp"
#include "loader/ld_so_cache.hpp"
#include "skip.hpp"
#include "temp_tree.hpp"
#include "verify/facts_codec.hpp"
#include "verify/probes.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>

#if __has_include(<nvml.h>)
#define CUDADIAG_TEST_HAVE_NVML_HEADER 1
#include <nvml.h>
#endif

using cudadiag::testing::TempTree;
using nlohmann::json;
namespace verify = cudadiag::verify;
namespace nvml = cudadiag::cuda_api::nvml;

#ifdef CUDADIAG_TEST_HAVE_NVML_HEADER
// Prototypes: each mirrored type against the header's declaration of the versioned symbol.
static_assert(cudadiag::cuda_api::abi_compatible<nvml::InitFn, decltype(&::nvmlInit_v2)>());
static_assert(cudadiag::cuda_api::abi_compatible<nvml::ShutdownFn, decltype(&::nvmlShutdown)>());
static_assert(cudadiag::cuda_api::abi_compatible<nvml::ErrorStringFn, decltype(&::nvmlErrorString)>());
static_assert(
    cudadiag::cuda_api::abi_compatible<nvml::SystemGetStringFn, decltype(&::nvmlSystemGetDriverVersion)>());
static_assert(
    cudadiag::cuda_api::abi_compatible<nvml::SystemGetStringFn, decltype(&::nvmlSystemGetNVMLVersion)>());
static_assert(cudadiag::cuda_api::abi_compatible<nvml::SystemGetCudaDriverVersionFn,
                                                 decltype(&::nvmlSystemGetCudaDriverVersion)>());
static_assert(cudadiag::cuda_api::abi_compatible<nvml::SystemGetCudaDriverVersionFn,
                                                 decltype(&::nvmlSystemGetCudaDriverVersion_v2)>());
static_assert(
    cudadiag::cuda_api::abi_compatible<nvml::DeviceGetCountFn, decltype(&::nvmlDeviceGetCount_v2)>());
static_assert(cudadiag::cuda_api::abi_compatible<nvml::DeviceGetHandleByIndexFn,
                                                 decltype(&::nvmlDeviceGetHandleByIndex_v2)>());
static_assert(cudadiag::cuda_api::abi_compatible<nvml::DeviceGetStringFn, decltype(&::nvmlDeviceGetName)>());
static_assert(cudadiag::cuda_api::abi_compatible<nvml::DeviceGetStringFn, decltype(&::nvmlDeviceGetUUID)>());
static_assert(
    cudadiag::cuda_api::abi_compatible<nvml::DeviceGetPciInfoFn, decltype(&::nvmlDeviceGetPciInfo_v3)>());
static_assert(cudadiag::cuda_api::abi_compatible<nvml::DeviceGetUintFn,
                                                 decltype(&::nvmlDeviceGetCurrPcieLinkGeneration)>());
static_assert(cudadiag::cuda_api::abi_compatible<nvml::DeviceGetUintFn,
                                                 decltype(&::nvmlDeviceGetMaxPcieLinkGeneration)>());
static_assert(
    cudadiag::cuda_api::abi_compatible<nvml::DeviceGetUintFn, decltype(&::nvmlDeviceGetCurrPcieLinkWidth)>());
static_assert(
    cudadiag::cuda_api::abi_compatible<nvml::DeviceGetUintFn, decltype(&::nvmlDeviceGetMaxPcieLinkWidth)>());
static_assert(
    cudadiag::cuda_api::abi_compatible<nvml::DeviceGetEccModeFn, decltype(&::nvmlDeviceGetEccMode)>());
static_assert(cudadiag::cuda_api::abi_compatible<nvml::DeviceGetTotalEccErrorsFn,
                                                 decltype(&::nvmlDeviceGetTotalEccErrors)>());
static_assert(cudadiag::cuda_api::abi_compatible<nvml::DeviceGetRemappedRowsFn,
                                                 decltype(&::nvmlDeviceGetRemappedRows)>());
static_assert(cudadiag::cuda_api::abi_compatible<nvml::DeviceGetPersistenceModeFn,
                                                 decltype(&::nvmlDeviceGetPersistenceMode)>());
static_assert(
    cudadiag::cuda_api::abi_compatible<nvml::DeviceGetMigModeFn, decltype(&::nvmlDeviceGetMigMode)>());
static_assert(cudadiag::cuda_api::abi_compatible<nvml::DeviceGetClocksEventReasonsFn,
                                                 decltype(&::nvmlDeviceGetCurrentClocksEventReasons)>());
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static_assert(cudadiag::cuda_api::abi_compatible<nvml::DeviceGetClocksEventReasonsFn,
                                                 decltype(&::nvmlDeviceGetCurrentClocksThrottleReasons)>());
#pragma GCC diagnostic pop

// nvmlPciInfo_t, member by member.
static_assert(sizeof(nvml::PciInfo) == sizeof(nvmlPciInfo_t));
static_assert(alignof(nvml::PciInfo) == alignof(nvmlPciInfo_t));
static_assert(offsetof(nvml::PciInfo, bus_id_legacy) == offsetof(nvmlPciInfo_t, busIdLegacy));
static_assert(offsetof(nvml::PciInfo, domain) == offsetof(nvmlPciInfo_t, domain));
static_assert(offsetof(nvml::PciInfo, bus) == offsetof(nvmlPciInfo_t, bus));
static_assert(offsetof(nvml::PciInfo, device) == offsetof(nvmlPciInfo_t, device));
static_assert(offsetof(nvml::PciInfo, pci_device_id) == offsetof(nvmlPciInfo_t, pciDeviceId));
static_assert(offsetof(nvml::PciInfo, pci_sub_system_id) == offsetof(nvmlPciInfo_t, pciSubSystemId));
static_assert(offsetof(nvml::PciInfo, bus_id) == offsetof(nvmlPciInfo_t, busId));
static_assert(sizeof(nvml::PciInfo::bus_id) == NVML_DEVICE_PCI_BUS_ID_BUFFER_SIZE);
static_assert(sizeof(nvml::PciInfo::bus_id_legacy) == NVML_DEVICE_PCI_BUS_ID_BUFFER_V2_SIZE);

// The busy check's process and utilisation queries (NVML 12+: nvmlProcessInfo_t is the v2 layout).
static_assert(cudadiag::cuda_api::abi_compatible<nvml::DeviceGetRunningProcessesFn,
                                                 decltype(&::nvmlDeviceGetComputeRunningProcesses_v3)>());
static_assert(cudadiag::cuda_api::abi_compatible<nvml::DeviceGetRunningProcessesFn,
                                                 decltype(&::nvmlDeviceGetGraphicsRunningProcesses_v3)>());
static_assert(cudadiag::cuda_api::abi_compatible<nvml::DeviceGetUtilizationRatesFn,
                                                 decltype(&::nvmlDeviceGetUtilizationRates)>());
static_assert(sizeof(nvml::ProcessInfo) == sizeof(nvmlProcessInfo_t));
static_assert(offsetof(nvml::ProcessInfo, pid) == offsetof(nvmlProcessInfo_t, pid));
static_assert(offsetof(nvml::ProcessInfo, used_gpu_memory) == offsetof(nvmlProcessInfo_t, usedGpuMemory));
static_assert(offsetof(nvml::ProcessInfo, gpu_instance_id) == offsetof(nvmlProcessInfo_t, gpuInstanceId));
static_assert(offsetof(nvml::ProcessInfo, compute_instance_id) ==
              offsetof(nvmlProcessInfo_t, computeInstanceId));
static_assert(sizeof(nvml::Utilization) == sizeof(nvmlUtilization_t));
static_assert(offsetof(nvml::Utilization, memory) == offsetof(nvmlUtilization_t, memory));
static_assert(nvml::k_value_not_available == static_cast<unsigned long long>(NVML_VALUE_NOT_AVAILABLE));
static_assert(nvml::k_error_insufficient_size == NVML_ERROR_INSUFFICIENT_SIZE);

// Constants.
static_assert(nvml::k_success == NVML_SUCCESS);
static_assert(nvml::k_error_uninitialized == NVML_ERROR_UNINITIALIZED);
static_assert(nvml::k_error_not_supported == NVML_ERROR_NOT_SUPPORTED);
static_assert(nvml::k_error_no_permission == NVML_ERROR_NO_PERMISSION);
static_assert(nvml::k_error_driver_not_loaded == NVML_ERROR_DRIVER_NOT_LOADED);
static_assert(nvml::k_error_function_not_found == NVML_ERROR_FUNCTION_NOT_FOUND);
static_assert(nvml::k_error_unknown == NVML_ERROR_UNKNOWN);
static_assert(nvml::k_feature_disabled == NVML_FEATURE_DISABLED);
static_assert(nvml::k_feature_enabled == NVML_FEATURE_ENABLED);
static_assert(nvml::k_mig_disable == NVML_DEVICE_MIG_DISABLE);
static_assert(nvml::k_mig_enable == NVML_DEVICE_MIG_ENABLE);
static_assert(nvml::k_memory_error_type_uncorrected == NVML_MEMORY_ERROR_TYPE_UNCORRECTED);
static_assert(nvml::k_aggregate_ecc == NVML_AGGREGATE_ECC);
static_assert(nvml::k_system_driver_version_buffer_size == NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE);
static_assert(nvml::k_system_nvml_version_buffer_size == NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE);
static_assert(nvml::k_device_name_buffer_size == NVML_DEVICE_NAME_V2_BUFFER_SIZE);
static_assert(nvml::k_device_uuid_buffer_size == NVML_DEVICE_UUID_V2_BUFFER_SIZE);

// Clock event reason bits, row by row (the Hw* rows exist only under their Throttle names).
static_assert(nvml::k_clocks_event_reasons[0].bit == nvmlClocksThrottleReasonGpuIdle);
static_assert(nvml::k_clocks_event_reasons[1].bit == nvmlClocksThrottleReasonApplicationsClocksSetting);
static_assert(nvml::k_clocks_event_reasons[2].bit == nvmlClocksThrottleReasonSwPowerCap);
static_assert(nvml::k_clocks_event_reasons[3].bit == nvmlClocksThrottleReasonHwSlowdown);
static_assert(nvml::k_clocks_event_reasons[4].bit == nvmlClocksThrottleReasonSyncBoost);
static_assert(nvml::k_clocks_event_reasons[5].bit == nvmlClocksThrottleReasonSwThermalSlowdown);
static_assert(nvml::k_clocks_event_reasons[6].bit == nvmlClocksThrottleReasonHwThermalSlowdown);
static_assert(nvml::k_clocks_event_reasons[7].bit == nvmlClocksThrottleReasonHwPowerBrakeSlowdown);
static_assert(nvml::k_clocks_event_reasons[8].bit == nvmlClocksThrottleReasonDisplayClockSetting);
#ifdef nvmlClocksEventReasonBoardLimit
static_assert(nvml::k_clocks_event_reasons[9].bit == nvmlClocksEventReasonBoardLimit);
#endif
#ifdef nvmlClocksEventReasonReliability
static_assert(nvml::k_clocks_event_reasons[10].bit == nvmlClocksEventReasonReliability);
#endif
#endif

namespace {

// The fake NVML, held open by the test so that its mode can be set through its test hook without
// touching the environment; the probe's dlopen of the same path gets this same instance.
class FakeNvml {
public:
  explicit FakeNvml(const std::string& path, const char* mode = "") : m_path(path), m_handle(path) {
    REQUIRE(m_handle.loaded());
    m_set_mode = m_handle.symbol<SetModeFn>("cudadiag_fake_nvml_set_mode");
    m_init_count = m_handle.symbol<InitCountFn>("cudadiag_fake_nvml_init_count");
    const bool hooks_found = m_set_mode != nullptr && m_init_count != nullptr;
    REQUIRE(hooks_found);
    m_set_mode(mode);
  }
  ~FakeNvml() { m_set_mode(nullptr); }
  FakeNvml(const FakeNvml&) = delete;
  FakeNvml& operator=(const FakeNvml&) = delete;

  [[nodiscard]] json probe() const { return verify::to_json(verify::probe_nvml(m_path)); }
  [[nodiscard]] int init_count() const { return m_init_count(); }

private:
  using SetModeFn = void (*)(const char*);
  using InitCountFn = int (*)();
  std::string m_path;
  cudadiag::cuda_api::DlHandle m_handle;
  SetModeFn m_set_mode = nullptr;
  InitCountFn m_init_count = nullptr;
};

const json& only_device(const json& result) {
  REQUIRE(result.at("devices").size() == 1);
  return result.at("devices").at(0);
}

} // namespace

TEST_CASE("nvml probe: return names follow nvml.h") {
#ifdef CUDADIAG_TEST_HAVE_NVML_HEADER
#define CUDADIAG_CHECK_NAME(code) CHECK(nvml::return_name(code) == #code)
  CUDADIAG_CHECK_NAME(NVML_SUCCESS);
  CUDADIAG_CHECK_NAME(NVML_ERROR_UNINITIALIZED);
  CUDADIAG_CHECK_NAME(NVML_ERROR_INVALID_ARGUMENT);
  CUDADIAG_CHECK_NAME(NVML_ERROR_NOT_SUPPORTED);
  CUDADIAG_CHECK_NAME(NVML_ERROR_NO_PERMISSION);
  CUDADIAG_CHECK_NAME(NVML_ERROR_ALREADY_INITIALIZED);
  CUDADIAG_CHECK_NAME(NVML_ERROR_NOT_FOUND);
  CUDADIAG_CHECK_NAME(NVML_ERROR_INSUFFICIENT_SIZE);
  CUDADIAG_CHECK_NAME(NVML_ERROR_INSUFFICIENT_POWER);
  CUDADIAG_CHECK_NAME(NVML_ERROR_DRIVER_NOT_LOADED);
  CUDADIAG_CHECK_NAME(NVML_ERROR_TIMEOUT);
  CUDADIAG_CHECK_NAME(NVML_ERROR_IRQ_ISSUE);
  CUDADIAG_CHECK_NAME(NVML_ERROR_LIBRARY_NOT_FOUND);
  CUDADIAG_CHECK_NAME(NVML_ERROR_FUNCTION_NOT_FOUND);
  CUDADIAG_CHECK_NAME(NVML_ERROR_CORRUPTED_INFOROM);
  CUDADIAG_CHECK_NAME(NVML_ERROR_GPU_IS_LOST);
  CUDADIAG_CHECK_NAME(NVML_ERROR_RESET_REQUIRED);
  CUDADIAG_CHECK_NAME(NVML_ERROR_OPERATING_SYSTEM);
  CUDADIAG_CHECK_NAME(NVML_ERROR_LIB_RM_VERSION_MISMATCH);
  CUDADIAG_CHECK_NAME(NVML_ERROR_IN_USE);
  CUDADIAG_CHECK_NAME(NVML_ERROR_MEMORY);
  CUDADIAG_CHECK_NAME(NVML_ERROR_NO_DATA);
  CUDADIAG_CHECK_NAME(NVML_ERROR_VGPU_ECC_NOT_SUPPORTED);
  CUDADIAG_CHECK_NAME(NVML_ERROR_INSUFFICIENT_RESOURCES);
  CUDADIAG_CHECK_NAME(NVML_ERROR_FREQ_NOT_SUPPORTED);
  CUDADIAG_CHECK_NAME(NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
  CUDADIAG_CHECK_NAME(NVML_ERROR_DEPRECATED);
  CUDADIAG_CHECK_NAME(NVML_ERROR_NOT_READY);
  CUDADIAG_CHECK_NAME(NVML_ERROR_GPU_NOT_FOUND);
  CUDADIAG_CHECK_NAME(NVML_ERROR_INVALID_STATE);
  CUDADIAG_CHECK_NAME(NVML_ERROR_UNKNOWN);
#undef CUDADIAG_CHECK_NAME
#else
  MESSAGE("nvml.h not found: the mirrored NVML prototypes, layout and constants are not checked against it");
  CHECK(nvml::return_name(3) == "NVML_ERROR_NOT_SUPPORTED");
  CHECK(nvml::return_name(999) == "NVML_ERROR_UNKNOWN");
#endif
  CHECK(nvml::return_name(30) == "NVML_ERROR_RESET_TYPE_NOT_SUPPORTED"); // NVML 13.x headers
  CHECK(nvml::return_name(31).empty());
  CHECK(nvml::return_name(998).empty());
}

TEST_CASE("nvml probe: the fake H200, everything supported") {
  FakeNvml fake(CUDADIAG_FAKE_NVML_LIB);
  const json result = fake.probe();
  INFO(result.dump(2));
  CHECK(result.at("library") == CUDADIAG_FAKE_NVML_LIB);
  CHECK(result.at("loaded") == true);
  CHECK(result.at("dlopen_error").is_null());
  CHECK(result.at("missing_symbols").empty());
  CHECK_FALSE(result.contains("probe_error"));
  CHECK(result.at("init") == json{{"code", 0}, {"name", "NVML_SUCCESS"}, {"description", "Success"}});
  CHECK(result.at("driver_version") == "580.95.05");
  CHECK(result.at("nvml_version") == "13.580.95.05");
  CHECK(result.at("cuda_driver_version") == 13000);
  CHECK(result.at("cuda_driver_version_api") == "nvmlSystemGetCudaDriverVersion_v2");
  CHECK(result.at("device_count") == 1);
  CHECK(result.at("errors").empty());

  const json& device = only_device(result);
  CHECK(device.at("index") == 0);
  CHECK(device.at("name") == "NVIDIA H200");
  CHECK(device.at("uuid") == "GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf");
  CHECK(device.at("pci_bus_id") == "00000000:19:00.0");
  CHECK(device.at("pci_device_id") == 0x233510de);
  CHECK(device.at("pcie") ==
        json{{"gen_current", 4}, {"gen_max", 5}, {"width_current", 16}, {"width_max", 16}});
  CHECK(device.at("ecc") == json{{"current", true}, {"pending", true}});
  CHECK(device.at("ecc_uncorrected_aggregate") == 0);
  CHECK(device.at("remapped_rows") ==
        json{{"correctable", 0}, {"uncorrectable", 0}, {"pending", false}, {"failed", false}});
  CHECK(device.at("persistence_mode") == true);
  CHECK(device.at("mig_mode") == json{{"current", false}, {"pending", false}});
  CHECK(device.at("clocks_event_reasons") == json{{"mask", 1}, {"active", {"gpu_idle"}}});
  CHECK(device.at("errors").empty());

  CHECK(fake.init_count() == 0); // nvmlShutdown balanced nvmlInit_v2
}

TEST_CASE("nvml probe: NOT_SUPPORTED makes a field unknown, not a failure") {
  FakeNvml fake(CUDADIAG_FAKE_NVML_LIB, "notsupported");
  const json result = fake.probe();
  INFO(result.dump(2));
  CHECK(result.at("init").at("code") == 0);
  const json& device = only_device(result);
  CHECK(device.at("remapped_rows").is_null());
  CHECK(device.at("errors") == json{{"nvmlDeviceGetRemappedRows", "NVML_ERROR_NOT_SUPPORTED"}});
  CHECK(device.at("name") == "NVIDIA H200"); // the rest is still there
  CHECK(device.at("ecc").at("current") == true);
  CHECK(device.at("clocks_event_reasons").at("mask") == 1);
  CHECK(fake.init_count() == 0);
}

TEST_CASE("nvml probe: clock event reasons are decoded by name") {
  FakeNvml fake(CUDADIAG_FAKE_NVML_LIB, "throttled");
  const json result = fake.probe();
  INFO(result.dump(2));
  CHECK(only_device(result).at("clocks_event_reasons") ==
        json{{"mask", 0x44}, {"active", {"sw_power_cap", "hw_thermal_slowdown"}}});
}

TEST_CASE("nvml probe: an nvmlInit_v2 failure is reported and nothing else is asked") {
  FakeNvml fake(CUDADIAG_FAKE_NVML_LIB, "error:9");
  const json result = fake.probe();
  INFO(result.dump(2));
  CHECK(result.at("loaded") == true);
  CHECK(result.at("init") ==
        json{{"code", 9}, {"name", "NVML_ERROR_DRIVER_NOT_LOADED"}, {"description", "Driver Not Loaded"}});
  CHECK(result.at("driver_version").is_null());
  CHECK(result.at("cuda_driver_version").is_null());
  CHECK(result.at("device_count").is_null());
  CHECK(result.at("devices").empty());
  CHECK(fake.init_count() == 0);

  FakeNvml unknown_code(CUDADIAG_FAKE_NVML_LIB, "error:4242");
  const json odd = unknown_code.probe();
  CHECK(odd.at("init") == json{{"code", 4242}, {"name", nullptr}, {"description", "Unknown Error"}});
}

TEST_CASE("nvml probe: an older driver's NVML, through the fallbacks") {
  FakeNvml fake(CUDADIAG_FAKE_NVML_LEGACY_LIB);
  const json result = fake.probe();
  INFO(result.dump(2));
  CHECK(result.at("missing_symbols") == json{"nvmlDeviceGetRemappedRows"});
  CHECK(result.at("cuda_driver_version") == 12020);
  CHECK(result.at("cuda_driver_version_api") == "nvmlSystemGetCudaDriverVersion");
  const json& device = only_device(result);
  CHECK(device.at("clocks_event_reasons") == json{{"mask", 1}, {"active", {"gpu_idle"}}});
  CHECK(device.at("remapped_rows").is_null());
  CHECK(device.at("errors").empty()); // absent is in missing_symbols, not an error
  CHECK(fake.init_count() == 0);
}

TEST_CASE("nvml probe: a path that cannot be loaded") {
  TempTree tree;
  const std::string path = tree.path("libnvidia-ml.so.1");
  const json result = verify::to_json(verify::probe_nvml(path));
  INFO(result.dump(2));
  CHECK(result.at("library") == path);
  CHECK(result.at("loaded") == false);
  REQUIRE(result.at("dlopen_error").is_string());
  CHECK(result.at("dlopen_error").get<std::string>().find("libnvidia-ml.so.1") != std::string::npos);
  CHECK(result.at("missing_symbols").empty());
}

TEST_CASE("nvml probe: the system's libnvidia-ml.so.1, when there is one") {
  // Found through ld.so.cache, not dlopen by name: in this process the fake (same SONAME) may still
  // be loaded, and a dlopen by name would return it.
  const auto cache = cudadiag::loader::read_ld_so_cache();
  const cudadiag::loader::LdCacheEntry* entry = cache ? cache->resolve("libnvidia-ml.so.1") : nullptr;
  if (entry == nullptr) {
    CUDADIAG_SKIP("no libnvidia-ml.so.1 in ld.so.cache on this machine");
  }
  const std::string path = entry->path;
  const json result = verify::to_json(verify::probe_nvml(path));
  INFO(result.dump(2));
  CHECK(result.at("loaded") == true);
  CHECK_FALSE(result.contains("probe_error"));
  REQUIRE(result.at("init").is_object());
  if (result.at("init").at("code") != 0) {
    CUDADIAG_SKIP("nvmlInit_v2 failed here: " << result.at("init").dump());
  }
  CHECK(result.at("driver_version").is_string());
  CHECK(result.at("cuda_driver_version").is_number_integer());
  REQUIRE(result.at("device_count").is_number_integer());
  CHECK(result.at("devices").size() == result.at("device_count").get<std::size_t>());
  for (const json& device : result.at("devices")) {
    CHECK(device.at("name").is_string());
    REQUIRE(device.at("uuid").is_string());
    CHECK(device.at("uuid").get<std::string>().rfind("GPU-", 0) == 0);
    CHECK(device.at("pci_bus_id").is_string());
  }
  MESSAGE("system NVML: driver " << result.at("driver_version") << ", CUDA "
                                 << result.at("cuda_driver_version") << ", " << result.at("device_count")
                                 << " device(s)");
}
