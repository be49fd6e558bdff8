#include "fleet/node_facts.hpp"

#include "core/json_fields.hpp"
#include "findings/findings.hpp"
#include "report/report_document.hpp"
#include "selftest/test_status.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <set>

namespace cudadiag::fleet {
namespace {

using nlohmann::json;
using report::display;

constexpr std::string_view k_unknown = "-";

const json& member(const json& object, std::string_view key) {
  static const json null_value;
  if (!object.is_object()) {
    return null_value;
  }
  const auto it = object.find(key);
  return it == object.end() ? null_value : *it;
}

std::string or_unknown(std::optional<std::string> value) {
  return value && !value->empty() ? *value : std::string(k_unknown);
}

void add(NodeFacts& facts, std::string name, std::string value, bool core) {
  facts.fingerprint.push_back(
      {std::move(name), value.empty() ? std::string(k_unknown) : std::move(value), core});
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& item : items) {
    out += (out.empty() ? "" : ", ") + item;
  }
  return out.empty() ? "none" : out;
}

void add_driver(NodeFacts& facts, const json& report) {
  const auto driver = report::driver_version(report);
  const auto version = driver ? driver->version : std::string();
  add(facts, "driver version", version, true);
  add(facts, "driver branch", version.substr(0, version.find('.')), true);
  add(facts, "CUDA driver version", or_unknown(report::cuda_driver_version(report)), true);
}

void add_components(NodeFacts& facts, const json& report) {
  for (const auto name : fingerprint_components()) {
    const auto* component = report::find_component(report, name);
    const auto* answer = component != nullptr ? report::chosen_answer(*component) : nullptr;
    const auto subject = std::string(name);
    if (answer == nullptr) {
      add(facts, subject + " version", component == nullptr ? "not in report" : "not found", true);
      add(facts, subject + " found via", "-", true);
      continue;
    }
    add(facts, subject + " version", display(*answer, "version", k_unknown), true);
    add(facts, subject + " found via", display(*answer, "found_via", k_unknown), true);
  }
}

void add_findings(NodeFacts& facts, const json& report) {
  std::set<std::string> errors;
  std::set<std::string> warnings;
  const auto& findings = member(report, "findings");
  if (findings.is_array()) {
    for (const auto& finding : findings) {
      const auto severity = findings::parse_severity(json_fields::string_or(finding, "severity"));
      auto id = json_fields::string_or(finding, "id", "?");
      if (severity == findings::Severity::error) {
        errors.insert(std::move(id));
      } else if (severity == findings::Severity::warning) {
        warnings.insert(std::move(id));
      } else {
        continue;
      }
      const auto repair = findings::parse_repair(json_fields::string_or(finding, "repair"));
      if (repair && *repair > facts.repair) {
        facts.repair = *repair;
      }
    }
  }
  facts.errors.assign(errors.begin(), errors.end());
  facts.warnings.assign(warnings.begin(), warnings.end());
  add(facts, "error findings", joined(facts.errors), true);
  add(facts, "warning findings", joined(facts.warnings), false);
}

// The device's model by ordinal, from the report's devices.
std::map<int, std::string> device_models(const json& report) {
  std::map<int, std::string> models;
  const auto& devices = member(report, "devices");
  if (devices.is_array()) {
    int position = 0;
    for (const auto& device : devices) {
      const auto ordinal = json_fields::integer(device, "ordinal").value_or(position);
      models[static_cast<int>(ordinal)] = display(device, "name", "unknown GPU");
      ++position;
    }
  }
  return models;
}

void add_devices(NodeFacts& facts, const json& report) {
  const auto& devices = member(report, "devices");
  std::map<std::string, int> models;
  std::set<std::string> links;
  if (devices.is_array()) {
    for (const auto& device : devices) {
      ++models[display(device, "name", "unknown GPU")];
      const auto& pcie = member(member(device, "nvml"), "pcie");
      if (pcie.is_object()) {
        links.insert("gen" + display(pcie, "gen_max", "?") + " x" + display(pcie, "width_max", "?"));
      }
    }
  }
  std::string gpus;
  for (const auto& [model, count] : models) {
    gpus += (gpus.empty() ? "" : ", ") + std::to_string(count) + " x " + model;
  }
  const bool verified = member(member(report, "verification"), "ran").is_boolean() &&
                        member(member(report, "verification"), "ran").get<bool>();
  add(facts, "GPUs", gpus.empty() ? (verified ? "none" : "not verified") : gpus, false);
  std::string link;
  for (const auto& value : links) {
    link += (link.empty() ? "" : ", ") + value;
  }
  add(facts, "PCIe link (max)", link, false);
}

void add_figures(NodeFacts& facts, const json& report) {
  const auto models = device_models(report);
  auto model_of = [&models](int device) {
    const auto it = models.find(device);
    return it != models.end() ? it->second : std::string("unknown GPU");
  };
  for (const auto& test : report::selftest_tests(report)) {
    const auto& primary = member(test, "primary");
    const auto& value = member(primary, "value");
    if (selftest::parse_test_status(json_fields::string_or(test, "status")) != selftest::TestStatus::pass ||
        !value.is_number()) {
      continue;
    }
    const auto device = static_cast<int>(json_fields::integer(test, "device").value_or(0));
    facts.figures.push_back(
        {model_of(device),
         json_fields::string_or(test, "key", "?") + "." + json_fields::string_or(primary, "name", "?"),
         json_fields::string_or(primary, "unit"), device, value.get<double>()});
  }
  const auto& score = member(member(member(report, "selftest"), "score"), "value");
  if (score.is_number()) {
    facts.figures.push_back({models.empty() ? std::string("unknown GPU") : models.begin()->second, "score",
                             "points", -1, score.get<double>()});
  }
}

// The members read above and in report_document.cpp's readers that they call.
constexpr std::array<std::string_view, 28> k_fields = {
    "host.node_name",
    "host.hostname",
    "summary.status", // identity, verdict
    "tool.version",   // the tool
    "verification.ran",
    "verification.steps.component",             // driver_version(),
    "verification.steps.result.driver_version", // cuda_driver_version()
    "components.name",
    "components.kind", // find_component()
    "components.selected.version",
    "components.selected.found_via", // chosen_answer()
    "components.loader.version",
    "components.loader.found_via",
    "components.loader.is_stub", // and the driver
    "findings.id",
    "findings.severity",
    "findings.repair", // add_findings()
    "devices.ordinal",
    "devices.name", // device_models()
    "devices.nvml.pcie.gen_max",
    "devices.nvml.pcie.width_max", // add_devices()
    "selftest.tests.status",
    "selftest.tests.device",
    "selftest.tests.key", // add_figures()
    "selftest.tests.primary.name",
    "selftest.tests.primary.unit",
    "selftest.tests.primary.value",
    "selftest.score.value",
};

} // namespace

