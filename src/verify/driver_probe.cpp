// probe_driver: loads one libcuda by path and asks it about itself (see probes.hpp for the contract).

#include "cuda_api/cuda_errors.hpp"
#include "cuda_api/driver.hpp"
#include "cuda_api/driver_resolver.hpp"
#include "verify/probes.hpp"
#include "worker/child.hpp"

#include <dlfcn.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::verify {
namespace {

using worker::report_phase;
namespace cu = cuda_api::cu;
using cuda_api::find_cuda_error;

// The entry points the probe calls, resolved through cuGetProcAddress; null when unresolved.
struct DriverApi {
  cu::PfnGetErrorName get_error_name = nullptr;
  cu::PfnGetErrorString get_error_string = nullptr;
  cu::PfnInit init = nullptr;
  cu::PfnDriverGetVersion driver_get_version = nullptr;
  cu::PfnDeviceGetCount device_get_count = nullptr;
  cu::PfnDeviceGet device_get = nullptr;
  cu::PfnDeviceGetName device_get_name = nullptr;
  cu::PfnDeviceGetUuid device_get_uuid = nullptr;
  cu::PfnDeviceGetAttribute device_get_attribute = nullptr;
  cu::PfnDeviceTotalMem device_total_mem = nullptr;
  cu::PfnDeviceGetPCIBusId device_get_pci_bus_id = nullptr;
};

// Every entry point but the first two has one prototype since CUDA 12.0 (k_proc_address_base_version);
// the second name is the versioned export with that prototype, the stub's fallback.
DriverApi resolve_all(cuda_api::DriverResolver& resolver) {
  const std::initializer_list<int> base = {cu::k_proc_address_base_version};
  DriverApi api;
  resolver.resolve(api.get_error_name, "cuGetErrorName", base, "cuGetErrorName");
  resolver.resolve(api.get_error_string, "cuGetErrorString", base, "cuGetErrorString");
  resolver.resolve(api.init, "cuInit", base, "cuInit");
  resolver.resolve(api.driver_get_version, "cuDriverGetVersion", base, "cuDriverGetVersion");
  resolver.resolve(api.device_get_count, "cuDeviceGetCount", base, "cuDeviceGetCount");
  resolver.resolve(api.device_get, "cuDeviceGet", base, "cuDeviceGet");
  resolver.resolve(api.device_get_name, "cuDeviceGetName", base, "cuDeviceGetName");
  resolver.resolve(api.device_get_uuid, "cuDeviceGetUuid", base, "cuDeviceGetUuid_v2");
  resolver.resolve(api.device_get_attribute, "cuDeviceGetAttribute", base, "cuDeviceGetAttribute");
  resolver.resolve(api.device_total_mem, "cuDeviceTotalMem", base, "cuDeviceTotalMem_v2");
  resolver.resolve(api.device_get_pci_bus_id, "cuDeviceGetPCIBusId", base, "cuDeviceGetPCIBusId");
  return api;
}

// The driver's own strings when it can decode the code, else cudadiag's table's, else nullopt.
CuResultInfo describe(const DriverApi& api, cu::CUresult code) {
  std::optional<std::string> name;
  std::optional<std::string> description;
  const char* text = nullptr;
  if (api.get_error_name != nullptr && api.get_error_name(code, &text) == cu::CUDA_SUCCESS &&
      text != nullptr) {
    name = text;
  }
  text = nullptr;
  if (api.get_error_string != nullptr && api.get_error_string(code, &text) == cu::CUDA_SUCCESS &&
      text != nullptr) {
    description = text;
  }
  if (const auto* known = find_cuda_error(code); known != nullptr) {
    if (!name) {
      name = std::string(known->name);
    }
    if (!description) {
      description = std::string(known->description);
    }
  }
  return CuResultInfo{static_cast<int>(code), std::move(name), std::move(description)};
}

std::string format_uuid(const cu::CUuuid& uuid) {
  std::string out = "GPU-";
  constexpr std::string_view k_hex = "0123456789abcdef";
  for (std::size_t i = 0; i < sizeof uuid.bytes; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) {
      out += '-';
    }
    const auto byte = static_cast<unsigned char>(uuid.bytes[i]);
    out += k_hex[byte >> 4U];
    out += k_hex[byte & 0xFU];
  }
  return out;
}

