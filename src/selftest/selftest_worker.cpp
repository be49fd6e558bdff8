// The self-test worker (child side): `cudadiag __worker selftest LIBCUDA CONFIG_JSON`. Loads the
// driver by absolute path, makes the device's primary context current, and runs the requested
// tests one after another. Before each test it announces the test and its deadline (a phase line
// with "deadline_ms"), so that the parent can kill a test that hangs and start a fresh worker for
// the rest; after each test it sends the result as a record line (see worker/process.hpp).

#include "selftest/selftest_worker.hpp"

#include "selftest/gpu_busy.hpp"
#include "selftest/health.hpp"
#include "selftest/nvml_health.hpp"
#include "selftest/selftest_codec.hpp"
#include "selftest/test_context.hpp"
#include "worker/child.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <future>

namespace cudadiag::selftest {
namespace {

using Clock = std::chrono::steady_clock;

// Runs one test; whatever it throws becomes its status.
TestResult run_guarded(const TestInfo& test, const TestContext& context) {
  const auto started = Clock::now();
  TestResult result;
  try {
    result = test.run(context);
  } catch (const CudaFailure& failure) {
    result = new_result(context);
    if (failure.code() == cu::CUDA_ERROR_OUT_OF_MEMORY) {
      result.status = TestStatus::skip;
      result.reason = std::string("not enough free device memory: ") + failure.what();
    } else {
      result.status = TestStatus::fail;
      result.reason = failure.what();
    }
  } catch (const std::exception& error) {
    result = new_result(context);
    result.status = TestStatus::error;
    result.reason = std::string("internal error: ") + error.what();
  }
  result.wall_ms = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
  return result;
}

Expected<DeviceFacts> open_device(const Gpu& gpu, int ordinal) {
  const auto& api = gpu.api();
  int count = 0;
  gpu.check(api.device_get_count(&count), "cuDeviceGetCount");
  if (ordinal < 0 || ordinal >= count) {
    return Error{"device " + std::to_string(ordinal) + " does not exist (" + std::to_string(count) +
                 " visible; CUDA_VISIBLE_DEVICES applies)"};
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

// NVML clocks, power, temperature and clocks event reasons are sampled this often while a test runs.
constexpr std::chrono::milliseconds k_sample_interval{10};
// NVML's process lists (who else uses the GPU) are read this often while a test runs, and at its
// start and end.
constexpr std::chrono::milliseconds k_busy_interval{250};

// This GPU in the NVML at `path` (opened into `nvml`), or why there is none.
Expected<NvmlDevice> open_nvml(const Gpu& gpu, const DeviceFacts& device, const std::string& path,
                               std::unique_ptr<NvmlHealth>& nvml) {
  if (path.empty()) {
    return Error{"NVML (libnvidia-ml.so.1) was not found"};
  }
  if (gpu.api().device_get_pci_bus_id == nullptr) {
    return Error{"the driver has no cuDeviceGetPCIBusId"};
  }
  char bus_id[32] = {};
  if (const auto code = gpu.api().device_get_pci_bus_id(bus_id, sizeof bus_id, device.handle);
      code != cu::CUDA_SUCCESS) {
    return Error{"cuDeviceGetPCIBusId: " + gpu.error_name(code)};
  }
  worker::report_phase("nvml");
  CUDADIAG_TRY_ASSIGN(nvml, NvmlHealth::open(path));
  return nvml->device(bus_id);
}

Evidence facts_evidence(const DeviceFacts& facts) {
  return {{"ordinal", facts.ordinal},
          {"compute_capability", std::to_string(facts.cc_major) + "." + std::to_string(facts.cc_minor)},
          {"sm_count", facts.sm_count},
          {"peak_bandwidth_gbps", facts.peak_gbps}};
}

} // namespace

Evidence run_selftest_worker(const std::string& libcuda_path, const std::string& config_text) {
  const auto decoded = decode_config(config_text);
  if (!decoded) {
    throw std::runtime_error("the self-test configuration is not a JSON object");
  }
  const auto& config = *decoded;
  Evidence summary = {{"driver", libcuda_path}, {"device", nullptr}, {"driver_version", nullptr}};

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
    worker::report_phase("cuInit");
    std::optional<cu::CUresult> init;
    if (auto loaded = Gpu::load(libcuda_path, init); !loaded) {
      no_gpu_reason = loaded.error().message;
      device_broken = true; // verification initialised this driver; here it failed
    } else {
      gpu = std::move(*loaded);
      summary["driver_version"] = gpu->driver_version();
      worker::report_phase("device");
      try {
        if (auto opened = open_device(*gpu, *config.device)) {
          device = *opened;
          context.emplace(*gpu, device->handle);
          summary["device"] = facts_evidence(*device);
        } else {
          no_gpu_reason = opened.error().message;
          device_broken = true;
        }
      } catch (const CudaFailure& failure) {
        no_gpu_reason =
            std::string("cannot use device ") + std::to_string(*config.device) + ": " + failure.what();
        device_broken = true;
        device.reset();
      }
    }
  }

  // NVML, for the link, clocks and memory counters of this GPU (found by its PCI bus id).
  std::unique_ptr<NvmlHealth> nvml;
  std::optional<NvmlDevice> nvml_device;
  std::string nvml_problem;
  if (device) {
    if (auto opened = open_nvml(*gpu, *device, config.nvml, nvml)) {
      nvml_device.emplace(std::move(*opened));
    } else {
      nvml_problem = opened.error().message;
    }
    summary["nvml"] = {{"path", config.nvml},
                       {"bus_id", nvml_device ? EvidenceValue(nvml_device->bus_id()) : EvidenceValue()},
                       {"problem", nvml_problem.empty() ? EvidenceValue() : EvidenceValue(nvml_problem)}};
  }

  // Who else uses this GPU: sampled around each test; the utilisation before the first one, when
  // only others can have kept the GPU busy.
  const auto self = static_cast<unsigned>(::getpid());
  const auto session = static_cast<unsigned>(config.session_pid > 0 ? config.session_pid : ::getppid());
  const auto utilization_before = nvml_device ? nvml_device->utilization_pct() : std::nullopt;

  if (device && config.device_arch && *config.device_arch != device->cc_major * 10 + device->cc_minor) {
    jit_preparation = {}; // verification described another device: compile for this one in the test
  }
  int run = 0;
  const auto catalog = test_catalog();
  std::vector<const TestInfo*> order;
  for (const auto& test : catalog) {
    order.push_back(&test);
  }
  std::stable_partition(order.begin(), order.end(), [](const TestInfo* test) { return test->key != "jit"; });
  for (const auto* test : order) {
    if (!wanted(test->key)) {
      continue;
    }
    const TestContext test_context{config,
                                   *test,
                                   device ? gpu.get() : nullptr,
                                   device,
                                   no_gpu_reason,
                                   device_broken,
                                   sizes_for(config.level),
                                   jit_preparation,
                                   nvml_device ? &*nvml_device : nullptr,
                                   nvml_problem,
                                   std::chrono::steady_clock::now() + test_timeout(test->key, config.level)};
    worker::report_phase("test:" + std::string(test->key), test_timeout(test->key, config.level));
    std::optional<ClockSampler> sampler;
    std::optional<BusySampler> busy;
    if (nvml_device) {
      sampler.emplace(*nvml_device, k_sample_interval);
      if (test_context.gpu != nullptr) {
        busy.emplace(*nvml_device, self, session, proc_process_table(), k_busy_interval);
      }
    }
    auto result = run_guarded(*test, test_context);
    if (sampler) {
      result.clocks = summarize_samples(sampler->stop());
    }
    if (busy) {
      result.busy = busy->stop();
      result.busy->utilization_before_pct = utilization_before;
    }
    worker::report_record(encode_result(result));
    ++run;
  }
  summary["tests_run"] = run;
  return summary;
}

} // namespace cudadiag::selftest
