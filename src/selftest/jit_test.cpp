// The jit self-test: NVRTC compiles a kernel that uses cub::BlockReduce from the CCCL headers
// discovery found, three ways (PTX for the driver's JIT, a cubin, LTO-IR linked by nvJitLink into a
// cubin); the driver loads and runs each and the sums are checked. Without a GPU the three
// compiles (and the link) still run and are reported; only the launches are skipped.

#include "selftest/compiler_api.hpp"
#include "selftest/test_context.hpp"
#include "verify/dl_handle.hpp"

#include <algorithm>
#include <chrono>
#include <future>
#include <string>
#include <vector>

namespace cudadiag::selftest {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr unsigned k_block_threads = 128;
constexpr unsigned k_blocks = 4;

constexpr const char* k_kernel_name = "cudadiag_block_sum";
constexpr const char* k_kernel_source = R"(#include <cub/block/block_reduce.cuh>

extern "C" __global__ void cudadiag_block_sum(const int* in, int* out) {
  using BlockReduce = cub::BlockReduce<int, 128>;
  __shared__ typename BlockReduce::TempStorage storage;
  const int value = in[blockIdx.x * 128 + threadIdx.x];
  const int sum = BlockReduce(storage).Sum(value);
  if (threadIdx.x == 0) {
    out[blockIdx.x] = sum;
  }
}
)";

int input_value(unsigned i) { return static_cast<int>((i * 7U) % 13U) - 6; }

struct Nvrtc {
  verify::DlHandle handle;
  std::vector<std::string> missing;
  nvrtc::GetErrorStringFn error_string = nullptr;
  nvrtc::VersionFn version = nullptr;
  nvrtc::GetNumSupportedArchsFn num_archs = nullptr;
  nvrtc::GetSupportedArchsFn archs = nullptr;
  nvrtc::CreateProgramFn create = nullptr;
  nvrtc::CompileProgramFn compile = nullptr;
  nvrtc::GetProgramLogSizeFn log_size = nullptr;
  nvrtc::GetProgramLogFn log = nullptr;
  nvrtc::DestroyProgramFn destroy = nullptr;
  nvrtc_more::GetSizeFn ptx_size = nullptr, cubin_size = nullptr, ltoir_size = nullptr;
  nvrtc_more::GetDataFn ptx = nullptr, cubin = nullptr, ltoir = nullptr;

  explicit Nvrtc(const std::string& path) : handle(path) {
    const verify::SymbolResolver sym(handle, missing);
    error_string = sym.require<nvrtc::GetErrorStringFn>("nvrtcGetErrorString");
    version = sym.require<nvrtc::VersionFn>("nvrtcVersion");
    num_archs = sym.require<nvrtc::GetNumSupportedArchsFn>("nvrtcGetNumSupportedArchs");
    archs = sym.require<nvrtc::GetSupportedArchsFn>("nvrtcGetSupportedArchs");
    create = sym.require<nvrtc::CreateProgramFn>("nvrtcCreateProgram");
    compile = sym.require<nvrtc::CompileProgramFn>("nvrtcCompileProgram");
    log_size = sym.require<nvrtc::GetProgramLogSizeFn>("nvrtcGetProgramLogSize");
    log = sym.require<nvrtc::GetProgramLogFn>("nvrtcGetProgramLog");
    destroy = sym.require<nvrtc::DestroyProgramFn>("nvrtcDestroyProgram");
    ptx_size = sym.require<nvrtc_more::GetSizeFn>("nvrtcGetPTXSize");
    ptx = sym.require<nvrtc_more::GetDataFn>("nvrtcGetPTX");
    cubin_size = sym.require<nvrtc_more::GetSizeFn>("nvrtcGetCUBINSize");
    cubin = sym.require<nvrtc_more::GetDataFn>("nvrtcGetCUBIN");
    ltoir_size = sym.require<nvrtc_more::GetSizeFn>("nvrtcGetLTOIRSize");
    ltoir = sym.require<nvrtc_more::GetDataFn>("nvrtcGetLTOIR");
  }
  [[nodiscard]] bool usable() const { return handle.loaded() && missing.empty(); }
  [[nodiscard]] std::string text(nvrtc::Result code) const {
    const char* name = error_string != nullptr ? error_string(code) : nullptr;
    return (name != nullptr ? std::string(name) : "nvrtcResult") + " (" + std::to_string(code) + ")";
  }
  [[nodiscard]] std::vector<int> supported_archs() const {
    int count = 0;
    if (num_archs(&count) != nvrtc::k_success || count <= 0 || count > 1024) {
      return {};
    }
    std::vector<int> out(static_cast<std::size_t>(count));
    if (archs(out.data()) != nvrtc::k_success) {
      return {};
    }
    return out;
  }
};

