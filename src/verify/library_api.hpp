#pragma once
// The slices of NVRTC (nvrtc.h), nvJitLink (nvJitLink.h) and the CUDA runtime
// (cuda_runtime_api.h) that the library probes call, mirrored from the CUDA 13.0 headers so that
// nothing here needs a toolkit at build time. The tests check each prototype against the real
// header with abi_compatible when the headers are available.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cudadiag::verify {

namespace nvrtc {
using Result = int;                                     // nvrtcResult
struct ProgramOpaque;                                   // struct _nvrtcProgram
using Program = ProgramOpaque*;                         // nvrtcProgram
constexpr Result k_success = 0;                         // NVRTC_SUCCESS
constexpr Result k_error_compilation = 6;               // NVRTC_ERROR_COMPILATION
constexpr Result k_error_builtin_operation_failure = 7; // NVRTC_ERROR_BUILTIN_OPERATION_FAILURE

using GetErrorStringFn = const char* (*)(Result); // nvrtcGetErrorString
using VersionFn = Result (*)(int*, int*);         // nvrtcVersion
using GetNumSupportedArchsFn = Result (*)(int*);  // nvrtcGetNumSupportedArchs
using GetSupportedArchsFn = Result (*)(int*);     // nvrtcGetSupportedArchs
using CreateProgramFn = Result (*)(Program*, const char*, const char*, int, const char* const*,
                                   const char* const*);                // nvrtcCreateProgram
using CompileProgramFn = Result (*)(Program, int, const char* const*); // nvrtcCompileProgram
using GetProgramLogSizeFn = Result (*)(Program, std::size_t*);         // nvrtcGetProgramLogSize
using GetProgramLogFn = Result (*)(Program, char*);                    // nvrtcGetProgramLog
using DestroyProgramFn = Result (*)(Program*);                         // nvrtcDestroyProgram
} // namespace nvrtc

namespace nvjitlink {
using Result = int;             // nvJitLinkResult
struct HandleOpaque;            // struct nvJitLink
using Handle = HandleOpaque*;   // nvJitLinkHandle
constexpr Result k_success = 0; // NVJITLINK_SUCCESS

// nvJitLinkResult's enumerators in order (CUDA 13.0 header); "" past the end.
std::string_view result_name(Result code);

// nvJitLinkVersion: exported since 12.3. The other entry points are exported both plainly (13.x)
// and as __nvJitLink<Name>_<major>_<minor>, one per header version the library accepts; the
// header's static inline wrappers call the versioned name of the header's own version.
using VersionFn = Result (*)(unsigned int*, unsigned int*);              // nvJitLinkVersion
using CreateFn = Result (*)(Handle*, std::uint32_t, const char* const*); // __nvJitLinkCreate_13_0
using DestroyFn = Result (*)(Handle*);                                   // __nvJitLinkDestroy_13_0

// The entry points a linker user needs, without the "nvJitLink" prefix; "Create" must be first.
inline constexpr std::array<std::string_view, 13> k_entry_points{
    "Create",          "Destroy",          "AddData",
    "AddFile",         "Complete",         "GetLinkedCubinSize",
    "GetLinkedCubin",  "GetLinkedPtxSize", "GetLinkedPtx",
    "GetErrorLogSize", "GetErrorLog",      "GetInfoLogSize",
    "GetInfoLog",
};
} // namespace nvjitlink

namespace cudart {
using Error = int;                             // cudaError_t
constexpr Error k_success = 0;                 // cudaSuccess
using GetErrorNameFn = const char* (*)(Error); // cudaGetErrorName
using RuntimeGetVersionFn = Error (*)(int*);   // cudaRuntimeGetVersion
using DriverGetVersionFn = Error (*)(int*);    // cudaDriverGetVersion
} // namespace cudart

} // namespace cudadiag::verify
