// The driver probe: cuda_api/driver.hpp against the real cuda.h (when a toolkit is present), the
// error table, and probe_driver run through the worker against the fake drivers of tests/fixtures.

#include "core/environment.hpp"
#include "core/filesystem.hpp"
#include "cuda_api/cuda_errors.hpp"
#include "cuda_api/driver.hpp"
#include "fake_driver.hpp"
#include "skip.hpp"
#include "worker/process.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <regex>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#if __has_include(<cuda.h>)
#include <cuda.h>
#if CUDA_VERSION >= 12000 && __has_include(<cudaTypedefs.h>)
#include <cudaTypedefs.h>
#define CUDADIAG_TEST_HAVE_CUDA_H 1
#endif
#endif

namespace cu = cudadiag::cuda_api::cu;
using cudadiag::worker::StepOutcome;

#if defined(CUDADIAG_TEST_HAVE_CUDA_H)
namespace {

// Rewrites a type built from cu:: types into the same type built from cuda.h's, so that a whole
// function-pointer type (return, arity, every parameter) can be compared with the real prototype.
template <class T> struct Real { using type = T; };
template <class T> using real_t = typename Real<T>::type;
template <> struct Real<cu::CUresult> { using type = ::CUresult; };
template <> struct Real<cu::CUdevice_attribute> { using type = ::CUdevice_attribute; };
template <> struct Real<cu::CUdriverProcAddressQueryResult> {
  using type = ::CUdriverProcAddressQueryResult;
};
template <> struct Real<cu::CUuuid> { using type = ::CUuuid; };
template <> struct Real<cu::CUctx_st> { using type = ::CUctx_st; };
template <> struct Real<cu::CUmod_st> { using type = ::CUmod_st; };
template <class T> struct Real<const T> { using type = const real_t<T>; };
template <class T> struct Real<T*> { using type = real_t<T>*; };
template <class R, class... A> struct Real<R (*)(A...)> { using type = real_t<R> (*)(real_t<A>...); };

template <class Ours, class Theirs> constexpr bool same_abi = std::is_same_v<real_t<Ours>, Theirs>;

// Prototypes: the versioned symbols the plain names map to (cuda.h #defines them).
static_assert(same_abi<cu::PfnGetProcAddress, decltype(&::cuGetProcAddress_v2)>);
static_assert(same_abi<cu::PfnGetProcAddressLegacy, PFN_cuGetProcAddress_v11030>);
static_assert(same_abi<cu::PfnInit, decltype(&::cuInit)>);
static_assert(same_abi<cu::PfnDriverGetVersion, decltype(&::cuDriverGetVersion)>);
static_assert(same_abi<cu::PfnDeviceGetCount, decltype(&::cuDeviceGetCount)>);
static_assert(same_abi<cu::PfnDeviceGet, decltype(&::cuDeviceGet)>);
static_assert(same_abi<cu::PfnDeviceGetName, decltype(&::cuDeviceGetName)>);
static_assert(same_abi<cu::PfnDeviceGetUuid, decltype(&::cuDeviceGetUuid_v2)>);
static_assert(same_abi<cu::PfnDeviceGetUuid, PFN_cuDeviceGetUuid_v11040>);
static_assert(same_abi<cu::PfnDeviceGetAttribute, decltype(&::cuDeviceGetAttribute)>);
static_assert(same_abi<cu::PfnDeviceTotalMem, decltype(&::cuDeviceTotalMem_v2)>);
static_assert(same_abi<cu::PfnDeviceGetPCIBusId, decltype(&::cuDeviceGetPCIBusId)>);
static_assert(same_abi<cu::PfnGetErrorName, decltype(&::cuGetErrorName)>);
static_assert(same_abi<cu::PfnGetErrorString, decltype(&::cuGetErrorString)>);

// Types and layouts.
static_assert(std::is_same_v<cu::CUdevice, ::CUdevice>);
static_assert(std::is_same_v<cu::cuuint64_t, ::cuuint64_t>);
static_assert(same_abi<cu::CUcontext, ::CUcontext> && same_abi<cu::CUmodule, ::CUmodule>);
static_assert(sizeof(cu::CUuuid) == sizeof(::CUuuid) && alignof(cu::CUuuid) == alignof(::CUuuid));
static_assert(sizeof(cu::CUresult) == sizeof(::CUresult));
static_assert(sizeof(cu::CUdevice_attribute) == sizeof(::CUdevice_attribute));
static_assert(sizeof(cu::CUdriverProcAddressQueryResult) == sizeof(::CUdriverProcAddressQueryResult));

// Every enumerator we declare has the header's value.
#define CUDADIAG_SAME_VALUE(name)                                                                            \
  static_assert(static_cast<long long>(cu::name) == static_cast<long long>(::name), #name)
CUDADIAG_SAME_VALUE(CUDA_SUCCESS);
CUDADIAG_SAME_VALUE(CUDA_ERROR_INVALID_VALUE);
CUDADIAG_SAME_VALUE(CUDA_ERROR_OUT_OF_MEMORY);
CUDADIAG_SAME_VALUE(CUDA_ERROR_NOT_INITIALIZED);
CUDADIAG_SAME_VALUE(CUDA_ERROR_DEINITIALIZED);
CUDADIAG_SAME_VALUE(CUDA_ERROR_STUB_LIBRARY);
CUDADIAG_SAME_VALUE(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER);
CUDADIAG_SAME_VALUE(CUDA_ERROR_DEVICE_UNAVAILABLE);
CUDADIAG_SAME_VALUE(CUDA_ERROR_NO_DEVICE);
CUDADIAG_SAME_VALUE(CUDA_ERROR_INVALID_DEVICE);
CUDADIAG_SAME_VALUE(CUDA_ERROR_DEVICE_NOT_LICENSED);
CUDADIAG_SAME_VALUE(CUDA_ERROR_INVALID_IMAGE);
CUDADIAG_SAME_VALUE(CUDA_ERROR_INVALID_CONTEXT);
CUDADIAG_SAME_VALUE(CUDA_ERROR_NO_BINARY_FOR_GPU);
CUDADIAG_SAME_VALUE(CUDA_ERROR_ECC_UNCORRECTABLE);
CUDADIAG_SAME_VALUE(CUDA_ERROR_INVALID_PTX);
CUDADIAG_SAME_VALUE(CUDA_ERROR_JIT_COMPILER_NOT_FOUND);
CUDADIAG_SAME_VALUE(CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
CUDADIAG_SAME_VALUE(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND);
CUDADIAG_SAME_VALUE(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED);
CUDADIAG_SAME_VALUE(CUDA_ERROR_OPERATING_SYSTEM);
CUDADIAG_SAME_VALUE(CUDA_ERROR_INVALID_HANDLE);
CUDADIAG_SAME_VALUE(CUDA_ERROR_NOT_FOUND);
CUDADIAG_SAME_VALUE(CUDA_ERROR_NOT_PERMITTED);
CUDADIAG_SAME_VALUE(CUDA_ERROR_NOT_SUPPORTED);
CUDADIAG_SAME_VALUE(CUDA_ERROR_SYSTEM_NOT_READY);
CUDADIAG_SAME_VALUE(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH);
CUDADIAG_SAME_VALUE(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE);
CUDADIAG_SAME_VALUE(CUDA_ERROR_MPS_CONNECTION_FAILED);
CUDADIAG_SAME_VALUE(CUDA_ERROR_TIMEOUT);
CUDADIAG_SAME_VALUE(CUDA_ERROR_UNKNOWN);
CUDADIAG_SAME_VALUE(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
CUDADIAG_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
CUDADIAG_SAME_VALUE(CU_DEVICE_ATTRIBUTE_INTEGRATED);
CUDADIAG_SAME_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_MODE);
CUDADIAG_SAME_VALUE(CU_DEVICE_ATTRIBUTE_ECC_ENABLED);
CUDADIAG_SAME_VALUE(CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
CUDADIAG_SAME_VALUE(CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID);
CUDADIAG_SAME_VALUE(CU_DEVICE_ATTRIBUTE_TCC_DRIVER);
CUDADIAG_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
CUDADIAG_SAME_VALUE(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
CUDADIAG_SAME_VALUE(CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
CUDADIAG_SAME_VALUE(CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING);
CUDADIAG_SAME_VALUE(CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID);
CUDADIAG_SAME_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
CUDADIAG_SAME_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
CUDADIAG_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY);
CUDADIAG_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MULTI_GPU_BOARD);
CUDADIAG_SAME_VALUE(CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS);
CUDADIAG_SAME_VALUE(CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS);
CUDADIAG_SAME_VALUE(CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED);
CUDADIAG_SAME_VALUE(CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH);
CUDADIAG_SAME_VALUE(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED);
CUDADIAG_SAME_VALUE(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED);
CUDADIAG_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MEMORY_POOLS_SUPPORTED);
CUDADIAG_SAME_VALUE(CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_SUPPORTED);
CUDADIAG_SAME_VALUE(CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES);
CUDADIAG_SAME_VALUE(CU_DEVICE_ATTRIBUTE_IPC_EVENT_SUPPORTED);
CUDADIAG_SAME_VALUE(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED);
CUDADIAG_SAME_VALUE(CU_GET_PROC_ADDRESS_DEFAULT);
CUDADIAG_SAME_VALUE(CU_GET_PROC_ADDRESS_LEGACY_STREAM);
CUDADIAG_SAME_VALUE(CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM);
CUDADIAG_SAME_VALUE(CU_GET_PROC_ADDRESS_SUCCESS);
CUDADIAG_SAME_VALUE(CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
CUDADIAG_SAME_VALUE(CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
#undef CUDADIAG_SAME_VALUE

} // namespace

TEST_CASE("driver probe: the error table's names are cuda.h's") {
#define CUDADIAG_HEADER_ERROR(name) std::pair<int, std::string>(static_cast<int>(::name), #name)
  const std::vector<std::pair<int, std::string>> header = {
      CUDADIAG_HEADER_ERROR(CUDA_SUCCESS),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_INVALID_VALUE),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_OUT_OF_MEMORY),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_NOT_INITIALIZED),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_DEINITIALIZED),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_STUB_LIBRARY),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_DEVICE_UNAVAILABLE),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_NO_DEVICE),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_INVALID_DEVICE),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_DEVICE_NOT_LICENSED),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_INVALID_IMAGE),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_INVALID_CONTEXT),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_NO_BINARY_FOR_GPU),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_ECC_UNCORRECTABLE),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_INVALID_PTX),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_JIT_COMPILER_NOT_FOUND),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_UNSUPPORTED_PTX_VERSION),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_JIT_COMPILATION_DISABLED),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_INVALID_SOURCE),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_FILE_NOT_FOUND),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_OPERATING_SYSTEM),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_INVALID_HANDLE),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_ILLEGAL_STATE),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_NOT_FOUND),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_NOT_READY),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_ILLEGAL_ADDRESS),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_LAUNCH_TIMEOUT),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_LAUNCH_FAILED),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_NOT_PERMITTED),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_NOT_SUPPORTED),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_SYSTEM_NOT_READY),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_SYSTEM_DRIVER_MISMATCH),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_MPS_CONNECTION_FAILED),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_MPS_RPC_FAILURE),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_MPS_SERVER_NOT_READY),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_MPS_MAX_CLIENTS_REACHED),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_TIMEOUT),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_INVALID_RESOURCE_TYPE),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION),
      CUDADIAG_HEADER_ERROR(CUDA_ERROR_UNKNOWN),
  };
