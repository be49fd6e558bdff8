#include "selftest/test_context.hpp"

#include "core/json_fields.hpp"

#include <algorithm>

namespace cudadiag::selftest {

using json = nlohmann::json;

json config_to_json(const WorkerConfig& config) {
  return {{"device", config.device ? json(*config.device) : json(nullptr)},
          {"no_device_reason", config.no_device_reason},
          {"level", level_name(config.level)},
          {"tests", config.tests},
          {"libcuda", config.libcuda},
          {"libraries", config.libraries},
          {"libs_checked", config.libs_checked},
          {"nvrtc", config.nvrtc},
          {"nvjitlink", config.nvjitlink},
          {"cccl_include", config.cccl_include},
          {"module_path", config.module_path},
          {"module_missing_reason", config.module_missing_reason},
          {"executable", config.executable},
          {"nvml", config.nvml},
          {"device_arch", config.device_arch ? json(*config.device_arch) : json(nullptr)}};
}

WorkerConfig config_from_json(const json& object) {
  WorkerConfig config;
  if (object.contains("device") && object["device"].is_number_integer()) {
    config.device = object["device"].get<int>();
  }
  config.no_device_reason = json_fields::string_or(object, "no_device_reason", "");
  config.level = json_fields::string_or(object, "level", "quick") == "full" ? Level::full : Level::quick;
  if (object.contains("tests") && object["tests"].is_array()) {
    for (const auto& key : object["tests"]) {
      if (key.is_string()) {
        config.tests.push_back(key.get<std::string>());
      }
    }
  }
  config.libcuda = json_fields::string_or(object, "libcuda", "");
  if (object.contains("libraries") && object["libraries"].is_object()) {
    for (const auto& [name, path] : object["libraries"].items()) {
      if (path.is_string()) {
        config.libraries[name] = path.get<std::string>();
      }
    }
  }
  if (object.contains("libs_checked") && object["libs_checked"].is_array()) {
    for (const auto& name : object["libs_checked"]) {
      if (name.is_string()) {
        config.libs_checked.push_back(name.get<std::string>());
      }
    }
  }
  config.nvrtc = json_fields::string_or(object, "nvrtc", "");
  config.nvjitlink = json_fields::string_or(object, "nvjitlink", "");
  config.cccl_include = json_fields::string_or(object, "cccl_include", "");
  config.module_path = json_fields::string_or(object, "module_path", "");
  config.module_missing_reason = json_fields::string_or(object, "module_missing_reason", "");
  config.executable = json_fields::string_or(object, "executable", "");
  config.nvml = json_fields::string_or(object, "nvml", "");
  if (object.contains("device_arch") && object["device_arch"].is_number_integer()) {
    config.device_arch = object["device_arch"].get<int>();
  }
  return config;
}

const LevelSizes& sizes_for(Level level) {
  // quick: every buffer well past the L2 (H200: ~60 MB) but small enough for the whole suite to
  // take about a second; full: the sizes the performance targets are stated for (2^28+ elements).
  static const LevelSizes quick{
      .copy_elements = std::uint64_t{1} << 24U, // 256 MiB per buffer
      .copy_repetitions = 10,
      .cub_warmup = 3,
      .warm_ms = 20,
      .reduce_count = std::uint64_t{1} << 26U,
      .reduce_repetitions = 10,
      .sort_count = std::uint64_t{1} << 24U,
      .sort_repetitions = 5,
      .probe_spin_ns = 100'000,
      .latency_repetitions = 20,
      .pcie_bytes = std::uint64_t{256} << 20U,
      .pcie_repetitions = 5,
      .pcie_pageable = false,
      .compute_rounds = 512,
      .compute_repetitions = 5,
      .memory_test = false,
  };
  static const LevelSizes full{
      .copy_elements = std::uint64_t{1} << 28U, // 4 GiB per buffer
      .copy_repetitions = 20,
      .cub_warmup = 5,
      .warm_ms = 100,
      .reduce_count = std::uint64_t{1} << 30U,
      .reduce_repetitions = 20,
      .sort_count = std::uint64_t{1} << 28U,
      .sort_repetitions = 10,
      .probe_spin_ns = 200'000,
      .latency_repetitions = 50,
      .pcie_bytes = std::uint64_t{512} << 20U,
      .pcie_repetitions = 10,
      .pcie_pageable = true,
      .compute_rounds = 1024,
      .compute_repetitions = 10,
      .memory_test = true,
  };
  return level == Level::full ? full : quick;
}

int warm_up(const Gpu& gpu, cu::CUstream stream, int warm_ms, const std::function<void()>& launch) {
  const EventTimer timer(gpu);
  timer.start(stream);
  int runs = 0;
  for (int batch = 1; warm_ms > 0; batch = std::min(batch * 2, 1024)) {
    for (int i = 0; i < batch; ++i, ++runs) {
      launch();
    }
    if (timer.stop(stream) >= warm_ms) {
      break;
    }
  }
  return runs;
}

SmClock max_sm_clock(const TestContext& context) {
  // A plain value, not an optional: g++ 12 -O2 reads an optional's payload as maybe-uninitialised here.
  SmClock clock;
  clock.mhz = context.nvml != nullptr ? context.nvml->max_sm_clock_mhz().value_or(0U) : 0U;
  clock.source = "nvmlDeviceGetMaxClockInfo(SM)";
  if (clock.mhz == 0 && context.gpu != nullptr && context.device) {
    int khz = 0;
    if (context.gpu->api().device_get_attribute(&khz, cu::CU_DEVICE_ATTRIBUTE_CLOCK_RATE, context.device->handle) ==
            cu::CUDA_SUCCESS &&
        khz > 0) {
      clock.mhz = static_cast<unsigned>(khz / 1000);
      clock.source = "CU_DEVICE_ATTRIBUTE_CLOCK_RATE";
    }
  }
  if (clock.mhz == 0) {
    clock.source.clear();
  }
  return clock;
}

TestResult new_result(const TestContext& context) {
  TestResult result;
  result.key = std::string(context.info.key);
  result.description = std::string(context.info.description);
  if (context.device) {
    result.device = context.device->ordinal;
  }
  result.status = "pass";
  return result;
}

TestResult skipped(const TestContext& context, std::string reason) {
  auto result = new_result(context);
  result.status = "skip";
  result.reason = std::move(reason);
  return result;
}

TestResult without_gpu(const TestContext& context) {
  auto result = skipped(context, context.no_gpu_reason);
  if (context.device_broken) {
    result.status = "fail";
  }
  return result;
}

void add_metric(TestResult& result, std::string name, double value, std::string unit, bool primary) {
  Metric metric{std::move(name), value, std::move(unit)};
  if (primary) {
    result.primary = metric;
  }
  result.metrics.push_back(std::move(metric));
}

namespace {
json metric_to_json(const Metric& metric) {
  return {{"name", metric.name}, {"value", metric.value}, {"unit", metric.unit}};
}
Metric metric_from_json(const json& object) {
  Metric metric;
  metric.name = json_fields::string_or(object, "name", "");
  metric.unit = json_fields::string_or(object, "unit", "");
  if (object.contains("value") && object["value"].is_number()) {
    metric.value = object["value"].get<double>();
  }
  return metric;
}
} // namespace

json result_to_json(const TestResult& result) {
  json metrics = json::array();
  for (const auto& metric : result.metrics) {
    metrics.push_back(metric_to_json(metric));
  }
  return {{"key", result.key},
          {"device", result.device ? json(*result.device) : json(nullptr)},
          {"description", result.description},
          {"status", result.status},
          {"reason", result.reason.empty() ? json(nullptr) : json(result.reason)},
          {"wall_ms", result.wall_ms},
          {"metrics", metrics},
          {"primary", result.primary ? metric_to_json(*result.primary) : json(nullptr)},
          {"details", result.details.is_object() ? result.details : json::object()}};
}

TestResult result_from_json(const json& object) {
  TestResult result;
  result.key = json_fields::string_or(object, "key", "");
  if (object.contains("device") && object["device"].is_number_integer()) {
    result.device = object["device"].get<int>();
  }
  result.description = json_fields::string_or(object, "description", "");
  result.status = json_fields::string_or(object, "status", "error");
  result.reason = json_fields::string_or(object, "reason", "");
  if (object.contains("wall_ms") && object["wall_ms"].is_number()) {
    result.wall_ms = object["wall_ms"].get<double>();
  }
  if (object.contains("metrics") && object["metrics"].is_array()) {
    for (const auto& metric : object["metrics"]) {
      if (metric.is_object()) {
        result.metrics.push_back(metric_from_json(metric));
      }
    }
  }
  if (object.contains("primary") && object["primary"].is_object()) {
    result.primary = metric_from_json(object["primary"]);
  }
  if (object.contains("details") && object["details"].is_object()) {
    result.details = object["details"];
  }
  return result;
}

} // namespace cudadiag::selftest
