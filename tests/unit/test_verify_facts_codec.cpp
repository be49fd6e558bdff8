// The verification facts' wire codec and rendering (verify/facts_codec.cpp): what encode writes,
// decode reads back to the same facts, for hand-built facts with every field set and for real
// probes (the toolkit's NVRTC, nvJitLink and runtime, the fake NVML); the report's device shapes.

#include "verify/facts_codec.hpp"
#include "verify/probes.hpp"
#include "verify/verification.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <unistd.h>

#include <string>

namespace verify = cudadiag::verify;
using nlohmann::json;

namespace {

// encode -> decode -> the same rendering.
void check_round_trip(std::string_view kind, const verify::ProbeFacts& facts) {
  const auto text = verify::encode(facts);
  const auto back = verify::decode(kind, text);
  CHECK(back.index() == facts.index());
  CHECK(verify::to_json(back) == verify::to_json(facts));
  CHECK(verify::to_json(back).dump() == text);
}

verify::DriverDevice full_driver_device() {
  verify::DriverDevice device;
  device.ordinal = 0;
  device.name = "NVIDIA H200";
  device.uuid = "GPU-00000000-1111-2222-3333-444444444444";
  device.pci_bus_id = "0000:19:00.0";
  device.compute_capability = "9.0";
  device.sm_count = 132;
  device.total_memory_bytes = 150'000'000'000ULL;
  device.memory_clock_khz = 3'201'000;
  device.memory_bus_width_bits = 6016;
  device.peak_bandwidth_gbps = 4814.3;
  device.l2_cache_bytes = 62'914'560;
  device.compute_mode = 0;
  device.attributes = {{"ecc_enabled", true}, {"integrated", false}, {"handle_type_fabric", std::nullopt}};
  device.errors = {"cuDeviceGetAttribute: CUDA_ERROR_INVALID_VALUE (1)"};
  return device;
}

verify::NvmlDevice full_nvml_device(std::string uuid) {
  verify::NvmlDevice device;
  device.index = 0;
  device.name = "NVIDIA H200";
  device.uuid = std::move(uuid);
  device.pci_bus_id = "00000000:19:00.0";
  device.pci_device_id = 0x233510deU;
  device.pcie = verify::NvmlPcie{5U, 5U, 16U, std::nullopt};
  device.ecc = verify::NvmlEcc{true, std::nullopt};
  device.ecc_uncorrected_aggregate = 0U;
  device.remapped_rows = verify::NvmlRemappedRows{1U, 0U, true, false};
  device.persistence_mode = true;
  device.mig_mode = verify::NvmlMigMode{false, true};
  device.clocks_event_reasons = verify::NvmlClocksEventReasons{0x5, {"gpu_idle", "sw_power_cap"}};
  device.errors = {{"nvmlDeviceGetMaxPcieLinkWidth", "NVML_ERROR_NOT_SUPPORTED"}};
  return device;
}

} // namespace

