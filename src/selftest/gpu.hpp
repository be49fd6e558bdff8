#pragma once
// The driver as the self-test uses it, inside a worker process: one libcuda loaded by absolute path
// (so that a CUDA runtime linked into the self-test module, which dlopens "libcuda.so.1", gets this
// same library), its entry points resolved through cuGetProcAddress, and small RAII owners for what
// the tests allocate. A failing driver call throws CudaFailure; the test runner turns it into the
// test's status. Nothing here prints.

#include "core/expected.hpp"
#include "cuda_api/driver.hpp"
#include "cuda_api/library.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace cudadiag::selftest {

namespace cu = cuda_api::cu;

// A driver call that did not return CUDA_SUCCESS: "cuMemAlloc (1073741824 bytes): CUDA_ERROR_OUT_OF_MEMORY
// (2)".
class CudaFailure : public std::runtime_error {
public:
  CudaFailure(cu::CUresult code, std::string call, std::string name)
      : std::runtime_error(call + ": " + name + " (" + std::to_string(static_cast<int>(code)) + ")"),
        m_code(code), m_call(std::move(call)), m_name(std::move(name)) {}
  [[nodiscard]] cu::CUresult code() const { return m_code; }
  [[nodiscard]] const std::string& call() const { return m_call; }
  [[nodiscard]] const std::string& name() const { return m_name; }

private:
  cu::CUresult m_code;
  std::string m_call;
  std::string m_name;
};

// Entry points; null when the driver does not have them (each test checks what it needs).
//
// One stream discipline: a test's work runs on its own non-blocking stream (Stream below), which
// does not wait for the legacy default stream; a copy, fill or event that such work consumes is
// issued on that stream (Stream::upload, fill_u32, download). The calls that run on the legacy
// default stream are named `legacy_stream_*` here, so that every use is visible by name: each
// must be deliberate and synchronised, and is a row of selftest/stream_discipline.hpp's allow-list
// (a unit test scans the sources and fails on a use the list does not hold).
struct DriverEntryPoints {
  cu::PfnGetErrorName get_error_name = nullptr;
  cu::PfnInit init = nullptr;
  cu::PfnDriverGetVersion driver_get_version = nullptr;
  cu::PfnDeviceGetCount device_get_count = nullptr;
  cu::PfnDeviceGet device_get = nullptr;
  cu::PfnDeviceGetUuid device_get_uuid = nullptr;
  cu::PfnDeviceGetAttribute device_get_attribute = nullptr;
  cu::PfnCtxSetCurrent ctx_set_current = nullptr;
  cu::PfnCtxSynchronize ctx_synchronize = nullptr;
  cu::PfnDevicePrimaryCtxRetain primary_ctx_retain = nullptr;
  cu::PfnDevicePrimaryCtxRelease primary_ctx_release = nullptr;
  cu::PfnModuleLoadDataEx module_load_data_ex = nullptr;
  cu::PfnModuleGetFunction module_get_function = nullptr;
  cu::PfnModuleUnload module_unload = nullptr;
  cu::PfnLaunchKernel launch_kernel = nullptr;
  cu::PfnMemAlloc mem_alloc = nullptr;
  cu::PfnMemFree mem_free = nullptr;
  cu::PfnMemcpyHtoD legacy_stream_memcpy_htod = nullptr; // cuMemcpyHtoD: the legacy default stream
  cu::PfnMemcpyDtoH legacy_stream_memcpy_dtoh = nullptr; // cuMemcpyDtoH: the legacy default stream
  cu::PfnMemcpyDtoDAsync memcpy_dtod_async = nullptr;
  cu::PfnMemsetD32 legacy_stream_memset_d32 = nullptr; // cuMemsetD32: the legacy default stream
  cu::PfnMemsetD32Async memset_d32_async = nullptr;
  cu::PfnMemGetInfo mem_get_info = nullptr;
  cu::PfnMemHostAlloc mem_host_alloc = nullptr;
  cu::PfnMemFreeHost mem_free_host = nullptr;
  cu::PfnMemcpyHtoDAsync memcpy_htod_async = nullptr;
  cu::PfnMemcpyDtoHAsync memcpy_dtoh_async = nullptr;
  cu::PfnDeviceGetPCIBusId device_get_pci_bus_id = nullptr;
  cu::PfnMemcpyPeer legacy_stream_memcpy_peer = nullptr; // cuMemcpyPeer: the legacy default stream
  cu::PfnDeviceCanAccessPeer device_can_access_peer = nullptr;
  cu::PfnCtxEnablePeerAccess ctx_enable_peer_access = nullptr;
  cu::PfnStreamCreate stream_create = nullptr;
  cu::PfnStreamDestroy stream_destroy = nullptr;
  cu::PfnStreamSynchronize stream_synchronize = nullptr;
  cu::PfnEventCreate event_create = nullptr;
  cu::PfnEventDestroy event_destroy = nullptr;
  cu::PfnEventRecord event_record = nullptr;
  cu::PfnEventSynchronize event_synchronize = nullptr;
  cu::PfnEventElapsedTime event_elapsed_time = nullptr;
  cu::PfnIpcGetMemHandle ipc_get_mem_handle = nullptr;
  cu::PfnIpcOpenMemHandle ipc_open_mem_handle = nullptr;
  cu::PfnIpcCloseMemHandle ipc_close_mem_handle = nullptr;
  cu::PfnMemGetAllocationGranularity mem_get_allocation_granularity = nullptr;
  cu::PfnMemCreate mem_create = nullptr;
  cu::PfnMemRelease mem_release = nullptr;
  cu::PfnMemExportToShareableHandle mem_export_to_shareable_handle = nullptr;
  cu::PfnMemImportFromShareableHandle mem_import_from_shareable_handle = nullptr;
  cu::PfnMemAddressReserve mem_address_reserve = nullptr;
  cu::PfnMemAddressFree mem_address_free = nullptr;
  cu::PfnMemMap mem_map = nullptr;
  cu::PfnMemUnmap mem_unmap = nullptr;
  cu::PfnMemSetAccess mem_set_access = nullptr;
  cu::PfnDeviceGetDevResource device_get_dev_resource = nullptr;
  cu::PfnDevSmResourceSplitByCount dev_sm_resource_split_by_count = nullptr;
  cu::PfnDevResourceGenerateDesc dev_resource_generate_desc = nullptr;
  cu::PfnGreenCtxCreate green_ctx_create = nullptr;
  cu::PfnGreenCtxDestroy green_ctx_destroy = nullptr;
  cu::PfnCtxFromGreenCtx ctx_from_green_ctx = nullptr;
  cu::PfnGreenCtxGetDevResource green_ctx_get_dev_resource = nullptr;
  cu::PfnGreenCtxStreamCreate green_ctx_stream_create = nullptr;
  cu::PfnGetErrorString get_error_string = nullptr;
  cu::PfnPointerGetAttribute pointer_get_attribute = nullptr;
  cu::PfnCtxGetCurrent ctx_get_current = nullptr;
  cu::PfnMemAllocManaged mem_alloc_managed = nullptr;
  // Process checkpoint and restore (R570+): all six or the checkpoint test skips.
  cu::PfnCheckpointProcessGetState checkpoint_get_state = nullptr;
  cu::PfnCheckpointProcessLock checkpoint_lock = nullptr;
  cu::PfnCheckpointProcessCheckpoint checkpoint_checkpoint = nullptr;
  cu::PfnCheckpointProcessRestore checkpoint_restore = nullptr;
  cu::PfnCheckpointProcessUnlock checkpoint_unlock = nullptr;
  cu::PfnCheckpointProcessGetRestoreThreadId checkpoint_get_restore_thread_id = nullptr;
};

