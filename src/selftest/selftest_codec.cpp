#include "selftest/selftest_codec.hpp"

#include "core/evidence_json.hpp"
#include "core/json_fields.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace cudadiag::selftest {
namespace {

using json = nlohmann::json;

std::string dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::optional<json> parse_object(std::string_view text) {
  auto parsed = json::parse(text, nullptr, false);
  if (!parsed.is_object()) {
    return std::nullopt;
  }
  return parsed;
}

template <class T> json nullable(const std::optional<T>& value) {
  return value ? json(*value) : json(nullptr);
}

std::optional<int> optional_int(const json& object, const char* key) {
  return object.contains(key) && object[key].is_number_integer() ? std::optional(object[key].get<int>())
                                                                 : std::nullopt;
}

template <class T> std::optional<T> optional_unsigned(const json& object, const char* key) {
  return object.contains(key) && object[key].is_number_unsigned() ? std::optional(object[key].get<T>())
                                                                  : std::nullopt;
}

std::optional<double> optional_number(const json& object, const char* key) {
  return object.contains(key) && object[key].is_number() ? std::optional(object[key].get<double>())
                                                         : std::nullopt;
}

std::optional<bool> optional_bool(const json& object, const char* key) {
  return object.contains(key) && object[key].is_boolean() ? std::optional(object[key].get<bool>())
                                                          : std::nullopt;
}

std::vector<std::string> strings(const json& object, const char* key) {
  std::vector<std::string> out;
  if (object.contains(key) && object[key].is_array()) {
    for (const auto& item : object[key]) {
      if (item.is_string()) {
        out.push_back(item.get<std::string>());
      }
    }
  }
  return out;
}

std::optional<std::vector<std::string>> optional_strings(const json& object, const char* key) {
  return object.contains(key) && object[key].is_array() ? std::optional(strings(object, key)) : std::nullopt;
}

const json& member(const json& object, const char* key) {
  static const json k_null;
  return object.is_object() && object.contains(key) ? object[key] : k_null;
}

// --- metrics ------------------------------------------------------------------------------------

json metric_to_json(const Metric& metric) {
  return {{"name", metric.name}, {"value", metric.value}, {"unit", metric.unit}};
}
Metric metric_from_json(const json& object) {
  Metric metric;
  metric.name = json_fields::string_or(object, "name", "");
  metric.unit = json_fields::string_or(object, "unit", "");
  metric.value = optional_number(object, "value").value_or(0);
  return metric;
}

// --- typed facts: sent as the evidence they render (result_facts.hpp), read back by field -------

PcieFacts pcie_from_json(const json& object) {
  PcieFacts facts;
  const auto& link = member(object, "link");
  facts.link.bus_id = json_fields::string_or(link, "bus_id", "");
  facts.link.gen_current = optional_unsigned<unsigned>(link, "gen_current");
  facts.link.gen_max = optional_unsigned<unsigned>(link, "gen_max");
  facts.link.width_current = optional_unsigned<unsigned>(link, "width_current");
  facts.link.width_max = optional_unsigned<unsigned>(link, "width_max");
  facts.verdict.expected_current_gbps = optional_number(object, "expected_current_gbps").value_or(0);
  facts.verdict.expected_max_gbps = optional_number(object, "expected_max_gbps").value_or(0);
  facts.verdict.link_below_max = json_fields::bool_or(object, "link_below_max", false);
  facts.verdict.slow = json_fields::bool_or(object, "slow", false);
  facts.verdict.problem = json_fields::string_or(object, "problem", "");
  return facts;
}

std::optional<MemoryCounters> counters_from_json(const json& object) {
  if (!object.is_object()) {
    return std::nullopt;
  }
  MemoryCounters counters;
  counters.ecc_corrected = optional_unsigned<std::uint64_t>(object, "ecc_corrected_volatile");
  counters.ecc_uncorrected = optional_unsigned<std::uint64_t>(object, "ecc_uncorrected_volatile");
  counters.remapped_correctable = optional_unsigned<unsigned>(object, "remapped_rows_correctable");
  counters.remapped_uncorrectable = optional_unsigned<unsigned>(object, "remapped_rows_uncorrectable");
  counters.remap_pending = optional_bool(object, "remap_pending");
  counters.remap_failure = optional_bool(object, "remap_failure");
  return counters;
}

MemoryFacts memory_from_json(const json& object) {
  MemoryFacts facts;
  facts.wrong_words = optional_unsigned<std::uint64_t>(object, "wrong_words").value_or(0);
  for (const auto& word : member(object, "first_wrong_words")) {
    facts.first_wrong_words.push_back({json_fields::string_or(word, "address", ""),
                                       json_fields::string_or(word, "expected", ""),
                                       json_fields::string_or(word, "found", "")});
  }
  facts.nvml_before = counters_from_json(member(object, "nvml_before"));
  facts.nvml_after = counters_from_json(member(object, "nvml_after"));
  facts.new_errors = strings(object, "new_errors");
  facts.injected_words = optional_unsigned<std::uint64_t>(object, "injected_words").value_or(0);
  return facts;
}

std::optional<Spread> spread_from_json(const json& object) {
  if (!object.is_object()) {
    return std::nullopt;
  }
  return Spread{optional_unsigned<unsigned>(object, "min").value_or(0),
                optional_unsigned<unsigned>(object, "median").value_or(0),
                optional_unsigned<unsigned>(object, "max").value_or(0)};
}

ClockSummary clocks_from_json(const json& object) {
  ClockSummary summary;
  summary.samples = optional_unsigned<std::size_t>(object, "samples").value_or(0);
  summary.sm_mhz = spread_from_json(member(object, "sm_mhz"));
  summary.mem_mhz = spread_from_json(member(object, "mem_mhz"));
  summary.power_w_max = optional_number(object, "power_w_max");
  summary.temperature_c_max = optional_unsigned<unsigned>(object, "temperature_c_max");
  summary.reasons_seen = optional_strings(object, "reasons_seen");
  summary.slowdown_reasons = optional_strings(object, "slowdown_reasons");
  return summary;
}

BusyFacts busy_from_json(const json& object) {
  BusyFacts facts;
  facts.known = optional_bool(object, "known").value_or(false);
  facts.unknown_reason = json_fields::string_or(object, "unknown_reason", "");
  for (const auto& process : member(object, "others")) {
    if (!process.is_object()) {
      continue;
    }
    GpuProcess other;
    other.pid = optional_unsigned<unsigned>(process, "pid").value_or(0);
    other.name = json_fields::string_or(process, "name", "");
    other.used_memory_bytes = optional_unsigned<std::uint64_t>(process, "used_memory_bytes");
    other.compute = optional_bool(process, "compute").value_or(false);
    other.graphics = optional_bool(process, "graphics").value_or(false);
    facts.others.push_back(std::move(other));
  }
  facts.utilization_before_pct = optional_unsigned<unsigned>(object, "utilization_before_pct");
  return facts;
}

CheckpointFacts checkpoint_from_json(const json& object) {
  CheckpointFacts facts;
  facts.outcome = checkpoint_outcome_from(json_fields::string_or(object, "outcome", ""))
                      .value_or(CheckpointOutcome::failed);
  facts.step = json_fields::string_or(object, "step", "");
  facts.code = optional_int(object, "code");
  facts.driver_words = json_fields::string_or(object, "driver_words", "");
  facts.detail = json_fields::string_or(object, "detail", "");
  facts.driver_version = optional_int(object, "driver_version");
  facts.persistence_mode = optional_bool(object, "persistence_mode");
  facts.target_ended_checkpointed = optional_bool(object, "target_ended_checkpointed").value_or(false);
  return facts;
}

} // namespace

