#include "core/environment.hpp"
#include "core/filesystem.hpp"
#include "cuda_api/cudart.hpp"
#include "cuda_api/library.hpp"
#include "cuda_api/nvjitlink.hpp"
#include "cuda_api/nvrtc.hpp"
#include "loader/ld_so_cache.hpp"
#include "skip.hpp"
#include "temp_tree.hpp"
#include "verify/facts_codec.hpp"
#include "verify/probe_support.hpp"
#include "verify/probes.hpp"
#include "versions/version_sources.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#if __has_include(<nvrtc.h>) && __has_include(<nvJitLink.h>) && __has_include(<cuda_runtime_api.h>)
#define CUDADIAG_TEST_HAVE_CUDA_HEADERS 1
#include <cuda_runtime_api.h>
#include <nvJitLink.h>
#include <nvrtc.h>
#endif

using cudadiag::testing::TempTree;
using nlohmann::json;
namespace verify = cudadiag::verify;
namespace cuda_api = cudadiag::cuda_api;
namespace fs = cudadiag::fs;

namespace {

constexpr const char* k_toolkit_lib = "/usr/local/cuda/lib64";
constexpr const char* k_toolkit_dist_info = "/usr/local/cuda/dist-info";
// The site-packages of the "wheels" test venv (CUDA 13 pip wheels) that scripts/make_test_venvs.sh
// builds for ctest's cli.venvs fixture, which the cases named "(test venv" require (when it is absent,
// a path naming what is missing, for their skip message).
std::string wheel_site_packages() {
  const std::string lib = std::string(CUDADIAG_TEST_VENVS) + "/wheels/lib";
  const auto entries = fs::list_directory(lib);
  if (entries) {
    for (const auto& name : *entries) {
      if (name.rfind("python", 0) == 0 && fs::is_directory(lib + "/" + name + "/site-packages")) {
        return lib + "/" + name + "/site-packages";
      }
    }
  }
  return lib + "/python3.X/site-packages";
}
const std::string k_wheel_site_packages = wheel_site_packages();
const std::string k_wheel_lib = k_wheel_site_packages + "/nvidia/cu13/lib";

bool present(const std::string& path) {
  return ::access(path.c_str(), R_OK) == 0;
}

// "13.0" from "13.0.88": the major.minor of a distribution's version in a dist-info folder.
std::string dist_major_minor(const std::string& dir, std::string_view distribution) {
  const std::array<std::string_view, 1> names{distribution};
  const auto found = cudadiag::versions::version_from_dist_info(dir, names);
  if (!found) {
    return {};
  }
  const std::string& version = found->version;
  const auto first = version.find('.');
  const auto second = version.find('.', first == std::string::npos ? first : first + 1);
  return version.substr(0, second);
}

// Hard-links `source` (its real file) into `tree` as `name` when the file system allows, else copies.
std::string place_library(const TempTree& tree, const std::string& source, std::string_view name, bool copy) {
  const auto real = fs::real_path(source);
  REQUIRE(real);
  std::string target = tree.path(name);
  if (!copy && ::link(real->c_str(), target.c_str()) == 0) {
    return target;
  }
  return tree.copy_file(*real, name);
}

void check_skeleton(const json& result, const std::string& path) {
  CHECK(result.at("library") == path);
  CHECK(result.contains("loaded"));
  CHECK(result.contains("dlopen_error"));
  CHECK(result.at("missing_symbols").is_array());
  CHECK_FALSE(result.contains("probe_error"));
}

bool contains_arch(const json& archs, int arch) {
  for (const auto& value : archs) {
    if (value == arch) {
      return true;
    }
  }
  return false;
}

// Whether the loader finds `soname` by that name alone for a library without RUNPATH (the toolkit's
// libnvrtc, whose dlopen of its builtins is such a lookup): in an LD_LIBRARY_PATH directory, through
// ld.so.cache (the toolkit's lib directory in ld.so.conf.d, as NVIDIA's packages and runfile set it),
// or in the default directories.
bool loader_finds_by_name(const std::string& soname) {
  const char* ld_library_path = std::getenv("LD_LIBRARY_PATH");
  auto dirs = cudadiag::split_search_path(ld_library_path != nullptr ? ld_library_path : "");
  dirs.insert(dirs.end(), {"/lib", "/usr/lib"});
  for (const auto& dir : dirs) {
    if (present(fs::join(dir, soname))) {
      return true;
    }
  }
  const auto cache = cudadiag::loader::read_ld_so_cache();
  return cache && cache->resolve(soname) != nullptr;
}

// NVRTC from `path` as probe_nvrtc reports it. `builtins_found_by_name`: whether NVRTC's own dlopen of
// its builtins (by name; through RUNPATH $ORIGIN for a wheel's copy) finds them, so that a compile
// works; where it does not (a toolkit whose lib directory the loader is not told of), the probe
// reports the builtins beside NVRTC, unused, and the compile's NVRTC_ERROR_BUILTIN_OPERATION_FAILURE.
void check_real_nvrtc(const std::string& path, const std::string& expected_version,
                      bool builtins_found_by_name = true) {
  const json result = verify::to_json(verify::probe_nvrtc(path));
  INFO(result.dump(2));
  check_skeleton(result, path);
  REQUIRE(result.at("loaded") == true);
  CHECK(result.at("missing_symbols").empty());
  CHECK(result.at("version") == expected_version);
  REQUIRE(result.at("supported_archs").is_array());
  CHECK_FALSE(result.at("supported_archs").empty());
  CHECK(contains_arch(result.at("supported_archs"), 90));
  const json& builtins = result.at("builtins");
  const std::string expected = "libnvrtc-builtins.so." + expected_version;
  CHECK(builtins.at("expected") == expected);
  const auto real = fs::real_path(path);
  REQUIRE(real);
  CHECK(builtins.at("path") == fs::join(fs::parent(*real), expected));
  CHECK(builtins.at("loadable") == true);
  CHECK(builtins.at("error").is_null());
  const json& compile = result.at("compile_check");
  if (!builtins_found_by_name) {
    CHECK(builtins.at("used").is_null());
    CHECK(compile.at("ok") == false);
    CHECK(compile.at("step") == "nvrtcCompileProgram");
    CHECK(compile.at("name") == "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE");
    return;
  }
  CHECK(builtins.at("used").is_string());
  CHECK(compile.at("ok") == true);
  CHECK(compile.at("code") == 0);
  CHECK(compile.at("name") == "NVRTC_SUCCESS");
}

} // namespace