#undef CUDADIAG_HEADER_ERROR
  for (const auto& [code, name] : header) {
    CAPTURE(name);
    const auto* entry = cudadiag::cuda_api::find_cuda_error(code);
    REQUIRE(entry != nullptr);
    CHECK(entry->name == name);
  }
  // Every row of the table is in the list above (35 is the runtime's, not the driver's).
  for (const auto& entry : cudadiag::cuda_api::cuda_error_table()) {
    CAPTURE(entry.name);
    const bool listed =
        std::any_of(header.begin(), header.end(), [&](const auto& row) { return row.first == entry.code; });
    CHECK((listed || entry.code == 35));
  }
}
#endif // CUDADIAG_TEST_HAVE_CUDA_H

namespace {

StepOutcome probe(const std::string& library, const cudadiag::Environment& env) {
  cudadiag::worker::WorkerOptions options;
  options.executable = CUDADIAG_TEST_EXECUTABLE;
  options.step_timeout = std::chrono::milliseconds(10000);
  auto outcomes = cudadiag::worker::run_steps({{"cuda", "driver", library}}, options, env);
  REQUIRE(outcomes.size() == 1);
  return outcomes.front();
}

nlohmann::json probe_ok(const std::string& library, const cudadiag::Environment& env) {
  const auto outcome = probe(library, env);
  INFO(outcome.detail);
  INFO(outcome.stderr_tail);
  REQUIRE(outcome.status == cudadiag::worker::StepStatus::ok);
  const auto result = nlohmann::json::parse(outcome.result, nullptr, false);
  REQUIRE(result.is_object());
  return result;
}

} // namespace

