// probe_nvrtc, probe_nvjitlink and probe_cudart: load one file and ask the library for its own
// version through its API; NVRTC also compiles a trivial kernel (no GPU needed) to prove that its
// builtins library loads, and nvJitLink creates and destroys a linker.

#include "core/filesystem.hpp"
#include "cuda_api/cudart.hpp"
#include "cuda_api/library.hpp"
#include "cuda_api/nvjitlink.hpp"
#include "cuda_api/nvrtc.hpp"
#include "verify/probe_support.hpp"
#include "verify/probes.hpp"
#include "worker/child.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::verify {

namespace {

using worker::report_phase;
namespace nvrtc = cuda_api::nvrtc;
namespace nvjitlink = cuda_api::nvjitlink;
namespace cudart = cuda_api::cudart;
using cuda_api::DlHandle;
using cuda_api::MissingSymbols;
using cuda_api::SymbolResolver;

constexpr std::size_t k_max_log_chars = 2000; // compile logs are cut to this many characters

std::string version_text(long long major, long long minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

// dlopens `path`; on failure records dlopen_error and returns false.
bool open_library(const std::string& path, DlHandle& handle, LoadFacts& facts) {
  report_phase("dlopen");
  handle = DlHandle(path);
  if (!handle.loaded()) {
    facts.dlopen_error = library_text(handle.error().c_str());
    return false;
  }
  facts.loaded = true;
  return true;
}

// --- NVRTC ---

struct NvrtcApi {
  nvrtc::GetErrorStringFn get_error_string = nullptr;
  nvrtc::VersionFn version = nullptr;
  nvrtc::GetNumSupportedArchsFn get_num_supported_archs = nullptr;
  nvrtc::GetSupportedArchsFn get_supported_archs = nullptr;
  nvrtc::CreateProgramFn create_program = nullptr;
  nvrtc::CompileProgramFn compile_program = nullptr;
  nvrtc::GetProgramLogSizeFn get_program_log_size = nullptr;
  nvrtc::GetProgramLogFn get_program_log = nullptr;
  nvrtc::DestroyProgramFn destroy_program = nullptr;
};

NvrtcApi resolve_nvrtc(const DlHandle& handle, MissingSymbols& missing) {
  const SymbolResolver sym(handle, missing);
  NvrtcApi api;
  api.get_error_string = sym.require<nvrtc::GetErrorStringFn>("nvrtcGetErrorString");
  api.version = sym.require<nvrtc::VersionFn>("nvrtcVersion");
  api.get_num_supported_archs = sym.require<nvrtc::GetNumSupportedArchsFn>("nvrtcGetNumSupportedArchs");
  api.get_supported_archs = sym.require<nvrtc::GetSupportedArchsFn>("nvrtcGetSupportedArchs");
  api.create_program = sym.require<nvrtc::CreateProgramFn>("nvrtcCreateProgram");
  api.compile_program = sym.require<nvrtc::CompileProgramFn>("nvrtcCompileProgram");
  api.get_program_log_size = sym.require<nvrtc::GetProgramLogSizeFn>("nvrtcGetProgramLogSize");
  api.get_program_log = sym.require<nvrtc::GetProgramLogFn>("nvrtcGetProgramLog");
  api.destroy_program = sym.require<nvrtc::DestroyProgramFn>("nvrtcDestroyProgram");
  return api;
}

std::optional<std::string> nvrtc_result_name(const NvrtcApi& api, nvrtc::Result code) {
  if (api.get_error_string == nullptr) {
    return std::nullopt;
  }
  report_phase("nvrtcGetErrorString");
  const char* text = api.get_error_string(code);
  return text != nullptr ? std::optional(library_text(text)) : std::nullopt;
}

// Compiles `extern "C" __global__ void k(){}` with no options: NVRTC loads its builtins library
// (by name, through the ordinary search) during the compile, so this fails with
// NVRTC_ERROR_BUILTIN_OPERATION_FAILURE when the builtins cannot be found. Nullopt when an entry
// point is missing.
std::optional<NvrtcCompileCheck> nvrtc_compile_check(const NvrtcApi& api) {
  if (api.create_program == nullptr || api.compile_program == nullptr || api.destroy_program == nullptr) {
    return std::nullopt;
  }
  static constexpr const char* k_source = "extern \"C\" __global__ void k() {}\n";
  nvrtc::Program program = nullptr;
  report_phase("nvrtcCreateProgram");
  const nvrtc::Result created =
      api.create_program(&program, k_source, "cudadiag_check.cu", 0, nullptr, nullptr);
  if (created != nvrtc::k_success) {
    return NvrtcCompileCheck{.ok = false,
                             .step = "nvrtcCreateProgram",
                             .code = created,
                             .name = nvrtc_result_name(api, created),
                             .log = ""};
  }
  report_phase("nvrtcCompileProgram");
  const nvrtc::Result compiled = api.compile_program(program, 0, nullptr);
  std::string log;
  std::size_t log_size = 0;
  if (api.get_program_log_size != nullptr && api.get_program_log != nullptr) {
    report_phase("nvrtcGetProgramLogSize");
    if (api.get_program_log_size(program, &log_size) == nvrtc::k_success && log_size > 0 &&
        log_size < (std::size_t{1} << 24)) {
      std::vector<char> buffer(log_size + 1, '\0');
      report_phase("nvrtcGetProgramLog");
      if (api.get_program_log(program, buffer.data()) == nvrtc::k_success) {
        log = library_text(buffer.data(), log_size);
      }
    }
  }
  report_phase("nvrtcDestroyProgram");
  api.destroy_program(&program);
  // Trim trailing newlines/NULs; cut long logs.
  while (!log.empty() && (log.back() == '\n' || log.back() == ' ')) {
    log.pop_back();
  }
  if (log.size() > k_max_log_chars) {
    log.resize(k_max_log_chars);
    log += "...";
  }
  return NvrtcCompileCheck{.ok = compiled == nvrtc::k_success,
                           .step = "nvrtcCompileProgram",
                           .code = compiled,
                           .name = nvrtc_result_name(api, compiled),
                           .log = log};
}

// The builtins library NVRTC has loaded, if any: its SONAME is `expected`, so a no-load dlopen by
// that name finds the copy NVRTC's own search picked. Empty when none is loaded.
std::string loaded_builtins(const std::string& expected) {
  report_phase("dlopen builtins (RTLD_NOLOAD)");
  const DlHandle handle(expected, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  return handle.loaded() ? handle.mapped_path() : std::string();
}

// {"expected", "path", "loadable", "error"} for libnvrtc-builtins.so.MAJOR.MINOR beside the real
// file of `nvrtc_path`, plus "used": the file the compile check made NVRTC load (or null).
NvrtcBuiltins nvrtc_builtins(const std::string& nvrtc_path, const std::string& expected,
                             const std::string& used) {
  const auto real = fs::real_path(nvrtc_path);
  const std::string dir = fs::parent(real ? *real : nvrtc_path);
  const std::string candidate = fs::join(dir, expected);
  NvrtcBuiltins builtins;
  builtins.expected = expected;
  if (!used.empty()) {
    builtins.used = used;
  }
  if (!fs::exists(candidate)) {
    builtins.error = "not found next to libnvrtc";
    return builtins;
  }
  builtins.path = candidate;
  report_phase("dlopen " + expected);
  const DlHandle handle(candidate);
  builtins.loadable = handle.loaded();
  if (!handle.loaded()) {
    builtins.error = library_text(handle.error().c_str());
  }
  return builtins;
}

void nvrtc_probe(const std::string& path, NvrtcFacts& result) {
  DlHandle handle;
  if (!open_library(path, handle, result)) {
    return;
  }
  MissingSymbols missing;
  const NvrtcApi api = resolve_nvrtc(handle, missing);
  result.missing_symbols = missing.sorted();

  int major = 0;
  int minor = 0;
  bool have_version = false;
  if (api.version != nullptr) {
    report_phase("nvrtcVersion");
    if (const nvrtc::Result code = api.version(&major, &minor); code == nvrtc::k_success) {
      result.version = version_text(major, minor);
      have_version = true;
    } else {
      result.version_error = code;
    }
  }
  if (api.get_num_supported_archs != nullptr && api.get_supported_archs != nullptr) {
    int count = 0;
    report_phase("nvrtcGetNumSupportedArchs");
    constexpr int k_max_archs = 1024;
    if (api.get_num_supported_archs(&count) == nvrtc::k_success && count >= 0 && count <= k_max_archs) {
      std::vector<int> archs(static_cast<std::size_t>(count), 0);
      report_phase("nvrtcGetSupportedArchs");
      if (count == 0 || api.get_supported_archs(archs.data()) == nvrtc::k_success) {
        result.supported_archs = archs;
      }
    }
  }

  // The compile runs first: it makes NVRTC search for its builtins by name, and a builtins file
  // this probe loaded by path beforehand would answer that search in its place (same SONAME).
  result.compile_check = nvrtc_compile_check(api);
  if (have_version) {
    const std::string expected = "libnvrtc-builtins.so." + version_text(major, minor);
    result.builtins = nvrtc_builtins(path, expected, loaded_builtins(expected));
  }
}

// --- nvJitLink ---

void nvjitlink_probe(const std::string& path, NvJitLinkFacts& result) {
  DlHandle handle;
  if (!open_library(path, handle, result)) {
    return;
  }
  MissingSymbols missing;
  int major_seen = 13;

  // Entry-point names are "nvJitLink<EP>" (12.3+) or "__nvJitLink<EP>_<major>_<minor>".
  std::string suffix; // "" for plain names, "_12_4" for versioned ones
  const auto name_of = [&](std::string_view entry_point) {
    return (suffix.empty() ? "nvJitLink" : "__nvJitLink") + std::string(entry_point) + suffix;
  };

  if (const auto version = handle.symbol<nvjitlink::VersionFn>("nvJitLinkVersion"); version != nullptr) {
    unsigned major = 0;
    unsigned minor = 0;
    report_phase("nvJitLinkVersion");
    if (const nvjitlink::Result code = version(&major, &minor); code == nvjitlink::k_success) {
      result.version = version_text(major, minor);
      major_seen = std::max(major_seen, static_cast<int>(std::min(major, 1000U)));
    } else {
      result.version_error = code;
    }
    result.version_api = "nvJitLinkVersion";
  } else {
    // 12.0-12.2: no version query; the newest __nvJitLinkCreate_12_N tells the minor version.
    for (int minor = 9; minor >= 0; --minor) {
      const std::string candidate = "__nvJitLinkCreate_12_" + std::to_string(minor);
      if (handle.symbol<nvjitlink::CreateFn>(candidate.c_str()) != nullptr) {
        result.version = version_text(12, minor);
        result.version_api = "versioned_symbols";
        result.versioned_symbol = candidate;
        suffix = "_12_" + std::to_string(minor);
        break;
      }
    }
    if (suffix.empty()) {
      missing.add("nvJitLinkVersion");
    }
  }

  std::vector<std::string> present_versions;
  for (int major = 12; major <= major_seen; ++major) {
    for (int minor = 0; minor <= 15; ++minor) {
      const std::string candidate =
          "__nvJitLinkCreate_" + std::to_string(major) + "_" + std::to_string(minor);
      if (handle.symbol<nvjitlink::CreateFn>(candidate.c_str()) != nullptr) {
        present_versions.push_back(version_text(major, minor));
      }
    }
  }
  result.entry_point_versions = present_versions;

  const SymbolResolver sym(handle, missing);
  nvjitlink::CreateFn create = nullptr;
  nvjitlink::DestroyFn destroy = nullptr;
  for (const std::string_view entry_point : nvjitlink::k_entry_points) {
    const std::string name = name_of(entry_point);
    if (entry_point == "Create") {
      create = sym.require<nvjitlink::CreateFn>(name.c_str());
    } else if (entry_point == "Destroy") {
      destroy = sym.require<nvjitlink::DestroyFn>(name.c_str());
    } else {
      (void)sym.require<void (*)()>(name.c_str());
    }
  }
  result.missing_symbols = missing.sorted();

  if (create != nullptr && destroy != nullptr) {
    static constexpr std::array<const char*, 1> k_options{"-arch=sm_90"};
    nvjitlink::Handle linker = nullptr;
    report_phase(name_of("Create"));
    const nvjitlink::Result code =
        create(&linker, static_cast<std::uint32_t>(k_options.size()), k_options.data());
    if (code == nvjitlink::k_success && linker != nullptr) {
      report_phase(name_of("Destroy"));
      destroy(&linker);
    }
    const std::string_view name = nvjitlink::result_name(code);
    result.create_check =
        NvJitLinkCreateCheck{.ok = code == nvjitlink::k_success,
                             .options = std::vector<std::string>(k_options.begin(), k_options.end()),
                             .code = code,
                             .name = name.empty() ? std::nullopt : std::optional(std::string(name))};
  }
}

// --- CUDA runtime ---

void cudart_probe(const std::string& path, CudartFacts& result) {
  DlHandle handle;
  if (!open_library(path, handle, result)) {
    return;
  }
  // The runtime may have loaded and initialised libcuda by the time we are done; unloading the
  // pair is riskier than leaving them mapped until the (worker) process exits.
  struct Release {
    DlHandle& handle;
    ~Release() { handle.release(); }
  } release{handle};

  MissingSymbols missing;
  const SymbolResolver sym(handle, missing);
  const auto runtime_get_version = sym.require<cudart::RuntimeGetVersionFn>("cudaRuntimeGetVersion");
  const auto driver_get_version = sym.require<cudart::DriverGetVersionFn>("cudaDriverGetVersion");
  const auto get_error_name = sym.require<cudart::GetErrorNameFn>("cudaGetErrorName");
  result.missing_symbols = missing.sorted();

  const auto error_name = [&](cudart::Error code) -> std::optional<std::string> {
    if (get_error_name == nullptr) {
      return std::nullopt;
    }
    report_phase("cudaGetErrorName");
    const char* text = get_error_name(code);
    return text != nullptr ? std::optional(library_text(text)) : std::nullopt;
  };

  if (runtime_get_version != nullptr) {
    int version = 0;
    report_phase("cudaRuntimeGetVersion");
    if (const cudart::Error code = runtime_get_version(&version); code == cudart::k_success) {
      result.runtime_version = version;
    } else {
      result.runtime_version_error = CudartError{code, error_name(code)};
    }
  }
  if (driver_get_version != nullptr) {
    int version = 0;
    // Loads libcuda.so.1 by name; 0 with success means no driver was found.
    report_phase("cudaDriverGetVersion");
    if (const cudart::Error code = driver_get_version(&version); code == cudart::k_success) {
      result.driver_version = version;
    } else {
      result.driver_version_error = CudartError{code, error_name(code)};
    }
  }
}

} // namespace

NvrtcFacts probe_nvrtc(const std::string& path) {
  return run_probe<NvrtcFacts>(path, [&](NvrtcFacts& result) { nvrtc_probe(path, result); });
}

NvJitLinkFacts probe_nvjitlink(const std::string& path) {
  return run_probe<NvJitLinkFacts>(path, [&](NvJitLinkFacts& result) { nvjitlink_probe(path, result); });
}

CudartFacts probe_cudart(const std::string& path) {
  return run_probe<CudartFacts>(path, [&](CudartFacts& result) { cudart_probe(path, result); });
}

} // namespace cudadiag::verify