// --- the mirrored prototypes ---

namespace {
struct OpaqueA;
struct OpaqueB;
struct Pair {
  int a, b;
};
struct Triple {
  int a, b, c;
};
enum Small : unsigned { small_zero };
} // namespace

// The checker itself: what it must accept and refuse.
static_assert(cuda_api::abi_compatible<int (*)(int*, const char*), int (*)(int*, const char*)>());
static_assert(cuda_api::abi_compatible<int (*)(Small*), Small (*)(unsigned*)>());
static_assert(cuda_api::abi_compatible<int (*)(OpaqueA*), int (*)(OpaqueB*)>());
static_assert(cuda_api::abi_compatible<int (*)(OpaqueA**), int (*)(OpaqueB**)>());
static_assert(!cuda_api::abi_compatible<int (*)(Pair*), int (*)(Triple*)>());
static_assert(!cuda_api::abi_compatible<int (*)(Pair*), int (*)(OpaqueA*)>());
static_assert(!cuda_api::abi_compatible<int (*)(int*), int (*)(long long*)>());
static_assert(!cuda_api::abi_compatible<int (*)(const char* const*), int (*)(const char**)>());
static_assert(!cuda_api::abi_compatible<int (*)(int), int (*)(int, int)>());
static_assert(!cuda_api::abi_compatible<const char* (*)(int), int (*)(int)>());

#ifdef CUDADIAG_TEST_HAVE_CUDA_HEADERS
static_assert(
    cuda_api::abi_compatible<cuda_api::nvrtc::GetErrorStringFn, decltype(&::nvrtcGetErrorString)>());
static_assert(cuda_api::abi_compatible<cuda_api::nvrtc::VersionFn, decltype(&::nvrtcVersion)>());
static_assert(cuda_api::abi_compatible<cuda_api::nvrtc::GetNumSupportedArchsFn,
                                       decltype(&::nvrtcGetNumSupportedArchs)>());
