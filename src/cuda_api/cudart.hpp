#pragma once
// The slice of the CUDA runtime (cuda_runtime_api.h, CUDA 13.0) that the cudart probe calls,
// mirrored so that nothing needs a toolkit at build time; checked against the real header by
// tests/unit/test_verify_library_probes.cpp when it is available.

namespace cudadiag::cuda_api {

namespace cudart {
using Error = int;                             // cudaError_t
constexpr Error k_success = 0;                 // cudaSuccess
using GetErrorNameFn = const char* (*)(Error); // cudaGetErrorName
using RuntimeGetVersionFn = Error (*)(int*);   // cudaRuntimeGetVersion
using DriverGetVersionFn = Error (*)(int*);    // cudaDriverGetVersion
} // namespace cudart

} // namespace cudadiag::cuda_api
