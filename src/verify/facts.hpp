#pragma once
// What each verification probe found out, as typed values. The probes (probes.hpp) fill these in
// the worker; facts_codec.hpp carries them over the worker protocol and renders them as the
// report's "verification.steps[].result" and "devices" (docs/schema/report.schema.json). Unknown
// values are nullopt (null in JSON), never guessed. Rules read the fields; nothing reads JSON keys.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace cudadiag::verify {

// What every probe says about loading its library.
struct LoadFacts {
  std::string library;                      // the path the probe dlopened
  bool loaded = false;                      // dlopen succeeded
  std::optional<std::string> dlopen_error;  // dlerror()'s text when it did not
  std::vector<std::string> missing_symbols; // entry points the library lacks
  std::optional<std::string> probe_error;   // the probe itself failed (an exception: out of memory)
};

// --- libcuda (probe_driver) ---

// A CUresult with the driver's own name and description (else cudadiag's table's, else nullopt).
struct CuResultInfo {
  int code = 0;
  std::optional<std::string> name;
  std::optional<std::string> description;
};

struct DriverDevice {
  int ordinal = 0;
  std::optional<std::string> error; // "cuDeviceGet failed": nothing else was asked
  std::optional<std::string> name;
  std::optional<std::string> uuid;               // "GPU-xxxxxxxx-..."
  std::optional<std::string> pci_bus_id;         // "0000:19:00.0"
  std::optional<std::string> compute_capability; // "9.0"
  std::optional<int> sm_count;
  std::optional<std::uint64_t> total_memory_bytes;
  std::optional<int> memory_clock_khz;
  std::optional<int> memory_bus_width_bits;
  std::optional<double> peak_bandwidth_gbps; // 2 x memory clock x bus width, GB/s, one decimal
  std::optional<int> l2_cache_bytes;
  std::optional<int> compute_mode;
  std::map<std::string, std::optional<bool>> attributes; // "unified_addressing", "ecc_enabled", ...
  std::vector<std::string> errors;                       // "cuDeviceGetName: NAME (code)" per failed query
};

struct DriverFacts : LoadFacts {
  std::optional<std::string> get_proc_address; // "cuGetProcAddress_v2" | "cuGetProcAddress"
  std::optional<CuResultInfo> get_proc_address_error;
  std::optional<CuResultInfo> init;  // cuInit(0); nullopt when it was not reached
  std::optional<int> driver_version; // cuDriverGetVersion: 13000 = 13.0
  std::optional<CuResultInfo> driver_version_error;
  std::optional<int> device_count;
  std::vector<DriverDevice> devices;
  bool is_stub = false;                      // CUDA_ERROR_STUB_LIBRARY (34) from any call
  std::optional<std::string> internal_error; // the probe failed; only the LoadFacts are meaningful
};

// --- libnvidia-ml (probe_nvml) ---

struct NvmlReturnInfo {
  unsigned code = 0;
  std::optional<std::string> name;        // nvml.h's enumerator name
  std::optional<std::string> description; // nvmlErrorString
};

struct NvmlPcie {
  std::optional<unsigned> gen_current, gen_max, width_current, width_max;
};
struct NvmlEcc {
  std::optional<bool> current, pending;
};
struct NvmlRemappedRows {
  unsigned correctable = 0, uncorrectable = 0;
  bool pending = false, failed = false;
};
struct NvmlMigMode {
  bool current = false, pending = false;
};
struct NvmlClocksEventReasons {
  std::uint64_t mask = 0;
  std::vector<std::string> active; // the names of the set bits ("sw_power_cap", ...)
};

// A field NVML could not answer (NOT_SUPPORTED under VMs, NO_PERMISSION, ...) is nullopt and its
// call is named in `errors` (function name -> NVML error name).
struct NvmlDevice {
  unsigned index = 0;
  std::optional<std::string> name, uuid, pci_bus_id;
  std::optional<unsigned> pci_device_id;
  std::optional<NvmlPcie> pcie; // nullopt (like everything below) when the handle could not be had
  std::optional<NvmlEcc> ecc;
  std::optional<std::uint64_t> ecc_uncorrected_aggregate;
  std::optional<NvmlRemappedRows> remapped_rows;
  std::optional<bool> persistence_mode;
  std::optional<NvmlMigMode> mig_mode;
  std::optional<NvmlClocksEventReasons> clocks_event_reasons;
  std::map<std::string, std::string> errors;
};

