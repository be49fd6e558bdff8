// The self-test's mirrored driver, NVRTC and nvJitLink prototypes and structs (cuda_api/driver.hpp,
// cuda_api/nvrtc.hpp, cuda_api/nvjitlink.hpp) against the real CUDA 13.0 headers, when they are present. The
// PFN types of cudaTypedefs.h carry the version each mirror asks cuGetProcAddress for.

#include "cuda_api/driver.hpp"
#include "cuda_api/library.hpp"
#include "cuda_api/nvjitlink.hpp"
#include "cuda_api/nvrtc.hpp"
#include "skip.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <type_traits>

#if __has_include(<cuda.h>) && __has_include(<cudaTypedefs.h>) && __has_include(<nvrtc.h>)
#include <cuda.h>
#include <cudaTypedefs.h>
#include <nvrtc.h>
#define CUDADIAG_TEST_HAVE_CUDA_H 1
#endif

#if defined(CUDADIAG_TEST_HAVE_CUDA_H)
namespace {

namespace cu = cudadiag::cuda_api::cu;
using cudadiag::cuda_api::abi_compatible;

// clang-format off
static_assert(abi_compatible<cu::PfnCtxSetCurrent, PFN_cuCtxSetCurrent_v4000>());
static_assert(abi_compatible<cu::PfnCtxSynchronize, PFN_cuCtxSynchronize_v2000>());
static_assert(abi_compatible<cu::PfnDevicePrimaryCtxRetain, PFN_cuDevicePrimaryCtxRetain_v7000>());
static_assert(abi_compatible<cu::PfnDevicePrimaryCtxRelease, PFN_cuDevicePrimaryCtxRelease_v11000>());
static_assert(abi_compatible<cu::PfnModuleLoadDataEx, PFN_cuModuleLoadDataEx_v2010>());
static_assert(abi_compatible<cu::PfnModuleGetFunction, PFN_cuModuleGetFunction_v2000>());
static_assert(abi_compatible<cu::PfnModuleUnload, PFN_cuModuleUnload_v2000>());
static_assert(abi_compatible<cu::PfnLaunchKernel, PFN_cuLaunchKernel_v4000>());
static_assert(abi_compatible<cu::PfnMemAlloc, PFN_cuMemAlloc_v3020>());
static_assert(abi_compatible<cu::PfnMemFree, PFN_cuMemFree_v3020>());
static_assert(abi_compatible<cu::PfnMemcpyHtoD, PFN_cuMemcpyHtoD_v3020>());
static_assert(abi_compatible<cu::PfnMemcpyDtoH, PFN_cuMemcpyDtoH_v3020>());
static_assert(abi_compatible<cu::PfnMemcpyDtoDAsync, PFN_cuMemcpyDtoDAsync_v3020>());
static_assert(abi_compatible<cu::PfnMemsetD32, PFN_cuMemsetD32_v3020>());
static_assert(abi_compatible<cu::PfnMemsetD32Async, PFN_cuMemsetD32Async_v3020>());
static_assert(abi_compatible<cu::PfnMemGetInfo, PFN_cuMemGetInfo_v3020>());
static_assert(abi_compatible<cu::PfnMemHostAlloc, PFN_cuMemHostAlloc_v2020>());
static_assert(abi_compatible<cu::PfnMemFreeHost, PFN_cuMemFreeHost_v2000>());
static_assert(abi_compatible<cu::PfnMemcpyHtoDAsync, PFN_cuMemcpyHtoDAsync_v3020>());
static_assert(abi_compatible<cu::PfnMemcpyDtoHAsync, PFN_cuMemcpyDtoHAsync_v3020>());
static_assert(abi_compatible<cu::PfnMemcpyPeer, PFN_cuMemcpyPeer_v4000>());
static_assert(abi_compatible<cu::PfnDeviceCanAccessPeer, PFN_cuDeviceCanAccessPeer_v4000>());
static_assert(abi_compatible<cu::PfnCtxEnablePeerAccess, PFN_cuCtxEnablePeerAccess_v4000>());
static_assert(abi_compatible<cu::PfnStreamCreate, PFN_cuStreamCreate_v2000>());
static_assert(abi_compatible<cu::PfnStreamDestroy, PFN_cuStreamDestroy_v4000>());
static_assert(abi_compatible<cu::PfnStreamSynchronize, PFN_cuStreamSynchronize_v2000>());
static_assert(abi_compatible<cu::PfnEventCreate, PFN_cuEventCreate_v2000>());
static_assert(abi_compatible<cu::PfnEventDestroy, PFN_cuEventDestroy_v4000>());
static_assert(abi_compatible<cu::PfnEventRecord, PFN_cuEventRecord_v2000>());
static_assert(abi_compatible<cu::PfnEventSynchronize, PFN_cuEventSynchronize_v2000>());
static_assert(abi_compatible<cu::PfnEventElapsedTime, PFN_cuEventElapsedTime_v2000>());
static_assert(abi_compatible<cu::PfnIpcGetMemHandle, PFN_cuIpcGetMemHandle_v4010>());
// cuIpcOpenMemHandle takes the 64-byte handle by value, which abi_compatible does not model: its
// layout is checked below, and the rest of the prototype here with the handle as the header's type.
static_assert(abi_compatible<cu::CUresult (*)(cu::CUdeviceptr*, unsigned int), CUresult (*)(CUdeviceptr*, unsigned int)>());
static_assert(std::is_same_v<PFN_cuIpcOpenMemHandle_v11000, CUresult (*)(CUdeviceptr*, CUipcMemHandle, unsigned int)>);
static_assert(abi_compatible<cu::PfnIpcCloseMemHandle, PFN_cuIpcCloseMemHandle_v4010>());
static_assert(abi_compatible<cu::PfnMemGetAllocationGranularity, PFN_cuMemGetAllocationGranularity_v10020>());
static_assert(abi_compatible<cu::PfnMemCreate, PFN_cuMemCreate_v10020>());
static_assert(abi_compatible<cu::PfnMemRelease, PFN_cuMemRelease_v10020>());
static_assert(abi_compatible<cu::PfnMemExportToShareableHandle, PFN_cuMemExportToShareableHandle_v10020>());
static_assert(abi_compatible<cu::PfnMemImportFromShareableHandle, PFN_cuMemImportFromShareableHandle_v10020>());
static_assert(abi_compatible<cu::PfnMemAddressReserve, PFN_cuMemAddressReserve_v10020>());
static_assert(abi_compatible<cu::PfnMemAddressFree, PFN_cuMemAddressFree_v10020>());
static_assert(abi_compatible<cu::PfnMemMap, PFN_cuMemMap_v10020>());
static_assert(abi_compatible<cu::PfnMemUnmap, PFN_cuMemUnmap_v10020>());
static_assert(abi_compatible<cu::PfnMemSetAccess, PFN_cuMemSetAccess_v10020>());
static_assert(abi_compatible<cu::PfnDeviceGetDevResource, PFN_cuDeviceGetDevResource_v12040>());
static_assert(abi_compatible<cu::PfnDevSmResourceSplitByCount, PFN_cuDevSmResourceSplitByCount_v12040>());
static_assert(abi_compatible<cu::PfnDevResourceGenerateDesc, PFN_cuDevResourceGenerateDesc_v12040>());
static_assert(abi_compatible<cu::PfnGreenCtxCreate, PFN_cuGreenCtxCreate_v12040>());
static_assert(abi_compatible<cu::PfnGreenCtxDestroy, PFN_cuGreenCtxDestroy_v12040>());
static_assert(abi_compatible<cu::PfnCtxFromGreenCtx, PFN_cuCtxFromGreenCtx_v12040>());
static_assert(abi_compatible<cu::PfnGreenCtxGetDevResource, PFN_cuGreenCtxGetDevResource_v12040>());
static_assert(abi_compatible<cu::PfnGreenCtxStreamCreate, PFN_cuGreenCtxStreamCreate_v12050>());
static_assert(abi_compatible<cu::PfnGetErrorString, PFN_cuGetErrorString_v6000>());
static_assert(abi_compatible<cu::PfnCtxGetCurrent, PFN_cuCtxGetCurrent_v4000>());
static_assert(abi_compatible<cu::PfnMemAllocManaged, PFN_cuMemAllocManaged_v6000>());
static_assert(abi_compatible<cu::PfnPointerGetAttribute, PFN_cuPointerGetAttribute_v4000>());
static_assert(abi_compatible<cu::PfnCheckpointProcessGetState, PFN_cuCheckpointProcessGetState_v12080>());
static_assert(abi_compatible<cu::PfnCheckpointProcessLock, PFN_cuCheckpointProcessLock_v12080>());
// Checkpoint, Restore and Unlock take argument structs cudadiag never fills (it passes NULL): they
// are declared, not defined, in the mirror, which abi_compatible does not match with a complete one.
static_assert(abi_compatible<cu::PfnCheckpointProcessGetRestoreThreadId, PFN_cuCheckpointProcessGetRestoreThreadId_v12080>());

static_assert(abi_compatible<cudadiag::cuda_api::nvrtc::GetSizeFn, decltype(&::nvrtcGetCUBINSize)>());
static_assert(abi_compatible<cudadiag::cuda_api::nvrtc::GetSizeFn, decltype(&::nvrtcGetLTOIRSize)>());
static_assert(abi_compatible<cudadiag::cuda_api::nvrtc::GetDataFn, decltype(&::nvrtcGetCUBIN)>());
static_assert(abi_compatible<cudadiag::cuda_api::nvrtc::GetDataFn, decltype(&::nvrtcGetPTX)>());
// clang-format on

// Struct layouts the driver reads or writes.
static_assert(sizeof(cu::CUipcMemHandle) == sizeof(::CUipcMemHandle));
static_assert(sizeof(cu::CUmemAllocationProp) == sizeof(::CUmemAllocationProp));
static_assert(offsetof(cu::CUmemAllocationProp, location) == offsetof(::CUmemAllocationProp, location));
static_assert(offsetof(cu::CUmemAllocationProp, win32HandleMetaData) ==
              offsetof(::CUmemAllocationProp, win32HandleMetaData));
static_assert(offsetof(cu::CUmemAllocationProp, allocFlags) == offsetof(::CUmemAllocationProp, allocFlags));
static_assert(sizeof(cu::CUmemAccessDesc) == sizeof(::CUmemAccessDesc));
static_assert(offsetof(cu::CUmemAccessDesc, flags) == offsetof(::CUmemAccessDesc, flags));
static_assert(sizeof(cu::CUdevResource) == sizeof(::CUdevResource));
static_assert(offsetof(cu::CUdevResource, sm) == offsetof(::CUdevResource, sm));
static_assert(offsetof(cu::CUdevSmResource, minSmPartitionSize) ==
              offsetof(::CUdevSmResource, minSmPartitionSize));
static_assert(offsetof(cu::CUdevSmResource, smCoscheduledAlignment) ==
              offsetof(::CUdevSmResource, smCoscheduledAlignment));

static_assert(sizeof(cu::CUcheckpointLockArgs) == sizeof(::CUcheckpointLockArgs));
static_assert(offsetof(cu::CUcheckpointLockArgs, reserved1) == offsetof(::CUcheckpointLockArgs, reserved1));

// Enumerators and flags.
static_assert(cu::CU_PROCESS_STATE_RUNNING == static_cast<int>(::CU_PROCESS_STATE_RUNNING));
static_assert(cu::CU_PROCESS_STATE_LOCKED == static_cast<int>(::CU_PROCESS_STATE_LOCKED));
static_assert(cu::CU_PROCESS_STATE_CHECKPOINTED == static_cast<int>(::CU_PROCESS_STATE_CHECKPOINTED));
static_assert(cu::CU_PROCESS_STATE_FAILED == static_cast<int>(::CU_PROCESS_STATE_FAILED));
static_assert(cu::CU_POINTER_ATTRIBUTE_CONTEXT == static_cast<int>(::CU_POINTER_ATTRIBUTE_CONTEXT));
static_assert(cu::k_mem_attach_global == ::CU_MEM_ATTACH_GLOBAL);
static_assert(static_cast<int>(cu::CU_JIT_ERROR_LOG_BUFFER) == static_cast<int>(::CU_JIT_ERROR_LOG_BUFFER));
static_assert(static_cast<int>(cu::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES) ==
              static_cast<int>(::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES));
static_assert(cu::CU_MEM_ALLOCATION_TYPE_PINNED == static_cast<int>(::CU_MEM_ALLOCATION_TYPE_PINNED));
static_assert(cu::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ==
              static_cast<int>(::CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR));
static_assert(cu::CU_MEM_LOCATION_TYPE_DEVICE == static_cast<int>(::CU_MEM_LOCATION_TYPE_DEVICE));
static_assert(cu::CU_MEM_ACCESS_FLAGS_PROT_READWRITE ==
              static_cast<int>(::CU_MEM_ACCESS_FLAGS_PROT_READWRITE));
static_assert(cu::CU_DEV_RESOURCE_TYPE_SM == static_cast<int>(::CU_DEV_RESOURCE_TYPE_SM));
static_assert(cu::k_stream_non_blocking == ::CU_STREAM_NON_BLOCKING);
static_assert(cu::k_green_ctx_default_stream == ::CU_GREEN_CTX_DEFAULT_STREAM);
static_assert(cu::k_ipc_lazy_enable_peer == ::CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
static_assert(cu::k_ipc_handle_size == CU_IPC_HANDLE_SIZE);

} // namespace

TEST_CASE("selftest gpu api: every mirrored prototype and layout matches cuda.h (checked at compile time)") {
  CHECK(sizeof(cu::CUdevResource) == 144);
}
#else
TEST_CASE("selftest gpu api: every mirrored prototype and layout matches cuda.h (checked at compile time)") {
  CUDADIAG_SKIP("cuda.h is not available: the layout checks did not run");
}
#endif
