// The jit self-test: NVRTC compiles a kernel that uses cub::BlockReduce from the CCCL headers
// discovery found, three ways (PTX for the driver's JIT, a cubin, LTO-IR linked by nvJitLink into a
// cubin); the driver loads and runs each and the sums are checked. Without a GPU the three
// compiles (and the link) still run and are reported; only the launches are skipped.

#include "core/environment.hpp"
#include "core/text.hpp"
#include "cuda_api/library.hpp"
#include "cuda_api/nvjitlink.hpp"
#include "cuda_api/nvrtc.hpp"
#include "selftest/selftest_codec.hpp"
#include "selftest/selftest_worker.hpp"
#include "selftest/test_context.hpp"
#include "worker/process.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <future>
#include <string>
#include <vector>

namespace cudadiag::selftest {
namespace {

namespace nvrtc = cuda_api::nvrtc;
namespace nvjitlink = cuda_api::nvjitlink;
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

int input_value(unsigned i) {
  return static_cast<int>((i * 7U) % 13U) - 6;
}

struct Nvrtc {
  // NVRTC's builtins, loaded first when CUDA Python preloads them (WorkerConfig::nvrtc_builtins):
  // NVRTC's own search for them by name then finds them loaded.
  cuda_api::DlHandle builtins;
  cuda_api::DlHandle handle;
  cuda_api::MissingSymbols missing;
  nvrtc::GetErrorStringFn error_string = nullptr;
  nvrtc::VersionFn version = nullptr;
  nvrtc::GetNumSupportedArchsFn num_archs = nullptr;
  nvrtc::GetSupportedArchsFn archs = nullptr;
  nvrtc::CreateProgramFn create = nullptr;
  nvrtc::CompileProgramFn compile = nullptr;
  nvrtc::GetProgramLogSizeFn log_size = nullptr;
  nvrtc::GetProgramLogFn log = nullptr;
  nvrtc::DestroyProgramFn destroy = nullptr;
  nvrtc::GetSizeFn ptx_size = nullptr, cubin_size = nullptr, ltoir_size = nullptr;
  nvrtc::GetDataFn ptx = nullptr, cubin = nullptr, ltoir = nullptr;

