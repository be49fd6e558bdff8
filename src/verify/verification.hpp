#pragma once
// Verification: load what discovery selected, in isolated worker processes, and ask each library
// for its own view (versions through their APIs, the driver's cuInit result and devices, NVML's
// health data). The parent never loads a CUDA library itself.

#include "core/environment.hpp"
#include "discovery/discovery.hpp"
#include "linkage/load_cache.hpp"
#include "verify/facts.hpp"
#include "worker/process.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cudadiag::verify {

struct VerifyOptions {
  bool enabled = false;                          // off: no code from the found libraries runs (--no-load)
  std::string executable;                        // the cudadiag binary to re-execute as the worker
  std::chrono::milliseconds step_timeout{15000}; // per library
  // The per-user cache (linkage/load_cache.hpp), or null: NVRTC's and nvJitLink's answers (facts of
  // their files: versions, architectures, the builtins, the compile and create checks) are taken
  // from it while the files are unchanged, and stored when their worker ends normally. The driver's,
  // NVML's and cudart's (which asks the driver) are always asked live. Saved by the caller.
  linkage::LoadCache* cache = nullptr;
};

// One loaded library: how its worker ended, and the probe's answer (decoded from the worker's
// result; monostate unless status is "ok").
struct LibraryStep : worker::StepOutcome {
  ProbeFacts facts;
  // Set when the outcome came from the cache instead of a worker of this run: when that worker ran
  // (Unix seconds); elapsed_ms is then that worker's time.
  std::optional<std::int64_t> proven_at;
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