// nvJitLink by plain name (12.3+) or, for older libraries, by the versioned names the header
// wrappers call.
struct JitLink {
  verify::DlHandle handle;
  std::vector<std::string> missing;
  nvjitlink::CreateFn create = nullptr;
  nvjitlink::DestroyFn destroy = nullptr;
  nvjitlink_more::AddDataFn add_data = nullptr;
  nvjitlink_more::CompleteFn complete = nullptr;
  nvjitlink_more::GetSizeFn cubin_size = nullptr, error_log_size = nullptr;
  nvjitlink_more::GetDataFn cubin = nullptr;
  nvjitlink_more::GetLogFn error_log = nullptr;

  explicit JitLink(const std::string& path) : handle(path) {
    for (const char* suffix : {"", "_13_0", "_12_0"}) {
      missing.clear();
      const std::string prefix = suffix[0] == '\0' ? "nvJitLink" : "__nvJitLink";
      const verify::SymbolResolver sym(handle, missing);
      create = sym.require<nvjitlink::CreateFn>((prefix + "Create" + suffix).c_str());
      destroy = sym.require<nvjitlink::DestroyFn>((prefix + "Destroy" + suffix).c_str());
      add_data = sym.require<nvjitlink_more::AddDataFn>((prefix + "AddData" + suffix).c_str());
      complete = sym.require<nvjitlink_more::CompleteFn>((prefix + "Complete" + suffix).c_str());
      cubin_size = sym.require<nvjitlink_more::GetSizeFn>((prefix + "GetLinkedCubinSize" + suffix).c_str());
      cubin = sym.require<nvjitlink_more::GetDataFn>((prefix + "GetLinkedCubin" + suffix).c_str());
      error_log_size = sym.require<nvjitlink_more::GetSizeFn>((prefix + "GetErrorLogSize" + suffix).c_str());
      error_log = sym.require<nvjitlink_more::GetLogFn>((prefix + "GetErrorLog" + suffix).c_str());
      if (missing.empty()) {
        return;
      }
    }
  }
  [[nodiscard]] bool usable() const { return handle.loaded() && missing.empty(); }
};

enum class Route { ptx, cubin, lto };
const char* route_name(Route route) {
  return route == Route::ptx ? "ptx" : route == Route::cubin ? "cubin" : "lto";
}

// One compile (and, for LTO-IR, the link): the image the driver will load, or an error.
struct Build {
  Route route = Route::ptx;
  std::string image; // PTX text (NUL-terminated when loaded) or a cubin
  std::string error; // "" when built
  double compile_ms = 0;
  double link_ms = 0;
  std::string ptx_version; // the PTX's ".version" (ptx route)
};

std::string ptx_version_of(const std::string& ptx) {
  const auto at = ptx.find(".version ");
  if (at == std::string::npos) {
    return {};
  }
  const auto end = ptx.find_first_of("\r\n", at);
  return ptx.substr(at + 9, end == std::string::npos ? std::string::npos : end - at - 9);
}

Build compile(const Nvrtc& nvrtc, const std::string& cccl_include, Route route, int arch) {
  Build build;
  build.route = route;
  const auto started = Clock::now();
  nvrtc::Program program = nullptr;
  if (const auto created = nvrtc.create(&program, k_kernel_source, "cudadiag_jit.cu", 0, nullptr, nullptr);
      created != nvrtc::k_success) {
    build.error = "nvrtcCreateProgram: " + nvrtc.text(created);
    return build;
  }
  const std::string arch_option =
      (route == Route::ptx ? "-arch=compute_" : "-arch=sm_") + std::to_string(arch);
  const std::string include_option = "-I" + cccl_include;
  std::vector<const char*> options{arch_option.c_str(), include_option.c_str(), "-std=c++17"};
  if (route == Route::lto) {
    options.push_back("-dlto");
  }
  const auto compiled = nvrtc.compile(program, static_cast<int>(options.size()), options.data());
  build.compile_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  if (compiled != nvrtc::k_success) {
    std::size_t size = 0;
    std::string log;
    if (nvrtc.log_size(program, &size) == nvrtc::k_success && size > 1) {
      log.resize(size);
      if (nvrtc.log(program, log.data()) == nvrtc::k_success) {
        log.resize(std::min<std::size_t>(::strnlen(log.data(), size), 1500));
      }
    }
    build.error = "nvrtcCompileProgram (" + arch_option + "): " + nvrtc.text(compiled) + (log.empty() ? "" : ": " + log);
  } else {
    const auto get_size = route == Route::ptx ? nvrtc.ptx_size : route == Route::cubin ? nvrtc.cubin_size : nvrtc.ltoir_size;
    const auto get_data = route == Route::ptx ? nvrtc.ptx : route == Route::cubin ? nvrtc.cubin : nvrtc.ltoir;
    std::size_t size = 0;
    if (get_size(program, &size) != nvrtc::k_success || size == 0) {
      build.error = std::string("NVRTC produced no ") + route_name(route) + " output";
    } else {
      build.image.resize(size);
      if (const auto got = get_data(program, build.image.data()); got != nvrtc::k_success) {
        build.error = "reading the output: " + nvrtc.text(got);
      }
    }
  }
  static_cast<void>(nvrtc.destroy(&program));
  if (route == Route::ptx && build.error.empty()) {
    build.ptx_version = ptx_version_of(build.image);
  }
  return build;
}

