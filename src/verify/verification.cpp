#include "verify/verification.hpp"
#include "core/json_fields.hpp"

namespace cudadiag::verify {

const StepOutcome* Verification::step(std::string_view component) const {
  for (const auto& outcome : steps) {
    if (outcome.id == component) {
      return &outcome;
    }
  }
  return nullptr;
}

const nlohmann::json* Verification::result(std::string_view component) const {
  const auto* outcome = step(component);
  if (outcome == nullptr || outcome->status != "ok" || !outcome->result.is_object()) {
    return nullptr;
  }
  return &outcome->result;
}

namespace {

struct PlannedComponent {
  std::string_view name;
  std::string_view kind;      // the worker's probe kind
  bool prefer_python;         // the CUDA Python selection first, else the native loader's
};

// The core set every CUDA program depends on; the math libraries are not loaded.
constexpr PlannedComponent k_plan[] = {
    {"cuda", "driver", false},   {"nvml", "nvml", false},           {"cudart", "cudart", true},
    {"nvrtc", "nvrtc", true},    {"nvJitLink", "nvjitlink", true},
};

const discovery::ComponentResult* library(const discovery::DiscoveryResult& discovery, std::string_view name) {
  for (const auto& component : discovery.components) {
    if (component.spec->name == name && component.spec->kind == probes::ComponentKind::dynamic_lib) {
      return &component;
    }
  }
  return nullptr;
}

} // namespace

std::vector<WorkerStep> plan_steps(const discovery::DiscoveryResult& discovery) {
  std::vector<WorkerStep> steps;
  for (const auto& planned : k_plan) {
    const auto* component = library(discovery, planned.name);
    if (component == nullptr) {
      continue;
    }
    const auto& first = planned.prefer_python ? component->selected : component->loader;
    const auto& second = planned.prefer_python ? component->loader : component->selected;
    const auto& choice = first ? first : second;
    if (choice) {
      steps.push_back(WorkerStep{std::string(planned.name), std::string(planned.kind), choice->via.path, {}, -1});
    }
  }
  return steps;
}

nlohmann::json merge_devices(const nlohmann::json* driver, const nlohmann::json* nvml) {
  nlohmann::json devices = nlohmann::json::array();
  if (driver != nullptr && driver->contains("devices") && (*driver)["devices"].is_array()) {
    devices = (*driver)["devices"];
  }
  if (nvml == nullptr || !nvml->contains("devices") || !(*nvml)["devices"].is_array()) {
    return devices;
  }
  for (const auto& health : (*nvml)["devices"]) {
    bool matched = false;
    for (auto& device : devices) {
      const auto uuid = json_fields::string_or(device, "uuid");
      if (!uuid.empty() && uuid == json_fields::string_or(health, "uuid")) {
        device["nvml"] = health;
        matched = true;
      }
    }
    if (!matched) {
      // A GPU NVML sees but the driver API does not (hidden by CUDA_VISIBLE_DEVICES, or cuInit failed).
      devices.push_back({{"ordinal", nullptr}, {"name", json_fields::string_or(health, "name")}, {"uuid", json_fields::string_or(health, "uuid")},
                         {"visible_to_cuda", false}, {"nvml", health}});
    }
  }
  return devices;
}

Verification verify(const discovery::DiscoveryResult& discovery, const VerifyOptions& options, const Environment& env) {
  Verification verification;
  if (!options.enabled) {
    verification.skipped_reason = "--no-load: files were inspected only; no code from them ran";
    return verification;
  }
  const auto steps = plan_steps(discovery);
  if (steps.empty()) {
    verification.skipped_reason = "nothing to load: none of cuda, nvml, cudart, nvrtc, nvJitLink was found";
    return verification;
  }
  WorkerOptions worker;
  worker.executable = options.executable;
  worker.step_timeout = options.step_timeout;
  verification.ran = true;
  verification.steps = run_steps(steps, worker, env);
  verification.devices = merge_devices(verification.result("cuda"), verification.result("nvml"));
  return verification;
}

} // namespace cudadiag::verify