TEST_CASE("driver probe: the error table answers by code") {
  CHECK(cudadiag::cuda_api::find_cuda_error(34)->name == "CUDA_ERROR_STUB_LIBRARY");
  CHECK(cudadiag::cuda_api::find_cuda_error(35)->name == "cudaErrorInsufficientDriver");
  CHECK(cudadiag::cuda_api::find_cuda_error(803)->name == "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH");
  CHECK(cudadiag::cuda_api::find_cuda_error(12345) == nullptr);
  for (const int code :
       {0, 1, 2, 3, 4, 34, 35, 46, 100, 101, 200, 209, 218, 222, 304, 500, 801, 803, 804, 999}) {
    CAPTURE(code);
    const auto* entry = cudadiag::cuda_api::find_cuda_error(code);
    REQUIRE(entry != nullptr);
    CHECK_FALSE(entry->description.empty());
  }
}

TEST_CASE("driver probe: a working driver reports its version and H200-like devices") {
  const auto result = probe_ok(CUDADIAG_FAKE_DRIVER, cudadiag::testing::fake_driver_env());
  CHECK(result["library"] == CUDADIAG_FAKE_DRIVER);
  CHECK(result["loaded"] == true);
  CHECK(result["dlopen_error"].is_null());
  CHECK(result["missing_symbols"] == nlohmann::json::array());
  CHECK(result["get_proc_address"] == "cuGetProcAddress_v2");
  CHECK(result["get_proc_address_error"].is_null());
  CHECK(result["init"]["code"] == 0);
  CHECK(result["init"]["name"] == "CUDA_SUCCESS");
  CHECK(result["driver_version"] == 13000);
  CHECK(result["driver_version_error"].is_null());
  CHECK(result["is_stub"] == false);
  CHECK(result["device_count"] == 1);
  REQUIRE(result["devices"].size() == 1);
  const auto device = result["devices"][0];
  CHECK(device["ordinal"] == 0);
  CHECK(device["name"] == "NVIDIA H200 (fake 0)");
  CHECK(std::regex_match(device["uuid"].get<std::string>(),
                         std::regex("GPU-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")));
  CHECK(device["uuid"] == "GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf");
  CHECK(device["pci_bus_id"] == "0000:1B:00.0");
  CHECK(device["compute_capability"] == "9.0");
  CHECK(device["sm_count"] == 132);
  CHECK(device["total_memory_bytes"] == 150754820096ULL);
  CHECK(device["memory_clock_khz"] == 3201000);
  CHECK(device["memory_bus_width_bits"] == 6016);
  CHECK(device["peak_bandwidth_gbps"].get<double>() == doctest::Approx(4814.3).epsilon(0.0001));
  const auto attributes = device["attributes"];
  CHECK(attributes["unified_addressing"] == true);
  CHECK(attributes["virtual_memory_management"] == true);
  CHECK(attributes["handle_type_posix_fd"] == true);
  CHECK(attributes["memory_pools"] == true);
  CHECK(attributes["ipc_event"] == true);
  CHECK(attributes["concurrent_managed_access"] == true);
  CHECK(attributes["pageable_memory_access"] == false);
  CHECK(attributes["handle_type_fabric"].is_null()); // the fake answers INVALID_VALUE: unknown, not false
  CHECK(device["errors"].size() == 1);               // ... and that one failure is recorded
}

