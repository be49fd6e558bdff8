#pragma once
// The slice of NVRTC (nvrtc.h, CUDA 13.0) that the nvrtc probe and the jit self-test call,
// mirrored so that nothing needs a toolkit at build time; checked against the real header by
// tests/unit/test_verify_library_probes.cpp and test_selftest_gpu_api.cpp when it is available.

#include <cstddef>

namespace cudadiag::cuda_api {

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
// The compiled outputs (the jit self-test): nvrtcGetPTXSize, GetCUBINSize, GetLTOIRSize; nvrtcGetPTX,
// GetCUBIN, GetLTOIR.
using GetSizeFn = Result (*)(Program, std::size_t*);
using GetDataFn = Result (*)(Program, char*);
} // namespace nvrtc

} // namespace cudadiag::cuda_api
