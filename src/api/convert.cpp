#include "api/convert.hpp"

#include <algorithm>

namespace cudadiag::api {
namespace {

Severity to_public(findings::Severity severity) {
  switch (severity) {
  case findings::Severity::info: return Severity::info;
  case findings::Severity::warning: return Severity::warning;
  case findings::Severity::error: return Severity::error;
  }
  return Severity::error;
}

Repair to_public(findings::Repair repair) {
  switch (repair) {
  case findings::Repair::none: return Repair::none;
  case findings::Repair::fix_environment: return Repair::fix_environment;
  case findings::Repair::reinstall_package: return Repair::reinstall_package;
  case findings::Repair::restart_process: return Repair::restart_process;
  case findings::Repair::reset_gpu: return Repair::reset_gpu;
  case findings::Repair::reboot: return Repair::reboot;
  case findings::Repair::hardware_inspection: return Repair::hardware_inspection;
  }
  return Repair::none;
}

std::optional<Location> to_public(const discovery::ComponentResult& component,
                                  const std::optional<discovery::Choice>& choice) {
  if (!choice || choice->candidate >= component.candidates.size()) {
    return std::nullopt;
  }
  const auto& candidate = component.candidates[choice->candidate];
  Location out;
  out.path = choice->via.path; // the sighting the program goes through, as the JSON reports it
  out.realpath = candidate.realpath.value_or("");
  out.found_via = choice->via.found_via;
  out.fails = choice->fails.value_or("");
  out.outcome = std::string(probes::to_string(choice->outcome));
  if (candidate.version) {
    out.version = candidate.version->version;
    out.version_source = std::string(versions::to_string(candidate.version->source));
  }
  return out;
}

Component to_public(const discovery::ComponentResult& result) {
  Component out;
  out.name = std::string(result.spec->name);
  out.kind = std::string(probes::to_string(result.spec->kind));
  out.status = std::string(discovery::to_string(result.status));
  out.selected = to_public(result, result.selected);
  out.loader = to_public(result, result.loader);
  out.candidates = result.candidates.size();
  out.python_failed = to_public(result, result.python_failed);
  return out;
}

Device to_public_device(const verify::Device& device) {
  Device out;
  if (device.driver) {
    const auto& driver = *device.driver;
    out.ordinal = driver.ordinal;
    out.name = driver.name.value_or("");
    out.uuid = driver.uuid.value_or("");
    out.pci_bus_id = driver.pci_bus_id.value_or("");
    out.compute_capability = driver.compute_capability.value_or("");
    out.sm_count = driver.sm_count;
    out.total_memory_bytes = driver.total_memory_bytes;
    out.peak_bandwidth_gbps = driver.peak_bandwidth_gbps;
  } else if (device.nvml) { // seen by NVML only
    out.name = device.nvml->name.value_or("");
    out.uuid = device.nvml->uuid.value_or("");
  }
  return out;
}

TestResult to_public(const selftest::TestResult& test) {
  TestResult out;
  out.key = test.key;
  out.device = test.device;
  out.status = std::string(selftest::to_string(test.status));
  out.reason = test.reason;
  out.wall_ms = test.wall_ms;
  if (test.primary) {
    out.primary = Metric{test.primary->name, test.primary->value, test.primary->unit};
  }
  return out;
}

} // namespace

Verdict verdict_of(const std::vector<findings::Finding>& found) {
  auto worst = Verdict::ok;
  for (const auto& finding : found) {
    if (finding.severity == findings::Severity::error) {
      return Verdict::error;
    }
    if (finding.severity == findings::Severity::warning) {
      worst = Verdict::warning;
    }
  }
  return worst;
}

Finding to_public(const findings::Finding& finding) {
  return Finding{finding.id,     to_public(finding.severity), finding.message,
                 finding.remedy, finding.components,          to_public(finding.repair)};
}

LoadedLibrary to_public(const inspect::LoadedComponent& component) {
  LoadedLibrary out;
  out.name = component.name;
  out.variant = component.variant;
  out.path = component.path;
  out.realpath = component.realpath.value_or("");
  out.version = component.version ? component.version->version : "";
  out.deleted = component.deleted;
  out.is_stub = component.is_stub;
  return out;
}

Report to_public(std::shared_ptr<const detail::ReportData> data) {
  Report out;
  const auto& report = data->report;
  out.verdict = verdict_of(report.findings);
  out.exit_code = report.summary.exit_code;
  std::transform(report.findings.begin(), report.findings.end(), std::back_inserter(out.findings),
                 [](const auto& finding) { return to_public(finding); });
  std::transform(report.discovery.components.begin(), report.discovery.components.end(),
                 std::back_inserter(out.components),
                 [](const auto& component) { return to_public(component); });
  out.verified = report.verification.ran;
  out.verification_skipped = report.verification.skipped_reason;
  for (const auto& device : report.verification.devices) {
    out.devices.push_back(to_public_device(device));
  }
  const auto& selftest = report.selftest;
  std::transform(selftest.tests.begin(), selftest.tests.end(), std::back_inserter(out.tests),
                 [](const auto& test) { return to_public(test); });
  out.score = selftest.score.value;
  detail::Access::attach(out, std::move(data));
  return out;
}

ProcessInspection to_public(std::shared_ptr<const detail::InspectionData> data) {
  ProcessInspection out;
  const auto& inspection = data->inspection;
  out.pid = inspection.pid;
  out.verdict = verdict_of(inspection.findings);
  std::transform(inspection.components.begin(), inspection.components.end(),
                 std::back_inserter(out.libraries),
                 [](const auto& component) { return to_public(component); });
  std::transform(inspection.findings.begin(), inspection.findings.end(), std::back_inserter(out.findings),
                 [](const auto& finding) { return to_public(finding); });
  detail::Access::attach(out, std::move(data));
  return out;
}

} // namespace cudadiag::api