void link(const JitLink& linker, Build& build, int arch) {
  const auto started = Clock::now();
  const std::string arch_option = "-arch=sm_" + std::to_string(arch);
  const std::vector<const char*> options{arch_option.c_str(), "-lto"};
  nvjitlink::Handle handle = nullptr;
  if (const auto created = linker.create(&handle, static_cast<std::uint32_t>(options.size()), options.data());
      created != nvjitlink::k_success) {
    build.error = "nvJitLinkCreate: " + std::string(nvjitlink::result_name(created)) + " (" + std::to_string(created) + ")";
    return;
  }
  auto fail = [&](const char* call, nvjitlink::Result code) {
    std::string log;
    std::size_t size = 0;
    if (linker.error_log_size(handle, &size) == nvjitlink::k_success && size > 1) {
      log.resize(size);
      if (linker.error_log(handle, log.data()) == nvjitlink::k_success) {
        log.resize(std::min<std::size_t>(::strnlen(log.data(), size), 1500));
      }
    }
    build.error = std::string(call) + ": " + std::string(nvjitlink::result_name(code)) + " (" + std::to_string(code) + ")" +
                  (log.empty() ? "" : ": " + log);
  };
  std::string cubin;
  if (const auto added = linker.add_data(handle, nvjitlink_more::k_input_ltoir, build.image.data(), build.image.size(), "cudadiag_jit.ltoir");
      added != nvjitlink::k_success) {
    fail("nvJitLinkAddData", added);
  } else if (const auto completed = linker.complete(handle); completed != nvjitlink::k_success) {
    fail("nvJitLinkComplete", completed);
  } else {
    std::size_t size = 0;
    if (const auto sized = linker.cubin_size(handle, &size); sized != nvjitlink::k_success || size == 0) {
      fail("nvJitLinkGetLinkedCubinSize", sized);
    } else {
      cubin.resize(size);
      if (const auto got = linker.cubin(handle, cubin.data()); got != nvjitlink::k_success) {
        fail("nvJitLinkGetLinkedCubin", got);
      }
    }
  }
  static_cast<void>(linker.destroy(&handle));
  build.link_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  if (build.error.empty()) {
    build.image = std::move(cubin);
  }
}

// Loads the image, runs the kernel on known data, returns "" or what went wrong.
std::string run_image(const TestContext& context, const Build& build) {
  const Gpu& gpu = *context.gpu;
  std::string image = build.image;
  image.push_back('\0'); // PTX must be NUL-terminated; harmless after a cubin
  try {
    const Module module(gpu, image.data());
    const auto function = module.function(k_kernel_name);
    std::vector<int> input(k_blocks * k_block_threads);
    for (unsigned i = 0; i < input.size(); ++i) {
      input[i] = input_value(i);
    }
    const DeviceBuffer in(gpu, input.size() * sizeof(int));
    const DeviceBuffer out(gpu, k_blocks * sizeof(int));
    gpu.check(gpu.api().memcpy_htod(in.get(), input.data(), input.size() * sizeof(int)), "cuMemcpyHtoD");
    auto in_ptr = in.get();
    auto out_ptr = out.get();
    gpu.launch(function, k_blocks, k_block_threads, nullptr, {&in_ptr, &out_ptr});
    gpu.check(gpu.api().ctx_synchronize(), "cuCtxSynchronize");
    std::vector<int> sums(k_blocks);
    gpu.check(gpu.api().memcpy_dtoh(sums.data(), out.get(), sums.size() * sizeof(int)), "cuMemcpyDtoH");
    for (unsigned block = 0; block < k_blocks; ++block) {
      int expected = 0;
      for (unsigned t = 0; t < k_block_threads; ++t) {
        expected += input_value(block * k_block_threads + t);
      }
      if (sums[block] != expected) {
        return "block " + std::to_string(block) + " summed to " + std::to_string(sums[block]) + ", expected " +
               std::to_string(expected);
      }
    }
    return {};
  } catch (const CudaFailure& failure) {
    std::string text = failure.what();
    if (failure.code() == cu::CUDA_ERROR_UNSUPPORTED_PTX_VERSION) {
      text += ": the driver (CUDA " + std::to_string(gpu.driver_version() / 1000) + "." +
              std::to_string(gpu.driver_version() % 1000 / 10) + ") cannot JIT PTX ISA " + build.ptx_version +
              " — the NVRTC is newer than the driver (finding nvrtc.ptx_newer_than_driver)";
    }
    return text;
  }
}

} // namespace