// One loaded driver. Not copyable; lives for the whole worker (never dlclose'd).
class Gpu {
public:
  // dlopens `libcuda_path`, resolves the entry points and calls cuInit(0). The error says why not (a
  // dlopen message, "no cuGetProcAddress", or cuInit's CudaFailure text); `init_result` holds
  // cuInit's code whenever it got that far.
  static Expected<std::unique_ptr<Gpu>> load(const std::string& libcuda_path,
                                             std::optional<cu::CUresult>& init_result);

  const DriverEntryPoints& api() const { return m_api; }
  [[nodiscard]] int driver_version() const { return m_driver_version; }
  [[nodiscard]] const cuda_api::MissingSymbols& missing() const { return m_missing; }

  // The driver's name for a code ("CUDA_ERROR_OUT_OF_MEMORY"), else cudadiag's, else "CUresult N".
  [[nodiscard]] std::string error_name(cu::CUresult code) const;
  // The driver's own words for a code (cuGetErrorString: "operation not permitted"); "" when it has none.
  [[nodiscard]] std::string error_text(cu::CUresult code) const;
  // Throws CudaFailure unless `code` is CUDA_SUCCESS.
  void check(cu::CUresult code, const std::string& call) const;
  // Throws CudaFailure(CUDA_ERROR_NOT_SUPPORTED) naming `what` when `entry` is null.
  template <class Fn> void require(Fn entry, const char* what) const {
    if (entry == nullptr) {
      throw CudaFailure(cu::CUDA_ERROR_NOT_FOUND, std::string(what) + " is not exported by this driver",
                        "CUDA_ERROR_NOT_FOUND");
    }
  }