struct BoolAttribute {
  const char* key;
  cu::CUdevice_attribute attribute;
};

// The capabilities reported per device as true/false (null when the driver cannot answer).
// clang-format off
constexpr BoolAttribute k_bool_attributes[] = {
    {"unified_addressing",          cu::CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING},
    {"managed_memory",              cu::CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY},
    {"concurrent_managed_access",   cu::CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS},
    {"pageable_memory_access",      cu::CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS},
    {"virtual_memory_management",   cu::CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED},
    {"handle_type_posix_fd",        cu::CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED},
    {"handle_type_fabric",          cu::CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED},
    {"memory_pools",                cu::CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED},
    {"ipc_event",                   cu::CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED},
    {"cooperative_launch",          cu::CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH},
    {"compute_preemption",          cu::CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED},
    {"gpu_direct_rdma",             cu::CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED},
    {"ecc_enabled",                 cu::CU_DEVICE_ATTRIBUTE_ECC_ENABLED},
    {"integrated",                  cu::CU_DEVICE_ATTRIBUTE_INTEGRATED},
    {"multi_gpu_board",             cu::CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD},
};
// clang-format on

class DeviceQuery {
public:
  DeviceQuery(const DriverApi& api, cu::CUdevice device, std::vector<std::string>& errors)
      : m_api(api), m_device(device), m_errors(errors) {}

  std::optional<int> attribute(cu::CUdevice_attribute attribute, const char* what) const {
    if (m_api.device_get_attribute == nullptr) {
      return std::nullopt;
    }
    int value = 0;
    if (!check(m_api.device_get_attribute(&value, attribute, m_device), what)) {
      return std::nullopt;
    }
    return value;
  }

  // Records a failed call as "what: NAME (code)"; returns whether the call succeeded.
  bool check(cu::CUresult result, const char* what) const {
    if (result == cu::CUDA_SUCCESS) {
      return true;
    }
    const auto* known = find_cuda_error(result);
    m_errors.push_back(std::string(what) + ": " + (known != nullptr ? std::string(known->name) : "error") +
                       " (" + std::to_string(static_cast<int>(result)) + ")");
    return false;
  }

  [[nodiscard]] cu::CUdevice device() const { return m_device; }

private:
  const DriverApi& m_api;
  cu::CUdevice m_device;
  std::vector<std::string>& m_errors;
};

DriverDevice probe_device(const DriverApi& api, int ordinal) {
  DriverDevice device;
  device.ordinal = ordinal;
  cu::CUdevice handle = 0;
  if (api.device_get == nullptr || api.device_get(&handle, ordinal) != cu::CUDA_SUCCESS) {
    device.error = "cuDeviceGet failed";
    return device;
  }
  const DeviceQuery query(api, handle, device.errors);

  std::optional<std::string> name;
  if (std::array<char, 256> buffer{};
      api.device_get_name != nullptr &&
      query.check(api.device_get_name(buffer.data(), static_cast<int>(buffer.size() - 1), handle),
                  "cuDeviceGetName")) {
    name = std::string(buffer.data());
  }
  std::optional<std::string> uuid;
  if (cu::CUuuid raw{};
      api.device_get_uuid != nullptr && query.check(api.device_get_uuid(&raw, handle), "cuDeviceGetUuid")) {
    uuid = format_uuid(raw);
  }
  std::optional<std::string> pci_bus_id;
  if (std::array<char, 64> buffer{};
      api.device_get_pci_bus_id != nullptr &&
      query.check(api.device_get_pci_bus_id(buffer.data(), static_cast<int>(buffer.size() - 1), handle),
                  "cuDeviceGetPCIBusId")) {
    pci_bus_id = std::string(buffer.data());
  }
  std::optional<std::uint64_t> total_memory;
  if (std::size_t bytes = 0; api.device_total_mem != nullptr &&
                             query.check(api.device_total_mem(&bytes, handle), "cuDeviceTotalMem")) {
    total_memory = bytes;
  }

  const auto major =
      query.attribute(cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, "compute_capability_major");
  const auto minor =
      query.attribute(cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, "compute_capability_minor");
  const auto sm_count = query.attribute(cu::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, "multiprocessor_count");
  const auto memory_clock = query.attribute(cu::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE, "memory_clock_rate");
  const auto bus_width =
      query.attribute(cu::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH, "global_memory_bus_width");
  const auto l2_cache = query.attribute(cu::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE, "l2_cache_size");
  const auto compute_mode = query.attribute(cu::CU_DEVICE_ATTRIBUTE_COMPUTE_MODE, "compute_mode");

  std::optional<double> peak_bandwidth;
  if (memory_clock && bus_width && *memory_clock > 0 && *bus_width > 0) {
    // Double data rate: 2 transfers per clock, bus width in bits.
    const double bytes_per_second = 2.0 * *memory_clock * 1000.0 * (*bus_width / 8.0);
    peak_bandwidth = std::round(bytes_per_second / 1e8) / 10.0; // GB/s, one decimal
  }

  for (const auto& entry : k_bool_attributes) {
    const auto value = query.attribute(entry.attribute, entry.key);
    device.attributes[entry.key] = value ? std::optional(*value != 0) : std::nullopt;
  }

  device.name = name;
  device.uuid = uuid;
  device.pci_bus_id = pci_bus_id;
  if (major && minor) {
    device.compute_capability = std::to_string(*major) + "." + std::to_string(*minor);
  }
  device.sm_count = sm_count;
  device.total_memory_bytes = total_memory;
  device.memory_clock_khz = memory_clock;
  device.memory_bus_width_bits = bus_width;
  device.peak_bandwidth_gbps = peak_bandwidth;
  device.l2_cache_bytes = l2_cache;
  device.compute_mode = compute_mode;
  return device;
}

