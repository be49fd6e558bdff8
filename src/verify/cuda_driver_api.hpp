#pragma once
// The part of the CUDA driver API (cuda.h, CUDA 13.0) that the driver probe calls, declared here so
// that cudadiag builds without a toolkit and never links libcuda. Names mirror cuda.h; every type
// and value is checked against the real header by tests/unit/test_verify_driver_probe.cpp when a
// toolkit is present. Symbol names are the versioned ones the driver exports (cuda.h #defines
// cuDeviceTotalMem to cuDeviceTotalMem_v2, and so on).

#include <cstddef>
#include <cstdint>

namespace cudadiag::verify::cu {

// CUresult (cuda.h: enum cudaError_enum). Only the codes the probe names are listed; any int may
// arrive from a driver, and the fixed underlying type makes every one representable.
enum CUresult : int {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_DEINITIALIZED = 4,
  CUDA_ERROR_STUB_LIBRARY = 34,
  CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER = 36,
  CUDA_ERROR_DEVICE_UNAVAILABLE = 46,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_DEVICE_NOT_LICENSED = 102,
  CUDA_ERROR_INVALID_IMAGE = 200,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_NO_BINARY_FOR_GPU = 209,
  CUDA_ERROR_ECC_UNCORRECTABLE = 214,
  CUDA_ERROR_INVALID_PTX = 218,
  CUDA_ERROR_JIT_COMPILER_NOT_FOUND = 221,
  CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222,
  CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND = 302,
  CUDA_ERROR_SHARED_OBJECT_INIT_FAILED = 303,
  CUDA_ERROR_OPERATING_SYSTEM = 304,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_PERMITTED = 800,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_SYSTEM_NOT_READY = 802,
  CUDA_ERROR_SYSTEM_DRIVER_MISMATCH = 803,
  CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE = 804,
  CUDA_ERROR_MPS_CONNECTION_FAILED = 805,
  CUDA_ERROR_TIMEOUT = 909,
  CUDA_ERROR_UNKNOWN = 999,
};

using CUdevice = int; // cuda.h: CUdevice_v1
using cuuint64_t = std::uint64_t;
using CUcontext = struct CUctx_st*; // opaque
using CUmodule = struct CUmod_st*;  // opaque

struct CUuuid {
  char bytes[16];
};

// CUdevice_attribute (cuda.h: enum CUdevice_attribute_enum), the values the probe queries.
enum CUdevice_attribute : int {
  CU_DEVICE_ATTRIBUTE_CLOCK_RATE = 13,
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_INTEGRATED = 18,
  CU_DEVICE_ATTRIBUTE_COMPUTE_MODE = 20,
  CU_DEVICE_ATTRIBUTE_ECC_ENABLED = 32,
  CU_DEVICE_ATTRIBUTE_PCI_BUS_ID = 33,
  CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID = 34,
  CU_DEVICE_ATTRIBUTE_TCC_DRIVER = 35,
  CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE = 36,
  CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH = 37,
  CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE = 38,
  CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING = 41,
  CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID = 50,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75,
  CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76,
  CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY = 83,
  CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD = 84,
  CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS = 88,
  CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS = 89,
  CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED = 90,
  CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH = 95,
  CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED = 102,
  CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED = 103,
  CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED = 115,
  CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED = 116,
  CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES = 119,
  CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED = 125,
  CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED = 128,
};

// cuGetProcAddress_v2's flags (cuda.h: enum CUdriverProcAddress_flags_enum) and status.
enum CUdriverProcAddress_flags : int {
  CU_GET_PROC_ADDRESS_DEFAULT = 0,
  CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1,
  CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM = 2,
};
enum CUdriverProcAddressQueryResult : int {
  CU_GET_PROC_ADDRESS_SUCCESS = 0,
  CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
  CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2,
};

// Function-pointer types, one per driver entry point, named after the unversioned cuda.h name; the
// comment gives the versioned symbol the header maps it to and the CUDA version that introduced it.
// All but the cuGetProcAddress pair are resolved through cuGetProcAddress by unversioned name.
using PfnGetProcAddress =
    CUresult (*)(const char* symbol, void** pfn, int cudaVersion, cuuint64_t flags,
                 CUdriverProcAddressQueryResult* symbolStatus); // cuGetProcAddress_v2 (12.0)
using PfnGetProcAddressLegacy = CUresult (*)(const char* symbol, void** pfn, int cudaVersion,
                                             cuuint64_t flags);           // cuGetProcAddress (11.3)
using PfnInit = CUresult (*)(unsigned int Flags);                         // cuInit
using PfnDriverGetVersion = CUresult (*)(int* driverVersion);             // cuDriverGetVersion
using PfnDeviceGetCount = CUresult (*)(int* count);                       // cuDeviceGetCount
using PfnDeviceGet = CUresult (*)(CUdevice* device, int ordinal);         // cuDeviceGet
using PfnDeviceGetName = CUresult (*)(char* name, int len, CUdevice dev); // cuDeviceGetName
using PfnDeviceGetUuid = CUresult (*)(CUuuid* uuid, CUdevice dev);        // cuDeviceGetUuid_v2
using PfnDeviceGetAttribute = CUresult (*)(int* pi, CUdevice_attribute attrib,
                                           CUdevice dev);                         // cuDeviceGetAttribute
using PfnDeviceTotalMem = CUresult (*)(std::size_t* bytes, CUdevice dev);         // cuDeviceTotalMem_v2
using PfnDeviceGetPCIBusId = CUresult (*)(char* pciBusId, int len, CUdevice dev); // cuDeviceGetPCIBusId
using PfnGetErrorName = CUresult (*)(CUresult error, const char** pStr);          // cuGetErrorName
using PfnGetErrorString = CUresult (*)(CUresult error, const char** pStr);        // cuGetErrorString

// The CUDA version passed to cuGetProcAddress: the prototypes above are the ones CUDA 12.0 through
// 13.0 declare, so asking for that ABI (not the driver's newest) keeps them valid on future drivers.
inline constexpr int k_proc_address_base_version = 12000;

} // namespace cudadiag::verify::cu
