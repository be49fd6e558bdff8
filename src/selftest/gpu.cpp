#include "selftest/gpu.hpp"

#include "cuda_api/cuda_errors.hpp"
#include "cuda_api/driver_resolver.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <array>

namespace cudadiag::selftest {
namespace {

// The version passed to cuGetProcAddress for everything but the green-context calls: the
// prototypes in cuda_api/driver.hpp are the ones CUDA 12.0 through 13.0 declare.
constexpr int k_base_version = cu::k_proc_address_base_version;
// Green contexts: ask for the 13.0 ABI first (CUdevSmResource with the partition fields), then
// the versions that introduced the calls, for older drivers.
constexpr std::array<int, 3> k_green_versions{13000, 12050, 12040};

void resolve_all(cuda_api::DriverResolver& r, DriverEntryPoints& a) {
  r.resolve(a.get_error_name, "cuGetErrorName");
  r.resolve(a.init, "cuInit");
  r.resolve(a.driver_get_version, "cuDriverGetVersion");
  r.resolve(a.device_get_count, "cuDeviceGetCount");
  r.resolve(a.device_get, "cuDeviceGet");
  r.resolve(a.device_get_uuid, "cuDeviceGetUuid");
  r.resolve(a.device_get_attribute, "cuDeviceGetAttribute");
  r.resolve(a.ctx_set_current, "cuCtxSetCurrent");
  r.resolve(a.ctx_synchronize, "cuCtxSynchronize");
  r.resolve(a.primary_ctx_retain, "cuDevicePrimaryCtxRetain");
  r.resolve(a.primary_ctx_release, "cuDevicePrimaryCtxRelease");
  r.resolve(a.module_load_data_ex, "cuModuleLoadDataEx");
  r.resolve(a.module_get_function, "cuModuleGetFunction");
  r.resolve(a.module_unload, "cuModuleUnload");
  r.resolve(a.launch_kernel, "cuLaunchKernel");
  r.resolve(a.mem_alloc, "cuMemAlloc");
  r.resolve(a.mem_free, "cuMemFree");
  r.resolve(a.legacy_stream_memcpy_htod, "cuMemcpyHtoD");
  r.resolve(a.legacy_stream_memcpy_dtoh, "cuMemcpyDtoH");
  r.resolve(a.memcpy_dtod_async, "cuMemcpyDtoDAsync");
  r.resolve(a.legacy_stream_memset_d32, "cuMemsetD32");
  r.resolve(a.memset_d32_async, "cuMemsetD32Async");
  r.resolve(a.mem_get_info, "cuMemGetInfo");
  r.resolve(a.mem_host_alloc, "cuMemHostAlloc");
  r.resolve(a.mem_free_host, "cuMemFreeHost");
  r.resolve(a.memcpy_htod_async, "cuMemcpyHtoDAsync");
  r.resolve(a.memcpy_dtoh_async, "cuMemcpyDtoHAsync");
  r.resolve(a.device_get_pci_bus_id, "cuDeviceGetPCIBusId");
  r.resolve(a.legacy_stream_memcpy_peer, "cuMemcpyPeer");
  r.resolve(a.device_can_access_peer, "cuDeviceCanAccessPeer");
  r.resolve(a.ctx_enable_peer_access, "cuCtxEnablePeerAccess");
  r.resolve(a.stream_create, "cuStreamCreate");
  r.resolve(a.stream_destroy, "cuStreamDestroy");
  r.resolve(a.stream_synchronize, "cuStreamSynchronize");
  r.resolve(a.event_create, "cuEventCreate");
  r.resolve(a.event_destroy, "cuEventDestroy");
  r.resolve(a.event_record, "cuEventRecord");
  r.resolve(a.event_synchronize, "cuEventSynchronize");
  r.resolve(a.event_elapsed_time, "cuEventElapsedTime");
  r.resolve(a.ipc_get_mem_handle, "cuIpcGetMemHandle");
  r.resolve(a.ipc_open_mem_handle, "cuIpcOpenMemHandle");
  r.resolve(a.ipc_close_mem_handle, "cuIpcCloseMemHandle");
  r.resolve(a.mem_get_allocation_granularity, "cuMemGetAllocationGranularity");
  r.resolve(a.mem_create, "cuMemCreate");
  r.resolve(a.mem_release, "cuMemRelease");
  r.resolve(a.mem_export_to_shareable_handle, "cuMemExportToShareableHandle");
  r.resolve(a.mem_import_from_shareable_handle, "cuMemImportFromShareableHandle");
  r.resolve(a.mem_address_reserve, "cuMemAddressReserve");
  r.resolve(a.mem_address_free, "cuMemAddressFree");
  r.resolve(a.mem_map, "cuMemMap");
  r.resolve(a.mem_unmap, "cuMemUnmap");
  r.resolve(a.mem_set_access, "cuMemSetAccess");
  const auto green = {k_green_versions[0], k_green_versions[1], k_green_versions[2]};
  r.resolve(a.device_get_dev_resource, "cuDeviceGetDevResource", green);
  r.resolve(a.dev_sm_resource_split_by_count, "cuDevSmResourceSplitByCount", green);
  r.resolve(a.dev_resource_generate_desc, "cuDevResourceGenerateDesc", green);
  r.resolve(a.green_ctx_create, "cuGreenCtxCreate", green);
  r.resolve(a.green_ctx_destroy, "cuGreenCtxDestroy", green);
  r.resolve(a.ctx_from_green_ctx, "cuCtxFromGreenCtx", green);
  r.resolve(a.green_ctx_get_dev_resource, "cuGreenCtxGetDevResource", green);
  r.resolve(a.green_ctx_stream_create, "cuGreenCtxStreamCreate", {13000, 12050});
  r.resolve(a.get_error_string, "cuGetErrorString");
  r.resolve(a.pointer_get_attribute, "cuPointerGetAttribute");
  r.resolve(a.ctx_get_current, "cuCtxGetCurrent");
  r.resolve(a.mem_alloc_managed, "cuMemAllocManaged");
  const auto checkpoint = {cu::k_checkpoint_version};
  r.resolve(a.checkpoint_get_state, "cuCheckpointProcessGetState", checkpoint);
  r.resolve(a.checkpoint_lock, "cuCheckpointProcessLock", checkpoint);
  r.resolve(a.checkpoint_checkpoint, "cuCheckpointProcessCheckpoint", checkpoint);
  r.resolve(a.checkpoint_restore, "cuCheckpointProcessRestore", checkpoint);
  r.resolve(a.checkpoint_unlock, "cuCheckpointProcessUnlock", checkpoint);
  r.resolve(a.checkpoint_get_restore_thread_id, "cuCheckpointProcessGetRestoreThreadId", checkpoint);
}

} // namespace

Expected<std::unique_ptr<Gpu>> Gpu::load(const std::string& libcuda_path,
                                         std::optional<cu::CUresult>& init_result) {
  ::dlerror();
  // Never dlclose'd: unloading a driver after cuInit is unsafe, and the worker exits after the tests.
  void* handle = ::dlopen(libcuda_path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (handle == nullptr) {
    const char* text = ::dlerror();
    return Error{"cannot load " + libcuda_path + ": " + (text != nullptr ? text : "dlopen failed")};
  }
  std::unique_ptr<Gpu> gpu(new Gpu());
  cuda_api::DriverResolver resolver(handle, gpu->m_missing);
  if (!resolver.usable()) {
    return Error{libcuda_path + " has no cuGetProcAddress (a driver older than CUDA 11.3, or not a driver)"};
  }
  resolve_all(resolver, gpu->m_api);
  if (gpu->m_api.init == nullptr) {
    return Error{libcuda_path + " does not resolve cuInit"};
  }
  const auto result = gpu->m_api.init(0);
  init_result = result;
  if (result != cu::CUDA_SUCCESS) {
    return Error{"cuInit failed: " + gpu->error_name(result) + " (" +
                 std::to_string(static_cast<int>(result)) + ")"};
  }
  if (gpu->m_api.driver_get_version != nullptr) {
    static_cast<void>(gpu->m_api.driver_get_version(&gpu->m_driver_version));
  }
  return gpu;
}

std::string Gpu::error_name(cu::CUresult code) const {
  const char* text = nullptr;
  if (m_api.get_error_name != nullptr && m_api.get_error_name(code, &text) == cu::CUDA_SUCCESS &&
      text != nullptr) {
    return text;
  }
  if (const auto* known = cuda_api::find_cuda_error(code); known != nullptr) {
    return std::string(known->name);
  }
  return "CUresult " + std::to_string(static_cast<int>(code));
}

std::string Gpu::error_text(cu::CUresult code) const {
  const char* text = nullptr;
  if (m_api.get_error_string != nullptr && m_api.get_error_string(code, &text) == cu::CUDA_SUCCESS &&
      text != nullptr) {
    return text;
  }
  return {};
}

void Gpu::check(cu::CUresult code, const std::string& call) const {
  if (code != cu::CUDA_SUCCESS) {
    throw CudaFailure(code, call, error_name(code));
  }
}

int Gpu::attribute(cu::CUdevice device, cu::CUdevice_attribute attribute) const {
  require(m_api.device_get_attribute, "cuDeviceGetAttribute");
  int value = 0;
  check(m_api.device_get_attribute(&value, attribute, device),
        "cuDeviceGetAttribute(" + std::to_string(static_cast<int>(attribute)) + ")");
  return value;
}

void Gpu::launch(cu::CUfunction function, unsigned grid, unsigned block, cu::CUstream stream,
                 std::vector<void*> args) const {
  require(m_api.launch_kernel, "cuLaunchKernel");
  if (stream == nullptr) {
    throw std::logic_error("a kernel launch on the legacy default stream: launch on the test's stream");
  }
  check(m_api.launch_kernel(function, grid, 1, 1, block, 1, 1, 0, stream, args.data(), nullptr),
        "cuLaunchKernel(" + std::to_string(grid) + " x " + std::to_string(block) + ")");
}

DeviceBuffer::DeviceBuffer(const Gpu& gpu, std::size_t bytes) : m_gpu(gpu), m_bytes(bytes) {
  gpu.require(gpu.api().mem_alloc, "cuMemAlloc");
  gpu.check(gpu.api().mem_alloc(&m_pointer, bytes), "cuMemAlloc (" + std::to_string(bytes) + " bytes)");
}

DeviceBuffer::~DeviceBuffer() {
  if (m_pointer != 0 && m_gpu.api().mem_free != nullptr) {
    static_cast<void>(m_gpu.api().mem_free(m_pointer));
  }
}

PinnedBuffer::PinnedBuffer(const Gpu& gpu, std::size_t bytes) : m_gpu(gpu), m_bytes(bytes) {
  gpu.require(gpu.api().mem_host_alloc, "cuMemHostAlloc");
  gpu.require(gpu.api().mem_free_host, "cuMemFreeHost");
  gpu.check(gpu.api().mem_host_alloc(&m_pointer, bytes, 0),
            "cuMemHostAlloc (" + std::to_string(bytes) + " bytes)");
}

PinnedBuffer::~PinnedBuffer() {
  if (m_pointer != nullptr) {
    static_cast<void>(m_gpu.api().mem_free_host(m_pointer));
  }
}

Stream::Stream(const Gpu& gpu) : m_gpu(gpu) {
  gpu.require(gpu.api().stream_create, "cuStreamCreate");
  gpu.check(gpu.api().stream_create(&m_stream, cu::k_stream_non_blocking), "cuStreamCreate");
}

Stream::Stream(const Gpu& gpu, cu::CUstream adopted) : m_gpu(gpu), m_stream(adopted) {}

Stream::~Stream() {
  if (m_owned && m_stream != nullptr && m_gpu.api().stream_destroy != nullptr) {
    static_cast<void>(m_gpu.api().stream_destroy(m_stream));
  }
}

void Stream::synchronize() const {
  m_gpu.check(m_gpu.api().stream_synchronize(m_stream), "cuStreamSynchronize");
}

void Stream::upload(cu::CUdeviceptr target, const void* source, std::size_t bytes) const {
  m_gpu.require(m_gpu.api().memcpy_htod_async, "cuMemcpyHtoDAsync");
  m_gpu.check(m_gpu.api().memcpy_htod_async(target, source, bytes, m_stream), "cuMemcpyHtoDAsync");
}

void Stream::fill_u32(cu::CUdeviceptr target, std::uint32_t value, std::size_t words) const {
  m_gpu.require(m_gpu.api().memset_d32_async, "cuMemsetD32Async");
  m_gpu.check(m_gpu.api().memset_d32_async(target, value, words, m_stream), "cuMemsetD32Async");
}

void Stream::download(void* target, cu::CUdeviceptr source, std::size_t bytes) const {
  m_gpu.require(m_gpu.api().memcpy_dtoh_async, "cuMemcpyDtoHAsync");
  m_gpu.check(m_gpu.api().memcpy_dtoh_async(target, source, bytes, m_stream), "cuMemcpyDtoHAsync");
  synchronize();
}

EventTimer::EventTimer(const Gpu& gpu) : m_gpu(gpu) {
  gpu.require(gpu.api().event_create, "cuEventCreate");
  gpu.check(gpu.api().event_create(&m_start, cu::k_event_default), "cuEventCreate");
  gpu.check(gpu.api().event_create(&m_stop, cu::k_event_default), "cuEventCreate");
}

EventTimer::~EventTimer() {
  for (auto* event : {m_start, m_stop}) {
    if (event != nullptr && m_gpu.api().event_destroy != nullptr) {
      static_cast<void>(m_gpu.api().event_destroy(event));
    }
  }
}

void EventTimer::start(cu::CUstream stream) const {
  if (stream == nullptr) {
    throw std::logic_error("an event on the legacy default stream: record it on the stream it times");
  }
  m_gpu.check(m_gpu.api().event_record(m_start, stream), "cuEventRecord");
}

double EventTimer::stop(cu::CUstream stream) const {
  if (stream == nullptr) {
    throw std::logic_error("an event on the legacy default stream: record it on the stream it times");
  }
  m_gpu.check(m_gpu.api().event_record(m_stop, stream), "cuEventRecord");
  m_gpu.check(m_gpu.api().event_synchronize(m_stop), "cuEventSynchronize");
  float milliseconds = 0;
  m_gpu.check(m_gpu.api().event_elapsed_time(&milliseconds, m_start, m_stop), "cuEventElapsedTime");
  return milliseconds;
}

Module::Module(const Gpu& gpu, const void* image) : m_gpu(gpu) {
  gpu.require(gpu.api().module_load_data_ex, "cuModuleLoadDataEx");
  std::array<char, 4096> log{};
  std::array<cu::CUjit_option, 2> options{cu::CU_JIT_ERROR_LOG_BUFFER,
                                          cu::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  std::array<void*, 2> values{log.data(), reinterpret_cast<void*>(log.size() - 1)};
  const auto result = gpu.api().module_load_data_ex(&m_module, image, 2, options.data(), values.data());
  if (result != cu::CUDA_SUCCESS) {
    std::string call = "cuModuleLoadDataEx";
    if (log[0] != '\0') {
      std::string text(log.data());
      std::replace(text.begin(), text.end(), '\n', ' ');
      call += " [JIT log: " + text + "]";
    }
    throw CudaFailure(result, call, gpu.error_name(result));
  }
}

Module::~Module() {
  if (m_module != nullptr && m_gpu.api().module_unload != nullptr) {
    static_cast<void>(m_gpu.api().module_unload(m_module));
  }
}

cu::CUfunction Module::function(const char* name) const {
  cu::CUfunction function = nullptr;
  m_gpu.check(m_gpu.api().module_get_function(&function, m_module, name),
              std::string("cuModuleGetFunction(") + name + ")");
  return function;
}

PrimaryContext::PrimaryContext(const Gpu& gpu, cu::CUdevice device) : m_gpu(gpu), m_device(device) {
  gpu.require(gpu.api().primary_ctx_retain, "cuDevicePrimaryCtxRetain");
  gpu.check(gpu.api().primary_ctx_retain(&m_context, device), "cuDevicePrimaryCtxRetain");
  gpu.check(gpu.api().ctx_set_current(m_context), "cuCtxSetCurrent");
}

PrimaryContext::~PrimaryContext() {
  if (m_context != nullptr && m_gpu.api().primary_ctx_release != nullptr) {
    static_cast<void>(m_gpu.api().ctx_set_current(nullptr));
    static_cast<void>(m_gpu.api().primary_ctx_release(m_device));
  }
}

double median(std::vector<double> sample) {
  std::sort(sample.begin(), sample.end());
  const auto middle = sample.size() / 2;
  return sample.size() % 2 == 1 ? sample[middle] : (sample[middle - 1] + sample[middle]) / 2.0;
}

} // namespace cudadiag::selftest