std::string_view to_string(TestStatus status) {
  switch (status) {
  case TestStatus::pass: return "pass";
  case TestStatus::fail: return "fail";
  case TestStatus::skip: return "skip";
  case TestStatus::error: return "error";
  }
  return "error";
}

std::optional<TestStatus> parse_test_status(std::string_view text) {
  for (const auto status : {TestStatus::pass, TestStatus::fail, TestStatus::skip, TestStatus::error}) {
    if (to_string(status) == text) {
      return status;
    }
  }
  return std::nullopt;
}

// --- the worker's configuration -----------------------------------------------------------------

std::string encode_config(const WorkerConfig& config) {
  return dump({{"device", nullable(config.device)},
               {"no_device_reason", config.no_device_reason},
               {"level", level_name(config.level)},
               {"tests", config.tests},
               {"tests_named", config.tests_named},
               {"libcuda", config.libcuda},
               {"libraries", config.libraries},
               {"libs_checked", config.libs_checked},
               {"nvrtc", config.nvrtc},
               {"nvrtc_builtins", config.nvrtc_builtins},
               {"nvjitlink", config.nvjitlink},
               {"cccl_include", config.cccl_include},
               {"module_path", config.module_path},
               {"module_missing_reason", config.module_missing_reason},
               {"executable", config.executable},
               {"nvml", config.nvml},
               {"device_arch", nullable(config.device_arch)},
               {"inject_memory_errors", config.inject_memory_errors},
               {"load_timeout_ms", config.load_timeout.count()},
               {"session_pid", config.session_pid}});
}