TestResult run_jit(const TestContext& context) {
  auto result = new_result(context);
  const auto& config = context.config;
  if (config.nvrtc.empty()) {
    return skipped(context, "no NVRTC was found");
  }
  if (config.cccl_include.empty()) {
    return skipped(context, "no CCCL headers were found");
  }
  const Nvrtc nvrtc(config.nvrtc);
  if (!nvrtc.usable()) {
    result.status = "fail";
    result.reason = nvrtc.handle.loaded() ? "NVRTC lacks " + nvrtc.missing.front() : "cannot load NVRTC: " + nvrtc.handle.error();
    return result;
  }
  int major = 0;
  int minor = 0;
  static_cast<void>(nvrtc.version(&major, &minor));
  const auto archs = nvrtc.supported_archs();
  int arch = 90;
  bool arch_native = false;
  if (context.device) {
    arch = context.device->cc_major * 10 + context.device->cc_minor;
    arch_native = std::find(archs.begin(), archs.end(), arch) != archs.end();
  }
  if (!arch_native) {
    // No device, or a device newer than this NVRTC: compile for the newest arch NVRTC knows that the
    // device can run (PTX is forward compatible; a cubin is not, so only the ptx route runs then).
    int best = 0;
    for (const int candidate : archs) {
      if (candidate <= arch && candidate > best) {
        best = candidate;
      }
    }
    arch = best > 0 ? best : (archs.empty() ? arch : archs.back());
  }
  result.details["nvrtc_version"] = std::to_string(major) + "." + std::to_string(minor);
  result.details["arch"] = arch;
  result.details["cccl_include"] = config.cccl_include;

  const bool gpu_ready = context.gpu != nullptr && context.device.has_value();
  const bool cubin_runnable = gpu_ready && arch_native;
  std::vector<Route> routes{Route::ptx, Route::cubin, Route::lto};
  std::vector<std::future<Build>> compiles;
  for (const auto route : routes) {
    compiles.push_back(std::async(std::launch::async, [&nvrtc, &config, route, arch] {
      return compile(nvrtc, config.cccl_include, route, arch);
    }));
  }
  std::vector<Build> builds;
  for (auto& future : compiles) {
    builds.push_back(future.get());
  }

  std::optional<JitLink> linker;
  if (!config.nvjitlink.empty()) {
    linker.emplace(config.nvjitlink);
  }
  json route_details = json::object();
  std::vector<std::string> failures;
  int runs = 0;
  for (auto& build : builds) {
    json entry = {{"compile_ms", build.compile_ms}};
    const std::string name = route_name(build.route);
    std::string skip;
    if (build.error.empty() && build.route == Route::lto) {
      if (!linker) {
        skip = "no nvJitLink was found";
      } else if (!linker->usable()) {
        build.error = linker->handle.loaded() ? "nvJitLink lacks " + linker->missing.front()
                                              : "cannot load nvJitLink: " + linker->handle.error();
      } else {
        link(*linker, build, arch);
        entry["link_ms"] = build.link_ms;
      }
    }
    if (!build.ptx_version.empty()) {
      entry["ptx_version"] = build.ptx_version;
    }
    if (!build.error.empty()) {
      entry["status"] = "fail";
      entry["error"] = build.error;
      failures.push_back(name + ": " + build.error);
    } else if (!skip.empty()) {
      entry["status"] = "skip";
      entry["reason"] = skip;
    } else if (!gpu_ready) {
      entry["status"] = "built";
      entry["reason"] = "run skipped: " + context.no_gpu_reason;
    } else if (build.route != Route::ptx && !cubin_runnable) {
      entry["status"] = "built";
      entry["reason"] = "run skipped: NVRTC " + std::to_string(major) + "." + std::to_string(minor) +
                        " cannot target this device's sm_" + std::to_string(context.device->cc_major) +
                        std::to_string(context.device->cc_minor);
    } else {
      ++runs;
      if (const auto error = run_image(context, build); error.empty()) {
        entry["status"] = "pass";
      } else {
        entry["status"] = "fail";
        entry["error"] = error;
        failures.push_back(name + ": " + error);
      }
    }
    add_metric(result, name + "_compile_ms", build.compile_ms, "ms");
    route_details[name] = entry;
  }
  result.details["routes"] = route_details;
  if (!failures.empty()) {
    result.status = "fail";
    result.reason = failures.front();
  } else if (runs == 0) {
    result.status = "pass";
    result.reason = "compile and link verified; run skipped: " +
                    (gpu_ready ? std::string("no route runnable on this device") : context.no_gpu_reason);
  }
  return result;
}

} // namespace cudadiag::selftest
