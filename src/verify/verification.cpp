#include "verify/verification.hpp"

#include "verify/facts_codec.hpp"

namespace cudadiag::verify {

const LibraryStep* Verification::step(std::string_view component) const {
  for (const auto& outcome : steps) {
    if (outcome.id == component) {
      return &outcome;
    }
  }
  return nullptr;
}

namespace {

// The answer of type Facts of the step for `component`, when that step completed.
template <class Facts> const Facts* answer(const Verification& verification, std::string_view component) {
  const auto* step = verification.step(component);
  return step != nullptr && step->status == "ok" ? std::get_if<Facts>(&step->facts) : nullptr;
}

} // namespace

const DriverFacts* Verification::driver() const {
  return answer<DriverFacts>(*this, "cuda");
}
const NvmlFacts* Verification::nvml() const {
  return answer<NvmlFacts>(*this, "nvml");
}
const NvrtcFacts* Verification::nvrtc() const {
  return answer<NvrtcFacts>(*this, "nvrtc");
}
const NvJitLinkFacts* Verification::nvjitlink() const {
  return answer<NvJitLinkFacts>(*this, "nvJitLink");
}
const CudartFacts* Verification::cudart() const {
  return answer<CudartFacts>(*this, "cudart");
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
      steps.push_back(worker::WorkerStep{
          std::string(component.spec->name), std::string(verify_with->probe), choice->via.path, {}, -1});
    }
  }
  return steps;
}

std::vector<Device> merge_devices(const DriverFacts* driver, const NvmlFacts* nvml) {
  std::vector<Device> devices;
  if (driver != nullptr) {
    for (const auto& device : driver->devices) {
      devices.push_back(Device{device, std::nullopt});
    }
  }
  if (nvml == nullptr) {
    return devices;
  }
  for (const auto& health : nvml->devices) {
    bool matched = false;
    for (auto& device : devices) {
      const auto uuid = device.driver ? device.driver->uuid.value_or("") : std::string();
      if (!uuid.empty() && uuid == health.uuid.value_or("")) {
        device.nvml = health;
        matched = true;
      }
    }
    if (!matched) {
      // A GPU NVML sees but the driver API does not (hidden by CUDA_VISIBLE_DEVICES, or cuInit failed).
      devices.push_back(Device{std::nullopt, health});
    }
  }
  return devices;
}

Verification verify(const discovery::DiscoveryResult& discovery, const VerifyOptions& options,
                    const Environment& env) {
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
      step.facts = decode(step.kind, step.result);
    }
    verification.steps.push_back(std::move(step));
  }
  verification.devices = merge_devices(verification.driver(), verification.nvml());
  return verification;
}

} // namespace cudadiag::verify
