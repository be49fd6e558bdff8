// The self-test worker (child side): `cudadiag __worker selftest LIBCUDA CONFIG_JSON`. Loads the
// driver by absolute path, makes the device's primary context current, and runs the requested
// tests one after another. Before each test it announces the test and its deadline (a phase line
// with "deadline_ms"), so that the parent can kill a test that hangs and start a fresh worker for
// the rest; after each test it sends the result as a record line (see verify/worker.hpp).

#include "selftest/selftest_worker.hpp"

#include "selftest/test_context.hpp"
#include "verify/worker.hpp"

#include <algorithm>
#include <chrono>
#include <future>

namespace cudadiag::selftest {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

struct TestEntry {
  std::string_view key;
  TestResult (*run)(const TestContext&);
};
// clang-format off
constexpr TestEntry k_tests[] = {
    {"jit",       run_jit},
    {"ptx",       run_ptx},
    {"reduce",    run_reduce},
    {"sort",      run_sort},
    {"ipc",       run_ipc},
    {"green_ctx", run_green_ctx},
};
// clang-format on

const TestInfo& info_for(std::string_view key) {
  for (const auto& info : test_catalog()) {
    if (info.key == key) {
      return info;
    }
  }
  return test_catalog().front();
}

// Runs one test; whatever it throws becomes its status.
TestResult run_guarded(const TestEntry& entry, const TestContext& context) {
  const auto started = Clock::now();
  TestResult result;
  try {
    result = entry.run(context);
  } catch (const CudaFailure& failure) {
    result = new_result(context);
    if (failure.code() == cu::CUDA_ERROR_OUT_OF_MEMORY) {
      result.status = "skip";
      result.reason = std::string("not enough free device memory: ") + failure.what();
    } else {
      result.status = "fail";
      result.reason = failure.what();
    }
  } catch (const std::exception& error) {
    result = new_result(context);
    result.status = "error";
    result.reason = std::string("internal error: ") + error.what();
  }
  result.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  return result;
}

std::optional<DeviceFacts> open_device(const Gpu& gpu, int ordinal, std::string& problem) {
  const auto& api = gpu.api();
  int count = 0;
  gpu.check(api.device_get_count(&count), "cuDeviceGetCount");
  if (ordinal < 0 || ordinal >= count) {
    problem = "device " + std::to_string(ordinal) + " does not exist (" + std::to_string(count) +
              " visible; CUDA_VISIBLE_DEVICES applies)";
    return std::nullopt;
  }
  DeviceFacts facts;
  facts.ordinal = ordinal;
  gpu.check(api.device_get(&facts.handle, ordinal), "cuDeviceGet");
  facts.cc_major = gpu.attribute(facts.handle, cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
  facts.cc_minor = gpu.attribute(facts.handle, cu::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
  facts.sm_count = gpu.attribute(facts.handle, cu::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
  const int clock_khz = gpu.attribute(facts.handle, cu::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
  const int bus_bits = gpu.attribute(facts.handle, cu::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
  facts.peak_gbps = 2.0 * clock_khz * 1000.0 * (bus_bits / 8.0) / 1e9;
  return facts;
}

json facts_json(const DeviceFacts& facts) {
  return {{"ordinal", facts.ordinal},
          {"compute_capability", std::to_string(facts.cc_major) + "." + std::to_string(facts.cc_minor)},
          {"sm_count", facts.sm_count},
          {"peak_bandwidth_gbps", facts.peak_gbps}};
}

} // namespace

std::chrono::milliseconds test_timeout(std::string_view key, Level level) {
  using std::chrono::seconds;
  // Deadlines catch hangs; they are far above the healthy times (quick: ~0.1-0.5 s per test on an
  // H200; jit: NVRTC compiling CUB headers three times, seconds on a slow CPU).
  const int factor = level == Level::full ? 3 : 1;
  if (key == "jit") {
    return seconds(120);
  }
  if (key == "ipc") {
    return seconds(60 * factor);
  }
  return seconds(30 * factor);
}

json run_selftest_worker(const std::string& libcuda_path, const std::string& config_text) {
  const auto parsed = json::parse(config_text, nullptr, false);
  if (!parsed.is_object()) {
    throw std::runtime_error("the self-test configuration is not a JSON object");
  }
  const auto config = config_from_json(parsed);
  json summary = {{"driver", libcuda_path}, {"device", nullptr}, {"driver_version", nullptr}};

  auto wanted = [&config](std::string_view key) {
    return std::find(config.tests.begin(), config.tests.end(), key) != config.tests.end();
  };
  // The jit test's compiles take seconds of CPU and no GPU: they start first (for the architecture
  // verification reported) and run while the driver initialises and the GPU tests run; the jit test
  // itself (the launches) runs last.
  std::shared_future<std::shared_ptr<const JitPreparation>> jit_preparation;
  if (wanted("jit")) {
    jit_preparation =
        std::async(std::launch::async, [&config] { return prepare_jit(config, config.device_arch); }).share();
  }

  std::unique_ptr<Gpu> gpu;
  std::optional<DeviceFacts> device;
  std::optional<PrimaryContext> context;
  std::string no_gpu_reason = config.no_device_reason.empty() ? "no GPU" : config.no_device_reason;
  bool device_broken = false;
  if (config.device && !libcuda_path.empty()) {
    verify::report_phase("cuInit");
    std::string error;
    std::optional<cu::CUresult> init;
    gpu = Gpu::load(libcuda_path, error, init);
    if (!gpu) {
      no_gpu_reason = error;
      device_broken = true; // verification initialised this driver; here it failed
    } else {
      summary["driver_version"] = gpu->driver_version();
      verify::report_phase("device");
      try {
        device = open_device(*gpu, *config.device, no_gpu_reason);
        device_broken = !device;
        if (device) {
          context.emplace(*gpu, device->handle);
          summary["device"] = facts_json(*device);
        }
      } catch (const CudaFailure& failure) {
        no_gpu_reason =
            std::string("cannot use device ") + std::to_string(*config.device) + ": " + failure.what();
        device_broken = true;
        device.reset();
      }
    }
  }

  if (device && config.device_arch && *config.device_arch != device->cc_major * 10 + device->cc_minor) {
    jit_preparation = {}; // verification described another device: compile for this one in the test
  }
  int run = 0;
  std::vector<TestEntry> order(std::begin(k_tests), std::end(k_tests));
  std::stable_partition(order.begin(), order.end(),
                        [](const TestEntry& entry) { return entry.key != "jit"; });
  for (const auto& entry : order) {
    if (!wanted(entry.key)) {
      continue;
    }
    const TestContext test_context{
        config,        info_for(entry.key), device ? gpu.get() : nullptr, device,
        no_gpu_reason, device_broken,       sizes_for(config.level),      jit_preparation};
    verify::report_phase("test:" + std::string(entry.key), test_timeout(entry.key, config.level));
    auto result = run_guarded(entry, test_context);
    verify::report_record(result_to_json(result));
    ++run;
  }
  summary["tests_run"] = run;
  return summary;
}

} // namespace cudadiag::selftest
