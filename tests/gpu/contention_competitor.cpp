// A process that keeps a GPU busy, for the self-test's contention check (tests/gpu/check_gpu_contention.py):
// through the CUDA driver API (libcuda.so.1 by dlopen, the prototypes from cuda.h) it loads the bundled
// PTX (kernels/ptx/copy.ptx and fma.ptx) and launches, back to back on a stream of its own, the copy
// kernel over two large buffers (memory-bound) and the FP32 FMA kernel (compute-bound), until its time
// is up or it is sent SIGTERM/SIGINT. When the first round has finished it prints one line,
// "ready pid=PID", on stdout, so the caller starts measuring only under load.
//
//   cudadiag_gpu_competitor KERNELS_PTX_DIR [--seconds S (default 600)] [--device N (0)] [--gib G (2)]
//
// Exit: 0 when the time is up or on a signal, 1 on a driver error (printed on stderr), 2 on usage.

#include <cuda.h>
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace {

std::atomic<bool> g_stop{false};

void on_signal(int) {
  g_stop.store(true);
}

struct Driver {
  decltype(&cuInit) init = nullptr;
  decltype(&cuDeviceGet) device_get = nullptr;
  decltype(&cuDeviceGetAttribute) device_get_attribute = nullptr;
  decltype(&cuDevicePrimaryCtxRetain) primary_ctx_retain = nullptr;
  decltype(&cuCtxSetCurrent) ctx_set_current = nullptr;
  decltype(&cuModuleLoadData) module_load_data = nullptr;
  decltype(&cuModuleGetFunction) module_get_function = nullptr;
  decltype(&cuMemAlloc_v2) mem_alloc = nullptr;
  decltype(&cuMemsetD32Async) memset_d32_async = nullptr;
  decltype(&cuStreamCreate) stream_create = nullptr;
  decltype(&cuStreamSynchronize) stream_synchronize = nullptr;
  decltype(&cuLaunchKernel) launch_kernel = nullptr;
  decltype(&cuGetErrorName) get_error_name = nullptr;
};

template <class Fn> bool load(void* library, Fn& slot, const char* name) {
  slot = reinterpret_cast<Fn>(::dlsym(library, name));
  if (slot == nullptr) {
    std::fprintf(stderr, "competitor: libcuda.so.1 has no %s\n", name);
  }
  return slot != nullptr;
}

bool check(const Driver& driver, CUresult code, const char* call) {
  if (code == CUDA_SUCCESS) {
    return true;
  }
  const char* name = nullptr;
  if (driver.get_error_name != nullptr) {
    driver.get_error_name(code, &name);
  }
  std::fprintf(stderr, "competitor: %s failed: %s (%d)\n", call, name != nullptr ? name : "?",
               static_cast<int>(code));
  return false;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

} // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s KERNELS_PTX_DIR [--seconds S] [--device N] [--gib G]\n", argv[0]);
    return 2;
  }
  const std::string ptx_dir = argv[1];
  double seconds = 600;
  int ordinal = 0;
  unsigned long long gib = 2;
  for (int i = 2; i + 1 < argc; i += 2) {
    const std::string option = argv[i];
    if (option == "--seconds") {
      seconds = std::atof(argv[i + 1]);
    } else if (option == "--device") {
      ordinal = std::atoi(argv[i + 1]);
    } else if (option == "--gib") {
      gib = std::strtoull(argv[i + 1], nullptr, 10);
    } else {
      std::fprintf(stderr, "competitor: unknown option %s\n", argv[i]);
      return 2;
    }
  }
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);

  void* library = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    std::fprintf(stderr, "competitor: cannot load libcuda.so.1: %s\n", ::dlerror());
    return 1;
  }
  Driver d;
  const bool loaded =
      load(library, d.init, "cuInit") && load(library, d.device_get, "cuDeviceGet") &&
      load(library, d.device_get_attribute, "cuDeviceGetAttribute") &&
      load(library, d.primary_ctx_retain, "cuDevicePrimaryCtxRetain") &&
      load(library, d.ctx_set_current, "cuCtxSetCurrent") &&
      load(library, d.module_load_data, "cuModuleLoadData") &&
      load(library, d.module_get_function, "cuModuleGetFunction") &&
      load(library, d.mem_alloc, "cuMemAlloc_v2") && load(library, d.memset_d32_async, "cuMemsetD32Async") &&
      load(library, d.stream_create, "cuStreamCreate") &&
      load(library, d.stream_synchronize, "cuStreamSynchronize") &&
      load(library, d.launch_kernel, "cuLaunchKernel") && load(library, d.get_error_name, "cuGetErrorName");
  if (!loaded) {
    return 1;
  }
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUmodule copy_module = nullptr;
  CUmodule fma_module = nullptr;
  CUfunction copy = nullptr;
  CUfunction fma = nullptr;
  CUstream stream = nullptr;
  int sms = 0;
  const std::string copy_ptx = read_text(ptx_dir + "/copy.ptx");
  const std::string fma_ptx = read_text(ptx_dir + "/fma.ptx");
  if (copy_ptx.empty() || fma_ptx.empty()) {
    std::fprintf(stderr, "competitor: no copy.ptx / fma.ptx in %s\n", ptx_dir.c_str());
    return 1;
  }
  if (!check(d, d.init(0), "cuInit") || !check(d, d.device_get(&device, ordinal), "cuDeviceGet") ||
      !check(d, d.device_get_attribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device),
             "cuDeviceGetAttribute") ||
      !check(d, d.primary_ctx_retain(&context, device), "cuDevicePrimaryCtxRetain") ||
      !check(d, d.ctx_set_current(context), "cuCtxSetCurrent") ||
      !check(d, d.module_load_data(&copy_module, copy_ptx.c_str()), "cuModuleLoadData(copy)") ||
      !check(d, d.module_load_data(&fma_module, fma_ptx.c_str()), "cuModuleLoadData(fma)") ||
      !check(d, d.module_get_function(&copy, copy_module, "cudadiag_copy_u32x4"),
             "cuModuleGetFunction(copy)") ||
      !check(d, d.module_get_function(&fma, fma_module, "cudadiag_fma_f32"), "cuModuleGetFunction(fma)") ||
      !check(d, d.stream_create(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate")) {
    return 1;
  }
  const unsigned long long bytes = gib << 30U;
  const unsigned fma_blocks = static_cast<unsigned>(sms) * 8;
  CUdeviceptr source = 0;
  CUdeviceptr target = 0;
  CUdeviceptr out = 0;
  if (!check(d, d.mem_alloc(&source, bytes), "cuMemAlloc(source)") ||
      !check(d, d.mem_alloc(&target, bytes), "cuMemAlloc(target)") ||
      !check(d, d.mem_alloc(&out, std::size_t{fma_blocks} * 256 * sizeof(float)), "cuMemAlloc(out)") ||
      !check(d, d.memset_d32_async(source, 0x3F800000U, bytes / 4, stream), "cuMemsetD32Async")) {
    return 1;
  }
  unsigned long long count = bytes / 16;
  unsigned long long rounds = 256;
  void* copy_args[] = {&target, &source, &count};
  void* fma_args[] = {&out, &rounds};
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  bool announced = false;
  unsigned long long launched = 0;
  while (!g_stop.load() && std::chrono::steady_clock::now() < until) {
    for (int i = 0; i < 4; ++i) {
      if (!check(d,
                 d.launch_kernel(copy, static_cast<unsigned>(sms) * 8, 1, 1, 256, 1, 1, 0, stream, copy_args,
                                 nullptr),
                 "cuLaunchKernel(copy)") ||
          !check(d, d.launch_kernel(fma, fma_blocks, 1, 1, 256, 1, 1, 0, stream, fma_args, nullptr),
                 "cuLaunchKernel(fma)")) {
        return 1;
      }
      launched += 2;
    }
    if (!check(d, d.stream_synchronize(stream), "cuStreamSynchronize")) {
      return 1;
    }
    if (!announced) {
      std::printf("ready pid=%d\n", static_cast<int>(::getpid()));
      std::fflush(stdout);
      announced = true;
    }
  }
  std::fprintf(stderr, "competitor: %llu launches, stopping\n", launched);
  return 0;
}