  Nvrtc(const std::string& path, const std::string& builtins_preload)
      : builtins(builtins_preload.empty() ? cuda_api::DlHandle() : cuda_api::DlHandle(builtins_preload)),
        handle(path) {
    const cuda_api::SymbolResolver sym(handle, missing);
    error_string = sym.require<nvrtc::GetErrorStringFn>("nvrtcGetErrorString");
    version = sym.require<nvrtc::VersionFn>("nvrtcVersion");
    num_archs = sym.require<nvrtc::GetNumSupportedArchsFn>("nvrtcGetNumSupportedArchs");
    archs = sym.require<nvrtc::GetSupportedArchsFn>("nvrtcGetSupportedArchs");
    create = sym.require<nvrtc::CreateProgramFn>("nvrtcCreateProgram");
    compile = sym.require<nvrtc::CompileProgramFn>("nvrtcCompileProgram");
    log_size = sym.require<nvrtc::GetProgramLogSizeFn>("nvrtcGetProgramLogSize");
    log = sym.require<nvrtc::GetProgramLogFn>("nvrtcGetProgramLog");
    destroy = sym.require<nvrtc::DestroyProgramFn>("nvrtcDestroyProgram");
    ptx_size = sym.require<nvrtc::GetSizeFn>("nvrtcGetPTXSize");
    ptx = sym.require<nvrtc::GetDataFn>("nvrtcGetPTX");
    cubin_size = sym.require<nvrtc::GetSizeFn>("nvrtcGetCUBINSize");
    cubin = sym.require<nvrtc::GetDataFn>("nvrtcGetCUBIN");
    ltoir_size = sym.require<nvrtc::GetSizeFn>("nvrtcGetLTOIRSize");
    ltoir = sym.require<nvrtc::GetDataFn>("nvrtcGetLTOIR");
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
  cuda_api::DlHandle handle;
  cuda_api::MissingSymbols missing;
  nvjitlink::CreateFn create = nullptr;
  nvjitlink::DestroyFn destroy = nullptr;
  nvjitlink::AddDataFn add_data = nullptr;
  nvjitlink::CompleteFn complete = nullptr;
  nvjitlink::GetSizeFn cubin_size = nullptr, error_log_size = nullptr;
  nvjitlink::GetDataFn cubin = nullptr;
  nvjitlink::GetLogFn error_log = nullptr;

  explicit JitLink(const std::string& path) : handle(path) {
    for (const char* suffix : {"", "_13_0", "_12_0"}) {
      missing.clear();
      const std::string prefix = suffix[0] == '\0' ? "nvJitLink" : "__nvJitLink";
      const cuda_api::SymbolResolver sym(handle, missing);
      create = sym.require<nvjitlink::CreateFn>((prefix + "Create" + suffix).c_str());
      destroy = sym.require<nvjitlink::DestroyFn>((prefix + "Destroy" + suffix).c_str());
      add_data = sym.require<nvjitlink::AddDataFn>((prefix + "AddData" + suffix).c_str());
      complete = sym.require<nvjitlink::CompleteFn>((prefix + "Complete" + suffix).c_str());
      cubin_size = sym.require<nvjitlink::GetSizeFn>((prefix + "GetLinkedCubinSize" + suffix).c_str());
      cubin = sym.require<nvjitlink::GetDataFn>((prefix + "GetLinkedCubin" + suffix).c_str());
      error_log_size = sym.require<nvjitlink::GetSizeFn>((prefix + "GetErrorLogSize" + suffix).c_str());
      error_log = sym.require<nvjitlink::GetLogFn>((prefix + "GetErrorLog" + suffix).c_str());
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

// One route's image, ready for the driver, or why there is none.
struct Build {
  Route route = Route::ptx;
  std::string image;       // PTX text or a cubin
  std::string error;       // "" when built
  std::string skip;        // a route that cannot be built here (no nvJitLink, arch unknown to NVRTC)
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

// One NVRTC compile and what it produced.
struct Compilation {
  std::string ptx, cubin, ltoir;
  std::string error;
  double ms = 0;
};

std::string read_output(nvrtc::Program program, nvrtc::GetSizeFn get_size, nvrtc::GetDataFn get_data) {
  std::size_t size = 0;
  if (get_size(program, &size) != nvrtc::k_success || size <= 1) {
    return {};
  }
  std::string data(size, '\0');
  return get_data(program, data.data()) == nvrtc::k_success ? data : std::string();
}

// Compiles the kernel with `arch_option` (-arch=sm_XX gives PTX and a cubin from one compile;
// -arch=compute_XX gives PTX only), plus -dlto for LTO-IR.
Compilation compile(const Nvrtc& nvrtc, const std::string& cccl_include, const std::string& arch_option,
                    bool lto) {
  Compilation out;
  const auto started = Clock::now();
  nvrtc::Program program = nullptr;
  if (const auto created = nvrtc.create(&program, k_kernel_source, "cudadiag_jit.cu", 0, nullptr, nullptr);
      created != nvrtc::k_success) {
    out.error = "nvrtcCreateProgram: " + nvrtc.text(created);
    return out;
  }
  const std::string include_option = "-I" + cccl_include;
  std::vector<const char*> options{arch_option.c_str(), include_option.c_str(), "-std=c++17"};
  if (lto) {
    options.push_back("-dlto");
  }
  const auto compiled = nvrtc.compile(program, static_cast<int>(options.size()), options.data());
  out.ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  if (compiled != nvrtc::k_success) {
    std::size_t size = 0;
    std::string log;
    if (nvrtc.log_size(program, &size) == nvrtc::k_success && size > 1) {
      log.resize(size);
      if (nvrtc.log(program, log.data()) == nvrtc::k_success) {
        log.resize(std::min<std::size_t>(::strnlen(log.data(), size), 1500));
      }
    }
    out.error = "nvrtcCompileProgram (" + arch_option + (lto ? " -dlto" : "") + "): " + nvrtc.text(compiled) +
                (log.empty() ? "" : ": " + log);
  } else if (lto) {
    out.ltoir = read_output(program, nvrtc.ltoir_size, nvrtc.ltoir);
  } else {
    out.ptx = read_output(program, nvrtc.ptx_size, nvrtc.ptx);
    out.cubin = read_output(program, nvrtc.cubin_size, nvrtc.cubin);
  }
  static_cast<void>(nvrtc.destroy(&program));
  return out;
}

// The LTO-IR compile, in `cudadiag __worker jit_lto NVRTC ARCH CCCL_INCLUDE` (see
// run_jit_lto_compile); in this process when there is no executable to start.
Compilation compile_lto_elsewhere(const WorkerConfig& config, const Nvrtc& nvrtc, int arch) {
  if (config.executable.empty()) {
    return compile(nvrtc, config.cccl_include, "-arch=sm_" + std::to_string(arch), true);
  }
  worker::WorkerOptions options;
  options.executable = config.executable;
  options.step_timeout = test_timeout("jit", config.level); // within the jit test's own deadline
  const auto outcomes = worker::run_steps(
      {worker::WorkerStep("jit_lto", "jit_lto", config.nvrtc,
                          {std::to_string(arch), config.cccl_include, config.nvrtc_builtins})},
      options, Environment::capture());
  const auto& outcome = outcomes.front();
  Compilation out;
  if (outcome.status != worker::StepStatus::ok) {
    out.error = "the LTO-IR compile process: " + outcome.detail;
    return out;
  }
  const auto result = decode_evidence(outcome.result).value_or(Evidence());
  const auto* error = result.string("error");
  out.error = error != nullptr ? *error : std::string();
  if (const auto* ms = result.find("ms"); ms != nullptr && ms->number()) {
    out.ms = *ms->number();
  }
  const auto* ltoir_hex = result.string("ltoir_hex");
  if (const auto ltoir = hex_decode(ltoir_hex != nullptr ? *ltoir_hex : std::string())) {
    out.ltoir = *ltoir;
  } else if (out.error.empty()) {
    out.error = "the LTO-IR compile process sent malformed LTO-IR";
  }
  return out;
}

// Links LTO-IR into a cubin; fills `build` (image or error) and returns the milliseconds it took.
double link(const JitLink& linker, const std::string& ltoir, int arch, Build& build) {
  const auto started = Clock::now();
  const std::string arch_option = "-arch=sm_" + std::to_string(arch);
  const std::vector<const char*> options{arch_option.c_str(), "-lto"};
  nvjitlink::Handle handle = nullptr;
  if (const auto created = linker.create(&handle, static_cast<std::uint32_t>(options.size()), options.data());
      created != nvjitlink::k_success) {
    build.error = "nvJitLinkCreate: " + std::string(nvjitlink::result_name(created)) + " (" +
                  std::to_string(created) + ")";
    return 0;
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
    build.error = std::string(call) + ": " + std::string(nvjitlink::result_name(code)) + " (" +
                  std::to_string(code) + ")" + (log.empty() ? "" : ": " + log);
  };
  std::string cubin;
  if (const auto added =
          linker.add_data(handle, nvjitlink::k_input_ltoir, ltoir.data(), ltoir.size(), "cudadiag_jit.ltoir");
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
  if (build.error.empty()) {
    build.image = std::move(cubin);
  }
  return std::chrono::duration<double, std::milli>(Clock::now() - started).count();
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
    const Stream stream(gpu);
    const DeviceBuffer in(gpu, input.size() * sizeof(int));
    const DeviceBuffer out(gpu, k_blocks * sizeof(int));
    stream.upload(in.get(), input.data(), input.size() * sizeof(int));
    auto in_ptr = in.get();
    auto out_ptr = out.get();
    gpu.launch(function, k_blocks, k_block_threads, stream.get(), {&in_ptr, &out_ptr});
    std::vector<int> sums(k_blocks);
    stream.download(sums.data(), out.get(), sums.size() * sizeof(int));
    for (unsigned block = 0; block < k_blocks; ++block) {
      int expected = 0;
      for (unsigned t = 0; t < k_block_threads; ++t) {
        expected += input_value(block * k_block_threads + t);
      }
      if (sums[block] != expected) {
        return "block " + std::to_string(block) + " summed to " + std::to_string(sums[block]) +
               ", expected " + std::to_string(expected);
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

Evidence run_jit_lto_compile(const std::string& nvrtc_path, const std::string& arch_text,
                             const std::string& cccl_include, const std::string& builtins_preload) {
  const Nvrtc nvrtc(nvrtc_path, builtins_preload);
  if (!nvrtc.usable()) {
    return {{"error", nvrtc.handle.loaded() ? "NVRTC lacks " + nvrtc.missing.names().front()
                                            : "cannot load NVRTC: " + nvrtc.handle.error()}};
  }
  const auto compiled = compile(nvrtc, cccl_include, "-arch=sm_" + arch_text, true);
  return {{"error", compiled.error}, {"ms", compiled.ms}, {"ltoir_hex", hex_encode(compiled.ltoir)}};
}

struct JitPreparation {
  std::string skip;          // the test cannot run at all (no NVRTC, no CCCL)
  std::string fail;          // NVRTC unusable
  std::vector<Build> builds; // ptx, cubin, lto (each built, failed or skipped)
  int arch = 0;
  bool arch_native = false; // NVRTC targets the device's own architecture
  std::string nvrtc_version;
  std::vector<Metric> metrics;
};

std::shared_ptr<const JitPreparation> prepare_jit(const WorkerConfig& config,
                                                  std::optional<int> device_arch) {
  auto prepared = std::make_shared<JitPreparation>();
  if (config.nvrtc.empty()) {
    prepared->skip = "no NVRTC was found";
    return prepared;
  }
  if (config.cccl_include.empty()) {
    prepared->skip = "no CCCL headers were found";
    return prepared;
  }
  const Nvrtc nvrtc(config.nvrtc, config.nvrtc_builtins);
  if (!nvrtc.usable()) {
    prepared->fail = nvrtc.handle.loaded() ? "NVRTC lacks " + nvrtc.missing.names().front()
                                           : "cannot load NVRTC: " + nvrtc.handle.error();
    return prepared;
  }
  int major = 0;
  int minor = 0;
  static_cast<void>(nvrtc.version(&major, &minor));
  prepared->nvrtc_version = std::to_string(major) + "." + std::to_string(minor);
  const auto archs = nvrtc.supported_archs();
  int arch = device_arch.value_or(90);
  prepared->arch_native = std::find(archs.begin(), archs.end(), arch) != archs.end();
  if (!prepared->arch_native) {
    // A device newer than this NVRTC (or no device and no sm_90): the newest arch NVRTC knows that
    // the device can run. PTX is forward compatible; a cubin is not, so then only PTX is built.
    int best = 0;
    for (const int candidate : archs) {
      if (candidate <= arch && candidate > best) {
        best = candidate;
      }
    }
    arch = best > 0 ? best : (archs.empty() ? arch : archs.back());
  }
  prepared->arch = arch;
  const bool cubins = prepared->arch_native || !device_arch;
  // Two compiles: sm_XX (PTX and a cubin from one compile) and sm_XX -dlto (LTO-IR). NVRTC runs one
  // compile at a time per process, so the LTO-IR one runs in a worker process of its own.
  std::future<Compilation> lto_compile;
  if (cubins) {
    lto_compile = std::async(std::launch::async,
                             [&config, &nvrtc, arch] { return compile_lto_elsewhere(config, nvrtc, arch); });
  }
  const auto main = compile(nvrtc, config.cccl_include,
                            (cubins ? "-arch=sm_" : "-arch=compute_") + std::to_string(arch), false);
  prepared->metrics.push_back({"nvrtc_compile_ms", main.ms, "ms"});

  Build ptx;
  Build cubin;
  Build lto;
  cubin.route = Route::cubin;
  lto.route = Route::lto;
  ptx.error = main.error.empty() && main.ptx.empty() ? "NVRTC produced no PTX" : main.error;
  ptx.image = main.ptx;
  ptx.ptx_version = ptx_version_of(main.ptx);
  if (!cubins) {
    cubin.skip = lto.skip = "NVRTC " + prepared->nvrtc_version + " cannot target this device's sm_" +
                            std::to_string(*device_arch);
  } else {
    cubin.error = main.error.empty() && main.cubin.empty() ? "NVRTC produced no cubin" : main.error;
    cubin.image = main.cubin;
    const auto lto_output = lto_compile.get();
    prepared->metrics.push_back({"nvrtc_lto_compile_ms", lto_output.ms, "ms"});
    if (!lto_output.error.empty() || lto_output.ltoir.empty()) {
      lto.error = lto_output.error.empty() ? "NVRTC produced no LTO-IR" : lto_output.error;
    } else if (config.nvjitlink.empty()) {
      lto.skip = "no nvJitLink was found";
    } else if (const JitLink linker(config.nvjitlink); !linker.usable()) {
      lto.error = linker.handle.loaded() ? "nvJitLink lacks " + linker.missing.names().front()
                                         : "cannot load nvJitLink: " + linker.handle.error();
    } else {
      prepared->metrics.push_back({"nvjitlink_ms", link(linker, lto_output.ltoir, arch, lto), "ms"});
    }
  }
  prepared->builds = {std::move(ptx), std::move(cubin), std::move(lto)};
  return prepared;
}

TestResult run_jit(const TestContext& context) {
  std::optional<int> device_arch;
  if (context.device) {
    device_arch = context.device->cc_major * 10 + context.device->cc_minor;
  }
  const auto prepared = context.jit_preparation.valid() ? context.jit_preparation.get()
                                                        : prepare_jit(context.config, device_arch);

  if (!prepared->skip.empty()) {
    return skipped(context, prepared->skip);
  }
  auto result = new_result(context);
  if (!prepared->fail.empty()) {
    result.status = TestStatus::fail;
    result.reason = prepared->fail;
    return result;
  }
  result.metrics = prepared->metrics;
  result.details["nvrtc_version"] = prepared->nvrtc_version;
  result.details["arch"] = prepared->arch;
  result.details["cccl_include"] = context.config.cccl_include;

  const bool gpu_ready = context.gpu != nullptr && context.device.has_value();
  Evidence routes;
  std::vector<std::string> failures;
  int runs = 0;
  for (const auto& build : prepared->builds) {
    const std::string name = route_name(build.route);
    Evidence entry;
    if (!build.ptx_version.empty()) {
      entry["ptx_version"] = build.ptx_version;
    }
    if (!build.error.empty()) {
      entry["status"] = "fail";
      entry["error"] = build.error;
      failures.push_back(name + ": " + build.error);
    } else if (!build.skip.empty()) {
      entry["status"] = "skip";
      entry["reason"] = build.skip;
    } else if (!gpu_ready) {
      entry["status"] = "built";
      entry["reason"] = "run skipped: " + context.no_gpu_reason;
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
    routes[name] = entry;
  }
  result.details["routes"] = routes;
  if (!failures.empty()) {
    result.status = TestStatus::fail;
    result.reason = failures.front();
  } else if (runs == 0) {
    result.reason = "compile and link verified; run skipped: " + context.no_gpu_reason;
    if (context.device_broken) {
      result.status = TestStatus::fail;
    }
  }
  return result;
}

} // namespace cudadiag::selftest
