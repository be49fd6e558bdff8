#pragma once
// The CUDA driver API (cuda.h, CUDA 13.0) as cudadiag calls it: the verify probe's queries and the
// self-test's modules, launches, memory, streams, events, IPC, virtual memory and green contexts.
// Declared here so that cudadiag builds without a toolkit and never links libcuda. Names mirror
// cuda.h; every type, value and struct layout is checked against the real header by
// tests/unit/test_verify_driver_probe.cpp and tests/unit/test_selftest_gpu_api.cpp when a toolkit
// is present. Entry points are resolved through cuGetProcAddress by their unversioned name (see
// driver_resolver.hpp); the comment on each type names the versioned symbol cuda.h maps it to and
// the CUDA version whose prototype it mirrors.

#include <cstddef>
#include <cstdint>

namespace cudadiag::cuda_api::cu {

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
  CUDA_ERROR_NOT_READY = 600,
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

// --- The self-test's slice: modules, memory, streams and events, IPC, VMM, green contexts ---

using CUdeviceptr = unsigned long long; // cuda.h: CUdeviceptr_v2 on 64-bit hosts
using CUfunction = struct CUfunc_st*;
using CUstream = struct CUstream_st*;
using CUevent = struct CUevent_st*;
using CUgreenCtx = struct CUgreenCtx_st*;
using CUdevResourceDesc = struct CUdevResourceDesc_st*;
using CUmemGenericAllocationHandle = unsigned long long;

enum CUjit_option : int {
  CU_JIT_INFO_LOG_BUFFER = 3,
  CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4,
  CU_JIT_ERROR_LOG_BUFFER = 5,
  CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6,
};

inline constexpr unsigned k_stream_non_blocking = 0x1;      // CU_STREAM_NON_BLOCKING
inline constexpr unsigned k_event_default = 0x0;            // CU_EVENT_DEFAULT
inline constexpr unsigned k_ipc_lazy_enable_peer = 0x1;     // CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS
inline constexpr unsigned k_green_ctx_default_stream = 0x1; // CU_GREEN_CTX_DEFAULT_STREAM
inline constexpr std::size_t k_ipc_handle_size = 64;        // CU_IPC_HANDLE_SIZE

struct CUipcMemHandle {
  char reserved[k_ipc_handle_size];
};

enum CUmemAllocationType : int { CU_MEM_ALLOCATION_TYPE_PINNED = 1 };
enum CUmemAllocationHandleType : int { CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR = 1 };
enum CUmemLocationType : int { CU_MEM_LOCATION_TYPE_DEVICE = 1 };
enum CUmemAccess_flags : int { CU_MEM_ACCESS_FLAGS_PROT_READWRITE = 3 };
enum CUmemAllocationGranularity_flags : int { CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0 };

struct CUmemLocation {
  CUmemLocationType type;
  int id;
};
struct CUmemAllocationProp {
  CUmemAllocationType type;
  CUmemAllocationHandleType requestedHandleTypes;
  CUmemLocation location;
  void* win32HandleMetaData;
  struct {
    unsigned char compressionType;
    unsigned char gpuDirectRDMACapable;
    unsigned short usage;
    unsigned char reserved[4];
  } allocFlags;
};
struct CUmemAccessDesc {
  CUmemLocation location;
  CUmemAccess_flags flags;
};

// Green-context resources (CUDA 13.0 layout: 144 bytes; a 12.x driver fills only smCount).
enum CUdevResourceType : int { CU_DEV_RESOURCE_TYPE_SM = 1 };
struct CUdevSmResource {
  unsigned int smCount;
  unsigned int minSmPartitionSize;     // 13.0+; 0 from older drivers
  unsigned int smCoscheduledAlignment; // 13.0+; 0 from older drivers
};
struct CUdevResource {
  CUdevResourceType type;
  unsigned char _internal_padding[92];
  union {
    CUdevSmResource sm;
    unsigned char _oversize[48];
  };
};

// clang-format off
using PfnCtxSetCurrent = CUresult (*)(CUcontext);                                   // cuCtxSetCurrent (4.0)
using PfnCtxSynchronize = CUresult (*)();                                           // cuCtxSynchronize (2.0)
using PfnDevicePrimaryCtxRetain = CUresult (*)(CUcontext*, CUdevice);               // cuDevicePrimaryCtxRetain (7.0)
using PfnDevicePrimaryCtxRelease = CUresult (*)(CUdevice);                          // cuDevicePrimaryCtxRelease_v2 (11.0)
using PfnModuleLoadDataEx = CUresult (*)(CUmodule*, const void*, unsigned int, CUjit_option*, void**); // cuModuleLoadDataEx (2.1)
using PfnModuleGetFunction = CUresult (*)(CUfunction*, CUmodule, const char*);      // cuModuleGetFunction (2.0)
using PfnModuleUnload = CUresult (*)(CUmodule);                                     // cuModuleUnload (2.0)
using PfnLaunchKernel = CUresult (*)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                     unsigned, CUstream, void**, void**);           // cuLaunchKernel (4.0)
using PfnMemAlloc = CUresult (*)(CUdeviceptr*, std::size_t);                        // cuMemAlloc_v2 (3.2)
using PfnMemFree = CUresult (*)(CUdeviceptr);                                       // cuMemFree_v2 (3.2)
using PfnMemcpyHtoD = CUresult (*)(CUdeviceptr, const void*, std::size_t);          // cuMemcpyHtoD_v2 (3.2)
using PfnMemcpyDtoH = CUresult (*)(void*, CUdeviceptr, std::size_t);                // cuMemcpyDtoH_v2 (3.2)
using PfnMemcpyDtoDAsync = CUresult (*)(CUdeviceptr, CUdeviceptr, std::size_t, CUstream); // cuMemcpyDtoDAsync_v2 (3.2)
using PfnMemsetD32 = CUresult (*)(CUdeviceptr, unsigned int, std::size_t);          // cuMemsetD32_v2 (3.2)
using PfnMemsetD32Async = CUresult (*)(CUdeviceptr, unsigned int, std::size_t, CUstream); // cuMemsetD32Async (3.2)
using PfnMemGetInfo = CUresult (*)(std::size_t*, std::size_t*);                     // cuMemGetInfo_v2 (3.2)
using PfnMemHostAlloc = CUresult (*)(void**, std::size_t, unsigned int);            // cuMemHostAlloc (2.2)
using PfnMemFreeHost = CUresult (*)(void*);                                         // cuMemFreeHost (2.0)
using PfnMemcpyHtoDAsync = CUresult (*)(CUdeviceptr, const void*, std::size_t, CUstream); // cuMemcpyHtoDAsync_v2 (3.2)
using PfnMemcpyDtoHAsync = CUresult (*)(void*, CUdeviceptr, std::size_t, CUstream); // cuMemcpyDtoHAsync_v2 (3.2)
using PfnMemcpyPeer = CUresult (*)(CUdeviceptr, CUcontext, CUdeviceptr, CUcontext, std::size_t); // cuMemcpyPeer (4.0)
using PfnDeviceCanAccessPeer = CUresult (*)(int*, CUdevice, CUdevice);              // cuDeviceCanAccessPeer (4.0)
using PfnCtxEnablePeerAccess = CUresult (*)(CUcontext, unsigned int);               // cuCtxEnablePeerAccess (4.0)
using PfnStreamCreate = CUresult (*)(CUstream*, unsigned int);                      // cuStreamCreate (2.0)
using PfnStreamDestroy = CUresult (*)(CUstream);                                    // cuStreamDestroy_v2 (4.0)
using PfnStreamSynchronize = CUresult (*)(CUstream);                                // cuStreamSynchronize (2.0)
using PfnEventCreate = CUresult (*)(CUevent*, unsigned int);                        // cuEventCreate (2.0)
using PfnEventDestroy = CUresult (*)(CUevent);                                      // cuEventDestroy_v2 (4.0)
using PfnEventRecord = CUresult (*)(CUevent, CUstream);                             // cuEventRecord (2.0)
using PfnEventSynchronize = CUresult (*)(CUevent);                                  // cuEventSynchronize (2.0)
using PfnEventElapsedTime = CUresult (*)(float*, CUevent, CUevent);                 // cuEventElapsedTime (2.0)
using PfnIpcGetMemHandle = CUresult (*)(CUipcMemHandle*, CUdeviceptr);              // cuIpcGetMemHandle (4.1)
using PfnIpcOpenMemHandle = CUresult (*)(CUdeviceptr*, CUipcMemHandle, unsigned int); // cuIpcOpenMemHandle_v2 (11.0)
using PfnIpcCloseMemHandle = CUresult (*)(CUdeviceptr);                             // cuIpcCloseMemHandle (4.1)
using PfnMemGetAllocationGranularity = CUresult (*)(std::size_t*, const CUmemAllocationProp*,
                                                    CUmemAllocationGranularity_flags); // (10.2)
