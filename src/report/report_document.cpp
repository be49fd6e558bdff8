#include "report/report_document.hpp"

#include "core/json_fields.hpp"

#include <array>
#include <cmath>
#include <cstdio>

namespace cudadiag::report {
namespace {

using nlohmann::json;

const json& empty_array() {
  static const json value = json::array();
  return value;
}

const json* member(const json& object, std::string_view key) {
  if (!object.is_object()) {
    return nullptr;
  }
  const auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

// object[key], or a null value when absent.
const json& field(const json& object, std::string_view key) {
  static const json null_value;
  const auto* value = member(object, key);
  return value != nullptr ? *value : null_value;
}

} // namespace

const json* find_component(const json& report, std::string_view name, std::optional<std::string_view> kind) {
  const auto* components = member(report, "components");
  if (components == nullptr || !components->is_array()) {
    return nullptr;
  }
  for (const auto& component : *components) {
    if (json_fields::string_or(component, "name") == name &&
        (!kind || json_fields::string_or(component, "kind") == *kind)) {
      return &component;
    }
  }
  return nullptr;
}

const json* chosen_answer(const json& component) {
  for (const auto* key : {"selected", "loader"}) {
    if (const auto* answer = member(component, key); answer != nullptr && answer->is_object()) {
      return answer;
    }
  }
  return nullptr;
}

const json* python_failed(const json& component) {
  const auto* selected = member(component, "selected");
  const auto* failed = member(component, "python_failed");
  return (selected == nullptr || selected->is_null()) && failed != nullptr && failed->is_object() ? failed
                                                                                                  : nullptr;
}

const json* verification_step(const json& report, std::string_view component) {
  const auto* verification = member(report, "verification");
  const auto* steps = verification != nullptr ? member(*verification, "steps") : nullptr;
  if (steps == nullptr || !steps->is_array()) {
    return nullptr;
  }
  for (const auto& step : *steps) {
    if (json_fields::string_or(step, "component") == component) {
      return &step;
    }
  }
  return nullptr;
}

std::optional<DriverVersion> driver_version(const json& report) {
  if (const auto* step = verification_step(report, "nvml")) {
    const auto version = json_fields::string_or(field(*step, "result"), "driver_version");
    if (!version.empty()) {
      return DriverVersion{version, "NVML"};
    }
  }
  if (const auto* driver = find_component(report, "cuda", "dynamic_lib")) {
    if (const auto* loader = member(*driver, "loader")) {
      const auto version = json_fields::string_or(*loader, "version");
      if (!version.empty() && !json_fields::bool_or(*loader, "is_stub", false)) {
        return DriverVersion{version, "libcuda file name"};
      }
    }
  }
  return std::nullopt;
}

std::optional<std::string> cuda_driver_version(const json& report) {
  const auto* step = verification_step(report, "cuda");
  if (step == nullptr) {
    return std::nullopt;
  }
  const auto version = json_fields::integer(field(*step, "result"), "driver_version");
  if (!version || *version <= 0) {
    return std::nullopt;
  }
  return std::to_string(*version / 1000) + "." + std::to_string((*version % 1000) / 10);
}

std::optional<std::string> cuinit_result(const json& report) {
  const auto* step = verification_step(report, "cuda");
  const auto* result = step != nullptr ? member(*step, "result") : nullptr;
  const auto* init = result != nullptr ? member(*result, "init") : nullptr;
  if (init == nullptr) {
    return std::nullopt;
  }
  const auto name = json_fields::string_or(*init, "name");
  if (!name.empty()) {
    return name;
  }
  const auto code = json_fields::integer(*init, "code");
  return code ? std::optional("CUresult " + std::to_string(*code)) : std::nullopt;
}

const json& selftest_tests(const json& report) {
  const auto* selftest = member(report, "selftest");
  const auto* tests = selftest != nullptr ? member(*selftest, "tests") : nullptr;
  return tests != nullptr && tests->is_array() ? *tests : empty_array();
}

std::string display(const json& object, std::string_view key, std::string_view fallback) {
  const auto* value = member(object, key);
  if (value == nullptr) {
    return std::string(fallback);
  }
  if (value->is_string()) {
    return value->get<std::string>();
  }
  if (value->is_number_float()) {
    return format_number(value->get<double>());
  }
  if (value->is_number() || value->is_boolean()) {
    return value->dump();
  }
  return std::string(fallback);
}

std::string format_number(double value) {
  std::array<char, 64> text{};
  if (!std::isfinite(value)) {
    return std::isnan(value) ? "NaN" : (value > 0 ? "inf" : "-inf");
  }
  if (value == std::trunc(value) && std::fabs(value) < 1e15) {
    static_cast<void>(std::snprintf(text.data(), text.size(), "%.0f", value));
  } else if (std::fabs(value) >= 1000) {
    static_cast<void>(std::snprintf(text.data(), text.size(), "%.1f", value));
  } else {
    static_cast<void>(std::snprintf(text.data(), text.size(), "%.4g", value));
  }
  return text.data();
}

std::string format_metric(const json& metric) {
  const auto* value = member(metric, "value");
  if (value == nullptr || !value->is_number()) {
    return "n/a";
  }
  const auto unit = json_fields::string_or(metric, "unit");
  return format_number(value->get<double>()) + (unit.empty() ? "" : " " + unit);
}

} // namespace cudadiag::report
