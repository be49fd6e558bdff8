#pragma once
// What cuda-pathfinder (1.9 and later, load_dl_linux._preload_nvrtc_builtins) does for NVRTC's
// builtins once it has loaded NVRTC by an absolute path: it loads libnvrtc-builtins.so.MAJOR.MINOR
// from the directory of NVRTC's real file, so that NVRTC's own search for its builtins by name finds
// them already loaded. Whether it does, by how NVRTC was found (cuda-pathfinder's found_via):
//   conda:          nothing (the package's RPATH finds the sibling);
//   site-packages:  the 13.0 sibling, for a CUDA 13 wheel only (the 13.0.48 wheel lacked RUNPATH);
//   system search:  nothing (the loader found NVRTC by name, so it searches NVRTC's directory);
//   any other find (CUDA_PATH/CUDA_HOME, the toolkit root): MAJOR.MINOR from the real file's name
//                   (libnvrtc.so.13.0.88 -> 13.0); nothing when the name carries none, as a toolkit
//                   copied from a wheel's libnvrtc.so.13 (cuda-pathfinder warns then).
// The sibling it loads, when that file exists; nullopt otherwise.

#include "discovery/discovery.hpp"
#include "probes/candidate.hpp"

#include <optional>
#include <string>

namespace cudadiag::verify {

std::optional<std::string> pathfinder_builtins_preload(const std::string& nvrtc_path,
                                                       probes::PathfinderStep found_via);

// The builtins CUDA Python loads after loading the NVRTC at `nvrtc_path`, when that NVRTC is its
// answer in `discovery` (the selected copy, by the path it was found through); nullopt otherwise
// (another copy, or the native loader's answer, which is loaded by name).
std::optional<std::string> cuda_python_builtins_preload(const discovery::DiscoveryResult& discovery,
                                                        const std::string& nvrtc_path);

} // namespace cudadiag::verify