TEST_CASE("driver probe: version and device count follow the driver") {
  const auto result = probe_ok(CUDADIAG_FAKE_DRIVER,
                               cudadiag::testing::fake_driver_env({{"CUDADIAG_FAKE_CUDA_VERSION", "12040"},
                                                                   {"CUDADIAG_FAKE_CUDA_DEVICES", "3"}}));
  CHECK(result["driver_version"] == 12040);
  CHECK(result["device_count"] == 3);
  REQUIRE(result["devices"].size() == 3);
  std::set<std::string> uuids;
  const auto devices = result["devices"];
  for (const auto& device : devices) {
    uuids.insert(device["uuid"].get<std::string>());
  }
  CHECK(uuids.size() == 3);
  CHECK(result["devices"][2]["ordinal"] == 2);
  CHECK(result["devices"][2]["pci_bus_id"] == "0000:1D:00.0");

  const auto none = probe_ok(CUDADIAG_FAKE_DRIVER,
                             cudadiag::testing::fake_driver_env({{"CUDADIAG_FAKE_CUDA_DEVICES", "0"}}));
  CHECK(none["init"]["code"] == 0);
  CHECK(none["device_count"] == 0);
  CHECK(none["devices"] == nlohmann::json::array());
}

TEST_CASE("driver probe: cuInit errors are named, by the driver when it can, else by cudadiag") {
  struct Case {
    int code;
    const char* name;
    const char* description_part;
  };
  const Case cases[] = {
      {35, "cudaErrorInsufficientDriver", "older"},
      {100, "CUDA_ERROR_NO_DEVICE", "(fake)"}, // the fake decodes 100 and 999 itself
      {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH", "kernel driver"},
      {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "forward-compatibility"},
      {999, "CUDA_ERROR_UNKNOWN", "(fake)"},
      {34, "CUDA_ERROR_STUB_LIBRARY", "stub"},
      {4242, nullptr, nullptr}, // unknown to both: null, not guessed
  };
  for (const auto& test : cases) {
    CAPTURE(test.code);
    const auto result = probe_ok(
        CUDADIAG_FAKE_DRIVER,
        cudadiag::testing::fake_driver_env({{"CUDADIAG_FAKE_CUDA", "error:" + std::to_string(test.code)}}));
    CHECK(result["loaded"] == true);
    CHECK(result["init"]["code"] == test.code);
    if (test.name != nullptr) {
      CHECK(result["init"]["name"] == test.name);
      CHECK(result["init"]["description"].get<std::string>().find(test.description_part) !=
            std::string::npos);
    } else {
      CHECK(result["init"]["name"].is_null());
      CHECK(result["init"]["description"].is_null());
    }
    CHECK(result["is_stub"] == (test.code == 34));
    CHECK(result["driver_version"] == 13000); // asked whether or not cuInit works
    CHECK(result["device_count"].is_null());
    CHECK(result["devices"] == nlohmann::json::array());
  }
}

TEST_CASE("driver probe: a stub, which fails even cuGetProcAddress with 34, is still identified by cuInit") {
  const auto result =
      probe_ok(CUDADIAG_FAKE_DRIVER, cudadiag::testing::fake_driver_env({{"CUDADIAG_FAKE_CUDA", "stub"}}));
  CHECK(result["loaded"] == true);
  CHECK(result["is_stub"] == true);
  CHECK(result["get_proc_address_error"]["code"] == 34);
  CHECK(result["missing_symbols"] == nlohmann::json::array()); // found by their versioned exports instead
  CHECK(result["init"]["code"] == 34);
  CHECK(result["init"]["name"] == "CUDA_ERROR_STUB_LIBRARY"); // the stub cannot name it: cudadiag's table
  CHECK(result["driver_version"].is_null());
  CHECK(result["driver_version_error"]["code"] == 34);
  CHECK(result["device_count"].is_null());
}

TEST_CASE("driver probe: the toolkit's own stub libcuda is recognised") {
  std::string stub;
  for (const char* candidate :
       {"/usr/local/cuda/lib64/stubs/libcuda.so", "/usr/local/cuda/lib/stubs/libcuda.so"}) {
    if (cudadiag::fs::is_regular_file(candidate)) {
      stub = candidate;
      break;
    }
  }
  if (stub.empty()) {
    CUDADIAG_SKIP("no toolkit stub libcuda under /usr/local/cuda");
  }
  const auto result = probe_ok(stub, cudadiag::testing::fake_driver_env());
  CHECK(result["loaded"] == true);
  CHECK(result["is_stub"] == true);
  CHECK(result["init"]["code"] == 34);
}

TEST_CASE("driver probe: without cuGetProcAddress the driver is loaded but not initialised") {
  const auto result = probe_ok(CUDADIAG_FAKE_DRIVER_NOPROC,
                               cudadiag::testing::fake_driver_env({{"CUDADIAG_FAKE_CUDA_VERSION", "11020"}}));
  CHECK(result["loaded"] == true);
  CHECK(result["missing_symbols"] == nlohmann::json::array({"cuGetProcAddress_v2"}));
  CHECK(result["get_proc_address"].is_null());
  CHECK(result["init"].is_null());
  CHECK(result["driver_version"] == 11020); // read through its one-ABI plain symbol: why it is too old
  CHECK(result["device_count"].is_null());
}

TEST_CASE("driver probe: the 4-argument cuGetProcAddress of CUDA 11.3-11.8 is used when _v2 is absent") {
  const auto result = probe_ok(CUDADIAG_FAKE_DRIVER_LEGACYPROC, cudadiag::testing::fake_driver_env());
  CHECK(result["get_proc_address"] == "cuGetProcAddress");
  CHECK(result["missing_symbols"] == nlohmann::json::array());
  CHECK(result["init"]["code"] == 0);
  CHECK(result["device_count"] == 1);
}

TEST_CASE("driver probe: a symbol the driver lacks is recorded, not fatal") {
  const auto result =
      probe_ok(CUDADIAG_FAKE_DRIVER,
               cudadiag::testing::fake_driver_env(
                   {{"CUDADIAG_FAKE_CUDA_MISSING", "cuDeviceGetPCIBusId,cuGetErrorName,cuGetErrorString"}}));
  CHECK(result["missing_symbols"] ==
        nlohmann::json::array({"cuGetErrorName", "cuGetErrorString", "cuDeviceGetPCIBusId"}));
  CHECK(result["init"]["name"] == "CUDA_SUCCESS"); // from cudadiag's table
  CHECK(result["init"]["description"] == "no error");
  REQUIRE(result["devices"].size() == 1);
  CHECK(result["devices"][0]["pci_bus_id"].is_null());
  CHECK(result["devices"][0]["sm_count"] == 132);
}