using PfnMemCreate = CUresult (*)(CUmemGenericAllocationHandle*, std::size_t, const CUmemAllocationProp*,
                                  unsigned long long);                              // cuMemCreate (10.2)
using PfnMemRelease = CUresult (*)(CUmemGenericAllocationHandle);                   // cuMemRelease (10.2)
using PfnMemExportToShareableHandle = CUresult (*)(void*, CUmemGenericAllocationHandle, CUmemAllocationHandleType,
                                                   unsigned long long);             // (10.2)
using PfnMemImportFromShareableHandle = CUresult (*)(CUmemGenericAllocationHandle*, void*,
                                                     CUmemAllocationHandleType);    // (10.2)
using PfnMemAddressReserve = CUresult (*)(CUdeviceptr*, std::size_t, std::size_t, CUdeviceptr,
                                          unsigned long long);                      // (10.2)
using PfnMemAddressFree = CUresult (*)(CUdeviceptr, std::size_t);                   // (10.2)
using PfnMemMap = CUresult (*)(CUdeviceptr, std::size_t, std::size_t, CUmemGenericAllocationHandle,
                               unsigned long long);                                 // cuMemMap (10.2)
using PfnMemUnmap = CUresult (*)(CUdeviceptr, std::size_t);                         // cuMemUnmap (10.2)
using PfnMemSetAccess = CUresult (*)(CUdeviceptr, std::size_t, const CUmemAccessDesc*, std::size_t); // (10.2)
using PfnDeviceGetDevResource = CUresult (*)(CUdevice, CUdevResource*, CUdevResourceType); // (12.4)
using PfnDevSmResourceSplitByCount = CUresult (*)(CUdevResource*, unsigned int*, const CUdevResource*,
                                                  CUdevResource*, unsigned int, unsigned int); // (12.4)