TEST_CASE("facts codec: every field of every probe's facts survives the wire") {
  verify::DriverFacts driver;
  driver.library = "/usr/lib/libcuda.so.1";
  driver.loaded = true;
  driver.missing_symbols = {"cuDeviceGetUuid", "cuDeviceTotalMem"}; // lookup order, not sorted
  driver.get_proc_address = "cuGetProcAddress_v2";
  driver.get_proc_address_error = verify::CuResultInfo{34, "CUDA_ERROR_STUB_LIBRARY", std::nullopt};
  driver.init = verify::CuResultInfo{0, "CUDA_SUCCESS", "no error"};
  driver.driver_version = 13000;
  driver.driver_version_error = verify::CuResultInfo{3, std::nullopt, std::nullopt};
  driver.device_count = 2;
  verify::DriverDevice broken;
  broken.ordinal = 1;
  broken.error = "cuDeviceGet failed";
  driver.devices = {full_driver_device(), broken};
  driver.is_stub = true;
  check_round_trip("driver", driver);
  const auto rendered = verify::to_json(driver);
  CHECK(rendered["devices"][1] == json{{"ordinal", 1}, {"error", "cuDeviceGet failed"}});
  CHECK(rendered["missing_symbols"] == json{"cuDeviceGetUuid", "cuDeviceTotalMem"});

  verify::DriverFacts failed;
  failed.library = "/x/libcuda.so.1";
  failed.internal_error = "internal error: boom";
  check_round_trip("driver", failed);
  CHECK(verify::to_json(failed) == json{{"library", "/x/libcuda.so.1"},
                                        {"loaded", false},
                                        {"dlopen_error", nullptr},
                                        {"missing_symbols", json::array()},
                                        {"error", "internal error: boom"}});

  verify::NvmlFacts nvml;
  nvml.library = "/usr/lib/libnvidia-ml.so.1";
  nvml.loaded = true;
  nvml.init = verify::NvmlReturnInfo{0, "NVML_SUCCESS", "Success"};
  nvml.driver_version = "580.95.05";
  nvml.nvml_version = "13.580.95.05";
  nvml.cuda_driver_version = 13000;
  nvml.cuda_driver_version_api = "nvmlSystemGetCudaDriverVersion_v2";
  nvml.device_count = 2U;
  verify::NvmlDevice no_handle;
  no_handle.index = 1;
  no_handle.errors = {{"nvmlDeviceGetHandleByIndex_v2", "NVML_ERROR_UNKNOWN"}};
  nvml.devices = {full_nvml_device("GPU-1"), no_handle};
  nvml.errors = {{"nvmlShutdown", "NVML_ERROR_UNINITIALIZED"}};
  check_round_trip("nvml", nvml);
  CHECK(verify::to_json(nvml)["devices"][1]["pcie"].is_null());

  verify::NvmlFacts unloaded;
  unloaded.library = "/nowhere/libnvidia-ml.so.1";
  unloaded.dlopen_error = "cannot open shared object file";
  check_round_trip("nvml", unloaded);
  CHECK_FALSE(verify::to_json(unloaded).contains("init")); // only the load facts when not loaded

  verify::NvrtcFacts nvrtc;
  nvrtc.library = "/usr/local/cuda/lib64/libnvrtc.so.13";
  nvrtc.loaded = true;
  nvrtc.version = "13.0";
  nvrtc.version_error = 7;
  nvrtc.supported_archs = std::vector<int>{75, 80, 90};
  nvrtc.builtins =
      verify::NvrtcBuiltins{"libnvrtc-builtins.so.13.0", "/usr/local/cuda/lib64/libnvrtc-builtins.so.13.0",
                            false, "cannot open", std::nullopt};
  nvrtc.compile_check = verify::NvrtcCompileCheck{false, "nvrtcCompileProgram", 7, std::nullopt, "log"};
  nvrtc.probe_error = "out of memory";
  check_round_trip("nvrtc", nvrtc);

  verify::NvJitLinkFacts nvjitlink;
  nvjitlink.library = "/usr/local/cuda/lib64/libnvJitLink.so.13";
  nvjitlink.loaded = true;
  nvjitlink.version = "12.2";
  nvjitlink.version_api = "versioned_symbols";
  nvjitlink.versioned_symbol = "__nvJitLinkCreate_12_2";
  nvjitlink.entry_point_versions = {"12.0", "12.2"};
  nvjitlink.create_check = verify::NvJitLinkCreateCheck{true, {"-arch=sm_90"}, 0, "NVJITLINK_SUCCESS"};
  check_round_trip("nvjitlink", nvjitlink);

  verify::CudartFacts cudart;
  cudart.library = "/usr/local/cuda/lib64/libcudart.so.13";
  cudart.loaded = true;
  cudart.runtime_version_error = verify::CudartError{35, "cudaErrorInsufficientDriver"};
  cudart.driver_version = 0;
  cudart.driver_version_error = verify::CudartError{100, std::nullopt};
  check_round_trip("cudart", cudart);
  const auto rendered_cudart = verify::to_json(cudart);
  CHECK(rendered_cudart["runtime_version"].is_null());
  CHECK(rendered_cudart["runtime_version_error_name"] == "cudaErrorInsufficientDriver");
  CHECK(rendered_cudart["driver_version_error_name"].is_null());

  verify::CudartFacts fine;
  fine.library = cudart.library;
  fine.loaded = true;
  fine.runtime_version = 13000;
  CHECK_FALSE(verify::to_json(fine).contains("runtime_version_error"));
  CHECK(verify::to_json(fine)["driver_version_error"].is_null());
  CHECK_FALSE(verify::to_json(fine).contains("driver_version_error_name"));
}

TEST_CASE("facts codec: what is not an answer of the kind decodes to nothing") {
  CHECK(verify::decode("driver", "not json").index() == 0);
  CHECK(verify::decode("driver", "[1, 2]").index() == 0);
  CHECK(verify::decode("no-such-kind", "{}").index() == 0);
  CHECK(verify::to_json(verify::ProbeFacts{}).is_null());
  CHECK(verify::load_facts(verify::ProbeFacts{}) == nullptr);
}

TEST_CASE("facts codec: real probes round-trip") {
  SUBCASE("the fake NVML") {
    check_round_trip("nvml", verify::probe_nvml(CUDADIAG_FAKE_NVML_LIB));
  }
  for (const auto& [kind, file] :
       {std::pair{"nvrtc", "libnvrtc.so.13"}, std::pair{"nvjitlink", "libnvJitLink.so.13"},
        std::pair{"cudart", "libcudart.so.13"}}) {
    const std::string path = std::string("/usr/local/cuda/lib64/") + file;
    if (::access(path.c_str(), R_OK) != 0) {
      continue;
    }
    INFO(path);
    const verify::ProbeFacts facts =
        std::string_view(kind) == "nvrtc"       ? verify::ProbeFacts(verify::probe_nvrtc(path))
        : std::string_view(kind) == "nvjitlink" ? verify::ProbeFacts(verify::probe_nvjitlink(path))
                                                : verify::ProbeFacts(verify::probe_cudart(path));
    CHECK(verify::load_facts(facts)->loaded);
    check_round_trip(kind, facts);
  }
}

TEST_CASE("devices: the driver view with NVML merged by UUID and GPUs only NVML sees flagged") {
  verify::DriverFacts driver;
  driver.devices = {full_driver_device()};
  verify::NvmlFacts nvml;
  nvml.devices = {full_nvml_device(*driver.devices[0].uuid), full_nvml_device("GPU-hidden")};
  const auto devices = verify::merge_devices(&driver, &nvml);
  REQUIRE(devices.size() == 2);
  CHECK(devices[0].driver);
  CHECK(devices[0].nvml);
  CHECK_FALSE(devices[1].driver);
  const auto rendered = verify::devices_to_json(devices);
  CHECK(rendered[0]["sm_count"] == 132);
  CHECK(rendered[0]["nvml"]["pcie"]["gen_current"] == 5);
  CHECK(rendered[1]["ordinal"].is_null());
  CHECK(rendered[1]["visible_to_cuda"] == false);
  CHECK(rendered[1]["uuid"] == "GPU-hidden");
  CHECK(rendered[1]["nvml"]["uuid"] == "GPU-hidden");
  CHECK_FALSE(rendered[0].contains("visible_to_cuda"));
  CHECK(verify::devices_to_json(verify::merge_devices(nullptr, nullptr)) == json::array());
}
