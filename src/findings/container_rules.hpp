#pragma once
// What a container started from the system under --root/--image meets on a GPU host, decided from
// the image's files and environment and a few facts of the host, the way the NVIDIA Container
// Toolkit decides them when it creates the container (docs/reference: container-images.md):
//   - NVIDIA_REQUIRE_* (and a legacy image's CUDA_VERSION) against the host's driver and CUDA
//     version, as libnvidia-container's dsl.c does (spaces OR, commas AND; checked by the legacy
//     hook only): container.requirement_unmet;
//   - the forward-compatibility libcuda in /usr/local/cuda/compat: used when the toolkit (1.19 and
//     later) would use it (its .note.cuda.fwd_compatibility lists the host branch and it is newer;
//     without the note, a newer major), or forced by LD_LIBRARY_PATH or an ld.so.conf.d entry:
//     driver.forward_compat, or driver.init_failed predicted (803 for an older copy, 804 for a GPU
//     brand its note does not list);
//   - driver libraries baked into the image (libcuda.so.<version>, libnvidia-ml.so.<version> outside
//     compat/) of another version than the host's that would win: driver.init_failed (803, NVML's
//     "Driver/library version mismatch");
//   - NVIDIA_DRIVER_CAPABILITIES without utility (no nvidia-smi, no NVML) or compute (no libcuda) in
//     the legacy mode: container.capability_missing.
// Reads the root's files: call inside the run's RootScope.

#include "core/environment.hpp"
#include "findings/findings.hpp"
#include "image/image.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudadiag::findings {

// The GPU host a container is predicted for: --assume-driver (and --assume-gpu), else the machine
// running cudadiag (its /proc/driver/nvidia/version).
struct TargetHost {
  std::string driver; // "570.86.10"; "" when unknown
  std::string source; // "--assume-driver" | "/proc/driver/nvidia/version"; "" when unknown
  std::string brand;  // NVML's brand, lower case ("tesla", "geforce", "nvidia"); "" when unknown
  std::string arch;   // compute capability ("9.0"); "" when unknown
};

// The CUDA version a driver of that version reports (cuDriverGetVersion), from its branch: "12.8"
// for 570.x; "" for a branch before 525 or a malformed version. A branch after the newest one known
// gets the newest known CUDA version (an underestimate).
std::string cuda_version_of_driver(const std::string& driver);

// Whether `requirement` (one NVIDIA_REQUIRE_* value) holds on `host`; the condition the toolkit
// would name when it does not ("cuda>=12.9"), nullopt when it holds. A property the host does not
// say (arch, brand, an unknown driver) is satisfied, as libnvidia-container treats an unknown value.
std::optional<std::string> unmet_requirement(const std::string& requirement, const TargetHost& host);

// The findings above for the system in the installed root, whose environment is `env`; `image` names
// the layers (nullptr for a plain --root).
std::vector<Finding> evaluate_container(const Environment& env, const image::Image* image,
                                        const TargetHost& host);

} // namespace cudadiag::findings