using PfnDevResourceGenerateDesc = CUresult (*)(CUdevResourceDesc*, CUdevResource*, unsigned int); // (12.4)
using PfnGreenCtxCreate = CUresult (*)(CUgreenCtx*, CUdevResourceDesc, CUdevice, unsigned int); // (12.4)
using PfnGreenCtxDestroy = CUresult (*)(CUgreenCtx);                                // cuGreenCtxDestroy (12.4)
using PfnCtxFromGreenCtx = CUresult (*)(CUcontext*, CUgreenCtx);                    // cuCtxFromGreenCtx (12.4)
using PfnGreenCtxGetDevResource = CUresult (*)(CUgreenCtx, CUdevResource*, CUdevResourceType); // (12.4)
using PfnGreenCtxStreamCreate = CUresult (*)(CUstream*, CUgreenCtx, unsigned int, int); // (12.5)
// clang-format on

// --- Process checkpoint and restore (CUDA 12.8+, driver R570+; Linux) ---

// CUprocessState (cuda.h: enum CUprocessState_enum).
enum CUprocessState : int {
  CU_PROCESS_STATE_RUNNING = 0,
  CU_PROCESS_STATE_LOCKED = 1,
  CU_PROCESS_STATE_CHECKPOINTED = 2,
  CU_PROCESS_STATE_FAILED = 3,
};
// CUcheckpointLockArgs (64 bytes in every header from 12.8 on); every reserved field must be zero.
struct CUcheckpointLockArgs {
  unsigned int timeoutMs; // 0: no timeout
  unsigned int reserved0;
  cuuint64_t reserved1[7];
};
// The checkpoint, restore and unlock arguments differ between headers (13.0 adds GPU pairs to the
// restore's); cudadiag passes NULL for them (the driver's defaults: restore onto the same GPUs).
struct CUcheckpointCheckpointArgs;
struct CUcheckpointRestoreArgs;
struct CUcheckpointUnlockArgs;
// The CUDA version the checkpoint entry points are asked for: the release that introduced them.
inline constexpr int k_checkpoint_version = 12080;

enum CUpointer_attribute : int { CU_POINTER_ATTRIBUTE_CONTEXT = 1 };
inline constexpr unsigned k_mem_attach_global = 0x1; // CU_MEM_ATTACH_GLOBAL

// clang-format off
using PfnCheckpointProcessGetState = CUresult (*)(int pid, CUprocessState* state);            // (12.8)
using PfnCheckpointProcessLock = CUresult (*)(int pid, CUcheckpointLockArgs* args);           // (12.8)
using PfnCheckpointProcessCheckpoint = CUresult (*)(int pid, CUcheckpointCheckpointArgs* args); // (12.8)
using PfnCheckpointProcessRestore = CUresult (*)(int pid, CUcheckpointRestoreArgs* args);     // (12.8)
using PfnCheckpointProcessUnlock = CUresult (*)(int pid, CUcheckpointUnlockArgs* args);       // (12.8)
using PfnCheckpointProcessGetRestoreThreadId = CUresult (*)(int pid, int* tid);               // (12.8)
using PfnPointerGetAttribute = CUresult (*)(void* data, CUpointer_attribute attribute, CUdeviceptr ptr); // cuPointerGetAttribute (4.0)
using PfnCtxGetCurrent = CUresult (*)(CUcontext* context);                                    // cuCtxGetCurrent (4.0)
using PfnMemAllocManaged = CUresult (*)(CUdeviceptr* dptr, std::size_t bytes, unsigned int flags); // cuMemAllocManaged (6.0)
// clang-format on

} // namespace cudadiag::cuda_api::cu
