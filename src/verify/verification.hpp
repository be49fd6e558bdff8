#pragma once
// Verification: load what discovery selected, in isolated worker processes, and ask each library
// for its own view (versions through their APIs, the driver's cuInit result and devices, NVML's
// health data). The parent never loads a CUDA library itself.

#include "core/environment.hpp"
#include "discovery/discovery.hpp"
#include "verify/facts.hpp"
#include "worker/process.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace cudadiag::verify {

struct VerifyOptions {
  bool enabled = false;                          // off: no code from the found libraries runs (--no-load)
  std::string executable;                        // the cudadiag binary to re-execute as the worker
  std::chrono::milliseconds step_timeout{15000}; // per library
};

// One loaded library: how its worker ended, and the probe's answer (decoded from the worker's
// result; monostate unless status is "ok").
struct LibraryStep : worker::StepOutcome {
  ProbeFacts facts;
};

struct Verification {
  bool ran = false;
  std::string skipped_reason;     // when !ran: why ("--no-load", "nothing to load")
  std::vector<LibraryStep> steps; // one per loaded library, in plan order
  std::vector<Device> devices;    // driver devices merged with NVML's by UUID

  // The outcome of the step for a component (by catalog name), or nullptr.
  [[nodiscard]] const LibraryStep* step(std::string_view component) const;
  // The answers of the steps that completed, by probe; nullptr when that step did not.
  [[nodiscard]] const DriverFacts* driver() const;       // "cuda"
  [[nodiscard]] const NvmlFacts* nvml() const;           // "nvml"
  [[nodiscard]] const NvrtcFacts* nvrtc() const;         // "nvrtc"
  [[nodiscard]] const NvJitLinkFacts* nvjitlink() const; // "nvJitLink"
  [[nodiscard]] const CudartFacts* cudart() const;       // "cudart"
};

// The libraries to load, in `discovery`'s (catalog) order: every component whose catalog row has
// `.verify`, at the answer the row names first (else the other one).
std::vector<worker::WorkerStep> plan_steps(const discovery::DiscoveryResult& discovery);

Verification verify(const discovery::DiscoveryResult& discovery, const VerifyOptions& options,
                    const Environment& env);

// Merges the driver's device list with NVML's (matched by UUID) into the report's devices.
std::vector<Device> merge_devices(const DriverFacts* driver, const NvmlFacts* nvml);

} // namespace cudadiag::verify