static_assert(
    cuda_api::abi_compatible<cuda_api::nvrtc::GetSupportedArchsFn, decltype(&::nvrtcGetSupportedArchs)>());
static_assert(cuda_api::abi_compatible<cuda_api::nvrtc::CreateProgramFn, decltype(&::nvrtcCreateProgram)>());
static_assert(
    cuda_api::abi_compatible<cuda_api::nvrtc::CompileProgramFn, decltype(&::nvrtcCompileProgram)>());
static_assert(
    cuda_api::abi_compatible<cuda_api::nvrtc::GetProgramLogSizeFn, decltype(&::nvrtcGetProgramLogSize)>());
static_assert(cuda_api::abi_compatible<cuda_api::nvrtc::GetProgramLogFn, decltype(&::nvrtcGetProgramLog)>());
static_assert(
    cuda_api::abi_compatible<cuda_api::nvrtc::DestroyProgramFn, decltype(&::nvrtcDestroyProgram)>());
static_assert(cuda_api::nvrtc::k_success == NVRTC_SUCCESS);
static_assert(cuda_api::nvrtc::k_error_compilation == NVRTC_ERROR_COMPILATION);
static_assert(cuda_api::nvrtc::k_error_builtin_operation_failure == NVRTC_ERROR_BUILTIN_OPERATION_FAILURE);

static_assert(cuda_api::abi_compatible<cuda_api::nvjitlink::VersionFn, decltype(&::nvJitLinkVersion)>());
#if CUDART_VERSION >= 13000
static_assert(cuda_api::abi_compatible<cuda_api::nvjitlink::CreateFn, decltype(&::__nvJitLinkCreate_13_0)>());
static_assert(
    cuda_api::abi_compatible<cuda_api::nvjitlink::DestroyFn, decltype(&::__nvJitLinkDestroy_13_0)>());
#endif
static_assert(cuda_api::nvjitlink::k_success == NVJITLINK_SUCCESS);

static_assert(cuda_api::abi_compatible<cuda_api::cudart::GetErrorNameFn, decltype(&::cudaGetErrorName)>());
static_assert(
    cuda_api::abi_compatible<cuda_api::cudart::RuntimeGetVersionFn, decltype(&::cudaRuntimeGetVersion)>());
static_assert(
    cuda_api::abi_compatible<cuda_api::cudart::DriverGetVersionFn, decltype(&::cudaDriverGetVersion)>());
static_assert(cuda_api::cudart::k_success == cudaSuccess);
#endif

TEST_CASE("library probes: nvJitLink result names follow the header's enumeration") {
#ifdef CUDADIAG_TEST_HAVE_CUDA_HEADERS
#define CUDADIAG_CHECK_NAME(code) CHECK(cuda_api::nvjitlink::result_name(code) == #code)
  CUDADIAG_CHECK_NAME(NVJITLINK_SUCCESS);
  CUDADIAG_CHECK_NAME(NVJITLINK_ERROR_UNRECOGNIZED_OPTION);
  CUDADIAG_CHECK_NAME(NVJITLINK_ERROR_MISSING_ARCH);
  CUDADIAG_CHECK_NAME(NVJITLINK_ERROR_INVALID_INPUT);
  CUDADIAG_CHECK_NAME(NVJITLINK_ERROR_PTX_COMPILE);
  CUDADIAG_CHECK_NAME(NVJITLINK_ERROR_NVVM_COMPILE);
  CUDADIAG_CHECK_NAME(NVJITLINK_ERROR_INTERNAL);
  CUDADIAG_CHECK_NAME(NVJITLINK_ERROR_THREADPOOL);
  CUDADIAG_CHECK_NAME(NVJITLINK_ERROR_UNRECOGNIZED_INPUT);
  CUDADIAG_CHECK_NAME(NVJITLINK_ERROR_FINALIZE);
  CUDADIAG_CHECK_NAME(NVJITLINK_ERROR_NULL_INPUT);
  CUDADIAG_CHECK_NAME(NVJITLINK_ERROR_INCOMPATIBLE_OPTIONS);
  CUDADIAG_CHECK_NAME(NVJITLINK_ERROR_INCORRECT_INPUT_TYPE);
  CUDADIAG_CHECK_NAME(NVJITLINK_ERROR_ARCH_MISMATCH);
  CUDADIAG_CHECK_NAME(NVJITLINK_ERROR_OUTDATED_LIBRARY);
  CUDADIAG_CHECK_NAME(NVJITLINK_ERROR_MISSING_FATBIN);
  CUDADIAG_CHECK_NAME(NVJITLINK_ERROR_UNRECOGNIZED_ARCH);
  CUDADIAG_CHECK_NAME(NVJITLINK_ERROR_UNSUPPORTED_ARCH);
  CUDADIAG_CHECK_NAME(NVJITLINK_ERROR_LTO_NOT_ENABLED);
#undef CUDADIAG_CHECK_NAME
#else
  MESSAGE("CUDA headers not found: the mirrored prototypes are not checked against them");
#endif
  CHECK(cuda_api::nvjitlink::result_name(-1).empty());
  CHECK(cuda_api::nvjitlink::result_name(1000).empty());
}