DriverFacts probe(const std::string& path) {
  DriverFacts out;
  out.library = path;

  report_phase("dlopen");
  ::dlerror();
  // Never dlclose'd: unloading a driver after cuInit is unsafe, and the worker exits right after.
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = ::dlerror();
    out.dlopen_error = error != nullptr ? error : "dlopen failed";
    return out;
  }
  out.loaded = true;

  report_phase("cuGetProcAddress");
  cuda_api::MissingSymbols missing;
  cuda_api::DriverResolver resolver(handle, missing);
  DriverApi api;
  if (!resolver.usable()) {
    // A driver older than 11.3, or not a driver. cuDriverGetVersion has had one ABI since 2.2, so
    // the version (the reason, usually) can still be read by its plain symbol.
    missing.add("cuGetProcAddress_v2");
    api.driver_get_version = reinterpret_cast<cu::PfnDriverGetVersion>(::dlsym(handle, "cuDriverGetVersion"));
  } else {
    out.get_proc_address = resolver.get_proc_address_name();
    api = resolve_all(resolver);
    if (const auto failure = resolver.failure()) {
      out.get_proc_address_error = describe(api, *failure);
      out.is_stub = *failure == cu::CUDA_ERROR_STUB_LIBRARY;
    }
  }

  out.missing_symbols = missing.names();

  // Works without (and before) cuInit; the stub fails it with 34.
  if (api.driver_get_version != nullptr) {
    report_phase("cuDriverGetVersion");
    int version = 0;
    if (const auto result = api.driver_get_version(&version); result == cu::CUDA_SUCCESS) {
      out.driver_version = version;
    } else {
      out.driver_version_error = describe(api, result);
      if (result == cu::CUDA_ERROR_STUB_LIBRARY) {
        out.is_stub = true;
      }
    }
  }
  if (api.init == nullptr) {
    return out;
  }

  report_phase("cuInit");
  const auto init = api.init(0);
  out.init = describe(api, init);
  if (init == cu::CUDA_ERROR_STUB_LIBRARY) {
    out.is_stub = true;
  }
  if (init != cu::CUDA_SUCCESS || api.device_get_count == nullptr) {
    return out;
  }

  report_phase("devices");
  int count = 0;
  if (api.device_get_count(&count) != cu::CUDA_SUCCESS || count < 0) {
    return out;
  }
  out.device_count = count;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    out.devices.push_back(probe_device(api, ordinal));
  }
  return out;
}

} // namespace

DriverFacts probe_driver(const std::string& path) {
  try {
    return probe(path);
  } catch (const std::exception& error) {
    DriverFacts failed;
    failed.library = path;
    failed.internal_error = std::string("internal error: ") + error.what();
    return failed;
  }
}

} // namespace cudadiag::verify
