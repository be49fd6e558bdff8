#include "verify/verification.hpp"

#include "core/bounded_json.hpp"
#include "verify/facts_codec.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string_view>

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
  return step != nullptr && step->status == worker::StepStatus::ok ? std::get_if<Facts>(&step->facts)
                                                                   : nullptr;
}

// The probes whose answers are facts of the library's files alone (no driver, no GPU): the ones the
// cache may keep.
bool file_facts(std::string_view kind) {
  return kind == "nvrtc" || kind == "nvjitlink";
}

// The files a probe's answer says the library loaded besides itself (NVRTC's builtins).
std::vector<std::string> files_loaded(const ProbeFacts& facts) {
  std::vector<std::string> files;
  if (const auto* nvrtc = std::get_if<NvrtcFacts>(&facts); nvrtc != nullptr && nvrtc->builtins) {
    for (const auto* path : {&nvrtc->builtins->path, &nvrtc->builtins->used}) {
      if (*path) {
        files.push_back(**path);
      }
    }
  }
  return files;
}

std::string encode_outcome(const worker::StepOutcome& step) {
  const nlohmann::json out = {
      {"id", step.id},
      {"kind", step.kind},
      {"path", step.path},
      {"status", worker::to_string(step.status)},
      {"exit_code", step.exit_code ? nlohmann::json(*step.exit_code) : nlohmann::json()},
      {"detail", step.detail},
      {"stderr_tail", step.stderr_tail},
      {"last_phase", step.last_phase},
      {"result", step.result},
      {"records", step.records},
      {"elapsed_ms", step.elapsed_ms}};
  return out.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// nullopt when `text` is not an outcome encode_outcome wrote.
std::optional<worker::StepOutcome> decode_outcome(std::string_view text) {
  const auto parsed = bounded_json::parse(text);
  const auto* in = std::get_if<nlohmann::json>(&parsed);
  if (in == nullptr || !in->is_object()) {
    return std::nullopt;
  }
  worker::StepOutcome step;
  std::string status;
  for (auto [key, field] : {std::pair{"id", &step.id},
                            {"kind", &step.kind},
                            {"path", &step.path},
                            {"status", &status},
                            {"detail", &step.detail},
                            {"stderr_tail", &step.stderr_tail},
                            {"last_phase", &step.last_phase},
                            {"result", &step.result}}) {
    const auto found = in->find(key);
    if (found == in->end() || !found->is_string()) {
      return std::nullopt;
    }
    *field = found->get<std::string>();
  }
  if (const auto parsed_status = worker::parse_step_status(status)) {
    step.status = *parsed_status;
  } else {
    return std::nullopt;
  }
  const auto records = in->find("records");
  const auto elapsed = in->find("elapsed_ms");
  const auto exit_code = in->find("exit_code");
  if (records == in->end() || !records->is_array() || elapsed == in->end() || !elapsed->is_number() ||
      exit_code == in->end() || !(exit_code->is_null() || exit_code->is_number_integer())) {
    return std::nullopt;
  }
  for (const auto& record : *records) {
    if (!record.is_string()) {
      return std::nullopt;
    }
    step.records.push_back(record.get<std::string>());
  }
  step.elapsed_ms = elapsed->get<double>();
  if (exit_code->is_number_integer()) {
    step.exit_code = exit_code->get<int>();
  }
  return step;
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
  std::vector<std::optional<LibraryStep>> known(steps.size());
  std::vector<worker::WorkerStep> to_run;
  std::vector<std::size_t> run_index;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    if (options.cache != nullptr && file_facts(steps[i].kind)) {
      if (auto hit = options.cache->find_fact(steps[i].kind, steps[i].path)) {
        if (auto outcome = decode_outcome(hit->first); outcome && outcome->status == worker::StepStatus::ok) {
          LibraryStep step;
          static_cast<worker::StepOutcome&>(step) = std::move(*outcome);
          step.facts = decode(step.kind, step.result);
          step.proven_at = hit->second;
          known[i] = std::move(step);
          continue;
        }
      }
    }
    to_run.push_back(steps[i]);
    run_index.push_back(i);
  }
  auto outcomes =
      to_run.empty() ? std::vector<worker::StepOutcome>{} : worker::run_steps(to_run, worker, env);
  for (std::size_t r = 0; r < outcomes.size() && r < run_index.size(); ++r) {
    LibraryStep step;
    static_cast<worker::StepOutcome&>(step) = std::move(outcomes[r]);
    if (step.status == worker::StepStatus::ok) {
      step.facts = decode(step.kind, step.result);
      if (options.cache != nullptr && file_facts(step.kind)) {
        options.cache->store_fact(step.kind, step.path, files_loaded(step.facts), encode_outcome(step));
      }
    }
    known[run_index[r]] = std::move(step);
  }
  for (auto& step : known) {
    if (step) {
      verification.steps.push_back(std::move(*step));
    }
  }
  verification.devices = merge_devices(verification.driver(), verification.nvml());
  return verification;
}

} // namespace cudadiag::verify