TEST_CASE("library probes: library text is bounded and printable") {
  const char raw[] = {'a', '\xff', 'b', '\x01', 'c'};
  CHECK(verify::library_text(raw, sizeof raw) == "a?b?c"); // no NUL: stops at the capacity
  const char with_nul[] = {'o', 'k', '\0', 'x'};
  CHECK(verify::library_text(with_nul, sizeof with_nul) == "ok");
  CHECK(verify::library_text(nullptr, 8).empty());
  CHECK(verify::library_text("line one\nline two") == "line one\nline two");
}

// --- the real libraries ---

TEST_CASE("library probes: nvrtc from the toolkit reports its version, archs and working builtins") {
  const std::string path = std::string(k_toolkit_lib) + "/libnvrtc.so.13";
  if (!present(path)) {
    CUDADIAG_SKIP(path << " is absent");
  }
  const std::string expected = dist_major_minor(k_toolkit_dist_info, "nvidia-cuda-nvrtc");
  if (expected.empty()) {
    CUDADIAG_SKIP("no nvidia_cuda_nvrtc dist-info in " << k_toolkit_dist_info << " to compare with");
  }
  // The toolkit's libnvrtc has no RUNPATH: its builtins are found only where the loader is told of
  // the toolkit's lib directory (found on a fresh Debian root with the toolkit mounted and no
  // ld.so.conf.d entry: the compile fails, and the probe says so).
  check_real_nvrtc(path, expected, loader_finds_by_name("libnvrtc-builtins.so." + expected));
}

TEST_CASE("library probes: nvrtc from the pip wheels (test venv) finds the builtins beside it") {
  const std::string path = k_wheel_lib + "/libnvrtc.so.13";
  if (!present(path)) {
    CUDADIAG_SKIP(path << " is absent");
  }
  const std::string expected = dist_major_minor(k_wheel_site_packages, "nvidia-cuda-nvrtc");
  REQUIRE_FALSE(expected.empty());
  check_real_nvrtc(path, expected);
  // The wheel's libnvrtc has RPATH $ORIGIN: the builtins NVRTC used are the ones beside it.
  const json result = verify::to_json(verify::probe_nvrtc(path));
  CHECK(result.at("builtins").at("used") == result.at("builtins").at("path"));
}

TEST_CASE("library probes: nvrtc without its builtins beside it, the toolkit's (no RPATH: NVRTC searches "
          "for the builtins by name)") {
  TempTree tree;
  const std::string source = std::string(k_toolkit_lib) + "/libnvrtc.so.13";
  if (!present(source)) {
    CUDADIAG_SKIP(source << " is absent");
  }
  const std::string path = place_library(tree, source, "libnvrtc.so.13", false);
  const json result = verify::to_json(verify::probe_nvrtc(path));
  INFO(result.dump(2));
  check_skeleton(result, path);
  REQUIRE(result.at("loaded") == true);
  const json& builtins = result.at("builtins");
  CHECK(builtins.at("path").is_null());
  CHECK(builtins.at("loadable") == false);
  CHECK(builtins.at("error") == "not found next to libnvrtc");
  // Whether the compile still works depends on the loader's search (ld.so.cache,
  // LD_LIBRARY_PATH): it works exactly when NVRTC found a builtins library somewhere.
  const json& compile = result.at("compile_check");
  CHECK(compile.at("ok") == builtins.at("used").is_string());
  MESSAGE("toolkit nvrtc without builtins beside it: compile ok=" << compile.at("ok") << ", builtins used="
                                                                  << builtins.at("used"));
}