// Everything after LoadFacts is meaningful (and in the JSON) only when `loaded`.
struct NvmlFacts : LoadFacts {
  std::optional<NvmlReturnInfo> init;        // nvmlInit_v2
  std::optional<std::string> driver_version; // "580.95.05"
  std::optional<std::string> nvml_version;
  std::optional<int> cuda_driver_version;             // 13000 = 13.0
  std::optional<std::string> cuda_driver_version_api; // which of the two entry points answered
  std::optional<unsigned> device_count;
  std::vector<NvmlDevice> devices;
  std::map<std::string, std::string> errors; // system calls that failed: function -> NVML error name
};

// --- libnvrtc (probe_nvrtc) ---

// nvrtcCreateProgram + nvrtcCompileProgram of an empty kernel (proves the builtins load).
struct NvrtcCompileCheck {
  bool ok = false;
  std::string step; // the call that decided: "nvrtcCreateProgram" | "nvrtcCompileProgram"
  int code = 0;
  std::optional<std::string> name; // nvrtcGetErrorString
  std::string log;                 // the program log, cut to 2000 characters
};

// libnvrtc-builtins.so.MAJOR.MINOR next to the real file of libnvrtc.
struct NvrtcBuiltins {
  std::string expected;            // the file name
  std::optional<std::string> path; // where it is, when it exists
  bool loadable = false;
  std::optional<std::string> error;
  std::optional<std::string> used; // the copy the compile check made NVRTC load
};

struct NvrtcFacts : LoadFacts {
  std::optional<std::string> version; // "13.0"
  std::optional<int> version_error;   // nvrtcVersion's result when it failed
  std::optional<std::vector<int>> supported_archs;
  std::optional<NvrtcBuiltins> builtins;          // nullopt without a version
  std::optional<NvrtcCompileCheck> compile_check; // nullopt when an entry point is missing
};

// --- libnvJitLink (probe_nvjitlink) ---

struct NvJitLinkCreateCheck {
  bool ok = false;
  std::vector<std::string> options;
  int code = 0;
  std::optional<std::string> name; // nvJitLinkResult's enumerator name
};

struct NvJitLinkFacts : LoadFacts {
  std::optional<std::string> version;            // "13.0"
  std::optional<int> version_error;              // nvJitLinkVersion's result when it failed
  std::optional<std::string> version_api;        // "nvJitLinkVersion" | "versioned_symbols"
  std::optional<std::string> versioned_symbol;   // "__nvJitLinkCreate_12_4" (12.0-12.2)
  std::vector<std::string> entry_point_versions; // the header versions it accepts ("12.0", ...)
  std::optional<NvJitLinkCreateCheck> create_check;
};

// --- libcudart (probe_cudart) ---

// A cudaError_t with cudaGetErrorName's text (nullopt when it could not say).
struct CudartError {
  int code = 0;
  std::optional<std::string> name;
};

struct CudartFacts : LoadFacts {
  std::optional<int> runtime_version; // cudaRuntimeGetVersion: 13000 = 13.0
  std::optional<CudartError> runtime_version_error;
  std::optional<int> driver_version; // cudaDriverGetVersion (0: no driver found)
  std::optional<CudartError> driver_version_error;
};

// The answer of one probe; monostate when there is none (the worker did not finish).
using ProbeFacts =
    std::variant<std::monostate, DriverFacts, NvmlFacts, NvrtcFacts, NvJitLinkFacts, CudartFacts>;

// The LoadFacts of an answer, or nullptr for monostate.
const LoadFacts* load_facts(const ProbeFacts& facts);

// A GPU of the report: the driver's view merged with NVML's (by UUID). A GPU NVML sees but the
// driver API does not (hidden by CUDA_VISIBLE_DEVICES, or cuInit failed) has no `driver`.
struct Device {
  std::optional<DriverDevice> driver;
  std::optional<NvmlDevice> nvml;
};

} // namespace cudadiag::verify
