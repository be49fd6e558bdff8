#include "verify/verification.hpp"
#include "core/json_fields.hpp"

namespace cudadiag::verify {

const LibraryStep* Verification::step(std::string_view component) const {
  for (const auto& outcome : steps) {
    if (outcome.id == component) {
      return &outcome;
    }
  }
  return nullptr;
}

const nlohmann::json* Verification::result(std::string_view component) const {
  const auto* outcome = step(component);
  if (outcome == nullptr || outcome->status != "ok" || !outcome->facts.is_object()) {
    return nullptr;
  }
  return &outcome->facts;
}

std::vector<worker::WorkerStep> plan_steps(const discovery::DiscoveryResult& discovery) {
  std::vector<worker::WorkerStep> steps;
  for (const auto& component : discovery.components) {
    const auto& verify_with = component.spec->verify;
    if (!verify_with) {
      continue;
    }
    const bool python_first = verify_with->first == probes::LoadFirst::python;
    const auto& first = python_first ? component.selected : component.loader;
    const auto& second = python_first ? component.loader : component.selected;
    const auto& choice = first ? first : second;
    if (choice) {
      steps.push_back(worker::WorkerStep{std::string(component.spec->name), std::string(verify_with->probe), choice->via.path, {}, -1});
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
    std::string verified;
    for (const auto& spec : probes::catalog()) {
      if (spec.verify) {
        verified += (verified.empty() ? "" : ", ") + std::string(spec.name);
      }
    }
    verification.skipped_reason = "nothing to load: none of " + verified + " was found";
    return verification;
  }
  worker::WorkerOptions worker;
  worker.executable = options.executable;
  worker.step_timeout = options.step_timeout;
  verification.ran = true;
  for (auto& outcome : worker::run_steps(steps, worker, env)) {
    LibraryStep step;
    static_cast<worker::StepOutcome&>(step) = std::move(outcome);
    if (step.status == "ok") {
      step.facts = nlohmann::json::parse(step.result, nullptr, false);
    }
    verification.steps.push_back(std::move(step));
  }
  verification.devices = merge_devices(verification.result("cuda"), verification.result("nvml"));
  return verification;
}

} // namespace cudadiag::verify