TEST_CASE("library probes: nvrtc without its builtins beside it, the pip wheel's (test venv, RPATH $ORIGIN: "
          "nothing beside it, and 13.5 builtins are nowhere else)") {
  TempTree tree;
  const std::string source = k_wheel_lib + "/libnvrtc.so.13";
  if (!present(source)) {
    CUDADIAG_SKIP(source << " is absent");
  }
  // A copy, not a hard link: the loader would take a hard link to an already-loaded file for
  // that file itself (same inode), whose $ORIGIN is the wheel's folder.
  const std::string path = place_library(tree, source, "libnvrtc.so.13", true);
  const json result = verify::to_json(verify::probe_nvrtc(path));
  INFO(result.dump(2));
  REQUIRE(result.at("loaded") == true);
  const json& builtins = result.at("builtins");
  CHECK(builtins.at("path").is_null());
  CHECK(builtins.at("loadable") == false);
  const json& compile = result.at("compile_check");
  CHECK(compile.at("ok") == builtins.at("used").is_string());
  if (builtins.at("used").is_null()) {
    CHECK(compile.at("code") == cuda_api::nvrtc::k_error_builtin_operation_failure);
    CHECK(compile.at("name") == "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE");
  }
  MESSAGE("wheel nvrtc without builtins beside it: compile=" << compile.dump());
}

namespace {

// A real libnvJitLink.so.13 answers through nvJitLinkVersion, with the version its dist-info states.
void check_real_nvjitlink(const std::string& path, const std::string& dist_dir) {
  const std::string expected = dist_major_minor(dist_dir, "nvidia-nvjitlink");
  const json result = verify::to_json(verify::probe_nvjitlink(path));
  INFO(result.dump(2));
  check_skeleton(result, path);
  REQUIRE(result.at("loaded") == true);
  if (!expected.empty()) {
    CHECK(result.at("version") == expected);
  }
  CHECK(result.at("version_api") == "nvJitLinkVersion");
  CHECK(result.at("versioned_symbol").is_null());
  CHECK(result.at("missing_symbols").empty());
  // One versioned entry point per header version the library accepts, 13.0 up to its own.
  const json& versions = result.at("entry_point_versions");
  REQUIRE_FALSE(versions.empty());
  CHECK(versions.front() == "13.0");
  CHECK(versions.back() == result.at("version"));
  CHECK(result.at("create_check").at("ok") == true);
}

} // namespace

TEST_CASE("library probes: nvJitLink from the toolkit reports its version through nvJitLinkVersion") {
  const std::string path = std::string(k_toolkit_lib) + "/libnvJitLink.so.13";
  if (!present(path)) {
    CUDADIAG_SKIP(path << " is absent");
  }
  check_real_nvjitlink(path, k_toolkit_dist_info);
}

TEST_CASE("library probes: nvJitLink from the pip wheels (test venv) reports its version through "
          "nvJitLinkVersion") {
  const std::string path = k_wheel_lib + "/libnvJitLink.so.13";
  if (!present(path)) {
    CUDADIAG_SKIP(path << " is absent");
  }
  check_real_nvjitlink(path, k_wheel_site_packages);
}

TEST_CASE("library probes: cudart reports its runtime version") {
  const std::string path = std::string(k_toolkit_lib) + "/libcudart.so.13";
  if (!present(path)) {
    CUDADIAG_SKIP(path << " is absent");
  }
  const json result = verify::to_json(verify::probe_cudart(path));
  INFO(result.dump(2));
  check_skeleton(result, path);
  REQUIRE(result.at("loaded") == true);
  CHECK(result.at("missing_symbols").empty());
  const std::string expected = dist_major_minor(k_toolkit_dist_info, "nvidia-cuda-runtime");
  if (!expected.empty()) {
    const auto dot = expected.find('.');
    const int major = std::stoi(expected.substr(0, dot));
    const int minor = std::stoi(expected.substr(dot + 1));
    CHECK(result.at("runtime_version") == major * 1000 + minor * 10);
  } else {
    CHECK(result.at("runtime_version").is_number_integer());
  }
  // Without a GPU driver: 0 ("no driver") or an error code; with one, the driver's version.
  CHECK((result.at("driver_version").is_number_integer() ||
         result.at("driver_version_error").is_number_integer()));
}