std::span<const std::string_view> node_facts_fields() {
  return k_fields;
}

const std::vector<std::string_view>& fingerprint_components() {
  // The components whose drift breaks jobs, most decisive first (as `cudadiag diff` orders them).
  static const std::vector<std::string_view> names = {"cuda",      "nvml", "cudart", "nvrtc",
                                                      "nvJitLink", "nvvm", "cccl"};
  return names;
}

NodeFacts node_facts(const json& report, std::string source) {
  NodeFacts facts;
  facts.source = std::move(source);
  // The cluster's node name when the report has one (in a pod the hostname is the pod's name).
  facts.name = display(member(report, "host"), "node_name");
  if (facts.name.empty()) {
    facts.name = display(member(report, "host"), "hostname");
  }
  facts.named = !facts.name.empty();
  if (facts.name.empty()) {
    facts.name = facts.source;
  }
  facts.status = report::parse_summary_status(json_fields::string_or(member(report, "summary"), "status"));
  facts.tool_version = display(member(report, "tool"), "version");
  add_driver(facts, report);
  add_components(facts, report);
  add_findings(facts, report);
  add_devices(facts, report);
  add_figures(facts, report);
  return facts;
}

std::string fingerprint_key(const std::vector<FingerprintField>& fingerprint) {
  std::string key;
  for (const auto& field : fingerprint) {
    key += field.value;
    key += '\x1f'; // unit separator: never in a report value that matters here
  }
  return key;
}

} // namespace cudadiag::fleet
