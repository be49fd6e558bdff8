#pragma once
// Probes that load a CUDA library and ask it about itself. They run ONLY inside the isolated
// worker process (see worker/process.hpp): a library may crash in its constructor or hang in cuInit, and
// that must never take the report down. Each probe takes the absolute path of the file discovery
// selected, dlopens exactly that file, and returns a JSON object; unknown values are null, never
// guessed. Every object has at least:
//   {"library": path, "loaded": bool, "dlopen_error": str|null, "missing_symbols": [str]}
// A probe never throws and never prints (the worker owns stdout/stderr).

#include <nlohmann/json.hpp>

#include <string>

namespace cudadiag::verify {

// libcuda: cuGetProcAddress_v2 via dlsym, everything else through it. Adds
//   "init": {"code", "name", "description"} | null, "driver_version": int|null (13000 = 13.0),
//   "device_count": int|null, "devices": [device...] (see docs/schema), "is_stub": bool (error 34),
//   "get_proc_address": "cuGetProcAddress_v2" | "cuGetProcAddress" | null,
//   "get_proc_address_error" and "driver_version_error": {"code", "name", "description"} | null.
nlohmann::json probe_driver(const std::string& path);

// libnvidia-ml: adds "init", "driver_version" (str), "cuda_driver_version" (int),
//   "devices": [nvml device...].
nlohmann::json probe_nvml(const std::string& path);

// libnvrtc: adds "version" ("13.0"), "supported_archs" ([int]), "builtins":
//   {"expected": file name, "path": str|null, "loadable": bool, "error": str|null}.
nlohmann::json probe_nvrtc(const std::string& path);

// libnvJitLink: adds "version" ("13.0" | null), "version_api" ("nvJitLinkVersion" | "versioned_symbols" | null).
nlohmann::json probe_nvjitlink(const std::string& path);

// libcudart: adds "runtime_version" (int), "driver_version": int|null, "driver_version_error": int|null.
nlohmann::json probe_cudart(const std::string& path);

} // namespace cudadiag::verify
