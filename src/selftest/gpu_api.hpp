#pragma once
// The slice of the CUDA driver API (cuda.h, CUDA 13.0) the self-test calls beyond the verify
// probe's: modules and launches, memory, streams and events, IPC, virtual memory and green
// contexts. Mirrored here so cudadiag builds without a toolkit and never links libcuda; every
// prototype and struct layout is checked against cuda.h by tests/unit/test_selftest_gpu_api.cpp
// when the header is present. The comment on each type names the entry point and the CUDA version
// whose prototype it mirrors (the version passed to cuGetProcAddress).

#include "verify/cuda_driver_api.hpp"

#include <cstddef>
#include <cstdint>

namespace cudadiag::selftest::cu {

using namespace verify::cu; // CUresult, CUdevice, CUcontext, CUmodule, attributes, ...

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

} // namespace cudadiag::selftest::cu