  [[nodiscard]] int attribute(cu::CUdevice device, cu::CUdevice_attribute attribute) const;

  // Launches `function` with `args` (addresses of the kernel's parameters, in order) on `stream`;
  // a null stream (the legacy default stream) is refused with std::logic_error: work goes on the
  // test's stream.
  void launch(cu::CUfunction function, unsigned grid, unsigned block, cu::CUstream stream,
              std::vector<void*> args) const;

private:
  Gpu() = default;
  DriverEntryPoints m_api;
  int m_driver_version = 0;
  cuda_api::MissingSymbols m_missing;
};

// Device memory from cuMemAlloc, freed on destruction.
class DeviceBuffer {
public:
  DeviceBuffer(const Gpu& gpu, std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  [[nodiscard]] cu::CUdeviceptr get() const { return m_pointer; }
  [[nodiscard]] std::size_t size() const { return m_bytes; }

private:
  const Gpu& m_gpu;
  cu::CUdeviceptr m_pointer = 0;
  std::size_t m_bytes = 0;
};

// Page-locked host memory from cuMemHostAlloc (flags 0: this context's, not portable), freed on
// destruction.
class PinnedBuffer {
public:
  PinnedBuffer(const Gpu& gpu, std::size_t bytes);
  ~PinnedBuffer();
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  [[nodiscard]] void* get() const { return m_pointer; }
  [[nodiscard]] std::size_t size() const { return m_bytes; }

private:
  const Gpu& m_gpu;
  void* m_pointer = nullptr;
  std::size_t m_bytes = 0;
};

// A non-blocking stream and the copies and fills ordered on it: what a test's kernels consume is
// written here, and what they produce is read back here, so no work of the legacy default stream
// (or of another process) can reorder them.
class Stream {
public:
  explicit Stream(const Gpu& gpu);              // a non-blocking stream of the current context
  Stream(const Gpu& gpu, cu::CUstream adopted); // takes ownership of an existing stream
  struct Borrowed {};
  // Uses an existing stream that its owner destroys (a green context's, a caller's).
  Stream(const Gpu& gpu, cu::CUstream existing, Borrowed) : m_gpu(gpu), m_stream(existing), m_owned(false) {}
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  [[nodiscard]] cu::CUstream get() const { return m_stream; }
  void synchronize() const;
  // Queues a copy of `bytes` from host memory (`source` may be reused once this returns: the
  // driver stages pageable memory before it returns).
  void upload(cu::CUdeviceptr target, const void* source, std::size_t bytes) const;
  // Queues `words` 32-bit words of `value` at `target`.
  void fill_u32(cu::CUdeviceptr target, std::uint32_t value, std::size_t words) const;
  // Copies `bytes` to host memory after everything queued before it, and synchronises the stream:
  // `target` holds the data when this returns.
  void download(void* target, cu::CUdeviceptr source, std::size_t bytes) const;

private:
  const Gpu& m_gpu;
  cu::CUstream m_stream = nullptr;
  bool m_owned = true;
};

// A pair of events measuring GPU time on one stream.
class EventTimer {
public:
  explicit EventTimer(const Gpu& gpu);
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  // Both events are recorded on the stream they time; a null stream is refused (std::logic_error).
  void start(cu::CUstream stream) const;
  // Records the stop event, waits for it, returns the milliseconds since start().
  double stop(cu::CUstream stream) const;

private:
  const Gpu& m_gpu;
  cu::CUevent m_start = nullptr;
  cu::CUevent m_stop = nullptr;
};

// A module loaded from an image (PTX text, cubin, fatbin) in the current context.
class Module {
public:
  // Throws CudaFailure; the JIT's error log (PTX) is appended to the message when there is one.
  Module(const Gpu& gpu, const void* image);
  ~Module();
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  [[nodiscard]] cu::CUfunction function(const char* name) const;

private:
  const Gpu& m_gpu;
  cu::CUmodule m_module = nullptr;
};

// The primary context of a device, retained and made current for the lifetime of the object.
class PrimaryContext {
public:
  PrimaryContext(const Gpu& gpu, cu::CUdevice device);
  ~PrimaryContext();
  PrimaryContext(const PrimaryContext&) = delete;
  PrimaryContext& operator=(const PrimaryContext&) = delete;
  [[nodiscard]] cu::CUcontext get() const { return m_context; }

private:
  const Gpu& m_gpu;
  cu::CUdevice m_device;
  cu::CUcontext m_context = nullptr;
};

// Median of a non-empty sample (copied, so the caller's order is kept).
double median(std::vector<double> sample);

} // namespace cudadiag::selftest