std::optional<WorkerConfig> decode_config(std::string_view text) {
  const auto parsed = parse_object(text);
  if (!parsed) {
    return std::nullopt;
  }
  const auto& object = *parsed;
  WorkerConfig config;
  config.device = optional_int(object, "device");
  config.no_device_reason = json_fields::string_or(object, "no_device_reason", "");
  config.level = json_fields::string_or(object, "level", "quick") == "full" ? Level::full : Level::quick;
  config.tests = strings(object, "tests");
  config.tests_named = optional_bool(object, "tests_named").value_or(false);
  config.libcuda = json_fields::string_or(object, "libcuda", "");
  if (const auto& libraries = member(object, "libraries"); libraries.is_object()) {
    for (const auto& [name, path] : libraries.items()) {
      if (path.is_string()) {
        config.libraries[name] = path.get<std::string>();
      }
    }
  }
  config.libs_checked = strings(object, "libs_checked");
  config.nvrtc = json_fields::string_or(object, "nvrtc", "");
  config.nvrtc_builtins = json_fields::string_or(object, "nvrtc_builtins", "");
  config.nvjitlink = json_fields::string_or(object, "nvjitlink", "");
  config.cccl_include = json_fields::string_or(object, "cccl_include", "");
  config.module_path = json_fields::string_or(object, "module_path", "");
  config.module_missing_reason = json_fields::string_or(object, "module_missing_reason", "");
  config.executable = json_fields::string_or(object, "executable", "");
  config.nvml = json_fields::string_or(object, "nvml", "");
  config.device_arch = optional_int(object, "device_arch");
  config.load_timeout = std::chrono::milliseconds(optional_int(object, "load_timeout_ms").value_or(0));
  config.session_pid = optional_int(object, "session_pid").value_or(0);
  config.inject_memory_errors =
      static_cast<unsigned>(std::clamp(optional_int(object, "inject_memory_errors").value_or(0), 0, 4096));
  return config;
}

// --- one finished test --------------------------------------------------------------------------

std::string encode_result(const TestResult& result) {
  json metrics = json::array();
  for (const auto& metric : result.metrics) {
    metrics.push_back(metric_to_json(metric));
  }
  return dump({{"key", result.key},
               {"device", nullable(result.device)},
               {"description", result.description},
               {"status", to_string(result.status)},
               {"reason", result.reason},
               {"wall_ms", result.wall_ms},
               {"metrics", metrics},
               {"primary", result.primary ? metric_to_json(*result.primary) : json(nullptr)},
               {"pcie", result.pcie ? evidence_to_json(pcie_evidence(*result.pcie)) : json(nullptr)},
               {"memory", result.memory ? evidence_to_json(memory_evidence(*result.memory)) : json(nullptr)},
               {"checkpoint", result.checkpoint ? evidence_to_json(checkpoint_evidence(*result.checkpoint))
                                                : json(nullptr)},
               {"clocks", result.clocks ? evidence_to_json(clocks_evidence(*result.clocks)) : json(nullptr)},
               {"busy", result.busy ? evidence_to_json(busy_evidence(*result.busy)) : json(nullptr)},
               {"details", evidence_to_json(result.details)}});
}

TestResult decode_result(std::string_view text) {
  TestResult result;
  const auto parsed = parse_object(text);
  if (!parsed) {
    result.status = TestStatus::error;
    return result;
  }
  const auto& object = *parsed;
  result.key = json_fields::string_or(object, "key", "");
  result.device = optional_int(object, "device");
  result.description = json_fields::string_or(object, "description", "");
  result.status = parse_test_status(json_fields::string_or(object, "status", "")).value_or(TestStatus::error);
  result.reason = json_fields::string_or(object, "reason", "");
  result.wall_ms = optional_number(object, "wall_ms").value_or(0);
  for (const auto& metric : member(object, "metrics")) {
    if (metric.is_object()) {
      result.metrics.push_back(metric_from_json(metric));
    }
  }
  if (const auto& primary = member(object, "primary"); primary.is_object()) {
    result.primary = metric_from_json(primary);
  }
  if (const auto& pcie = member(object, "pcie"); pcie.is_object()) {
    result.pcie = pcie_from_json(pcie);
  }
  if (const auto& memory = member(object, "memory"); memory.is_object()) {
    result.memory = memory_from_json(memory);
  }
  if (const auto& checkpoint = member(object, "checkpoint"); checkpoint.is_object()) {
    result.checkpoint = checkpoint_from_json(checkpoint);
  }
  if (const auto& clocks = member(object, "clocks"); clocks.is_object()) {
    result.clocks = clocks_from_json(clocks);
  }
  if (const auto& busy = member(object, "busy"); busy.is_object()) {
    result.busy = busy_from_json(busy);
  }
  result.details = evidence_from_json(member(object, "details"));
  return result;
}

// --- free-form records --------------------------------------------------------------------------

std::string encode_evidence(const Evidence& evidence) {
  return dump(evidence_to_json(evidence));
}

std::optional<Evidence> decode_evidence(std::string_view text) {
  const auto parsed = parse_object(text);
  if (!parsed) {
    return std::nullopt;
  }
  return evidence_from_json(*parsed);
}

} // namespace cudadiag::selftest