// --- what goes wrong ---

TEST_CASE("library probes: a path that cannot be loaded is a result, not an exception") {
  TempTree tree;
  const std::string nowhere = tree.path("libnvrtc.so.13");
  const std::string not_elf = tree.write("libnvJitLink.so.13", "not an ELF file");
  for (const std::string& path : {nowhere, not_elf}) {
    for (const json& result :
         {verify::to_json(verify::probe_nvrtc(path)), verify::to_json(verify::probe_nvjitlink(path)),
          verify::to_json(verify::probe_cudart(path))}) {
      INFO(result.dump(2));
      check_skeleton(result, path);
      CHECK(result.at("loaded") == false);
      CHECK(result.at("dlopen_error").is_string());
      CHECK_FALSE(result.at("dlopen_error").get<std::string>().empty());
    }
  }
  CHECK(verify::to_json(verify::probe_nvrtc(nowhere)).at("version").is_null());
  CHECK(verify::to_json(verify::probe_nvjitlink(nowhere)).at("version").is_null());
  CHECK(verify::to_json(verify::probe_cudart(nowhere)).at("runtime_version").is_null());
}

TEST_CASE("library probes: a library without the entry points records them as missing") {
  // The fake NVML exports none of the NVRTC, nvJitLink or runtime names.
  const std::string path = CUDADIAG_FAKE_NVML_LIB;
  const json nvrtc = verify::to_json(verify::probe_nvrtc(path));
  INFO(nvrtc.dump(2));
  CHECK(nvrtc.at("loaded") == true);
  CHECK(nvrtc.at("version").is_null());
  CHECK(nvrtc.at("builtins").is_null());
  CHECK(nvrtc.at("compile_check").is_null());
  CHECK(nvrtc.at("missing_symbols").size() == 9);

  const json jitlink = verify::to_json(verify::probe_nvjitlink(path));
  INFO(jitlink.dump(2));
  CHECK(jitlink.at("version").is_null());
  CHECK(jitlink.at("version_api").is_null());
  CHECK(jitlink.at("entry_point_versions").empty());
  CHECK(jitlink.at("create_check").is_null());
  const json& missing = jitlink.at("missing_symbols");
  CHECK(missing.size() == cuda_api::nvjitlink::k_entry_points.size() + 1);
  CHECK(std::find(missing.begin(), missing.end(), "nvJitLinkVersion") != missing.end());
  CHECK(std::find(missing.begin(), missing.end(), "nvJitLinkCreate") != missing.end());

  const json cudart = verify::to_json(verify::probe_cudart(path));
  INFO(cudart.dump(2));
  CHECK(cudart.at("runtime_version").is_null());
  CHECK(cudart.at("driver_version").is_null());
  CHECK(cudart.at("missing_symbols") ==
        json{"cudaDriverGetVersion", "cudaGetErrorName", "cudaRuntimeGetVersion"});
}

TEST_CASE("library probes: an nvJitLink before 12.3 is versioned by its entry points") {
  const std::string path = CUDADIAG_FAKE_NVJITLINK12_LIB;
  const json result = verify::to_json(verify::probe_nvjitlink(path));
  INFO(result.dump(2));
  check_skeleton(result, path);
  REQUIRE(result.at("loaded") == true);
  CHECK(result.at("version") == "12.2");
  CHECK(result.at("version_api") == "versioned_symbols");
  CHECK(result.at("versioned_symbol") == "__nvJitLinkCreate_12_2");
  CHECK(result.at("entry_point_versions") == json{"12.0", "12.1", "12.2"});
  CHECK(result.at("missing_symbols") ==
        json{"__nvJitLinkAddFile_12_2", "__nvJitLinkGetLinkedPtxSize_12_2", "__nvJitLinkGetLinkedPtx_12_2"});
  CHECK(result.at("create_check") ==
        json{{"ok", true}, {"options", {"-arch=sm_90"}}, {"code", 0}, {"name", "NVJITLINK_SUCCESS"}});
}
