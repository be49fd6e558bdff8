#pragma once
// The slice of nvJitLink (nvJitLink.h, CUDA 13.0) that the nvJitLink probe and the jit self-test
// call, mirrored so that nothing needs a toolkit at build time; checked against the real header by
// tests/unit/test_verify_library_probes.cpp and test_selftest_gpu_api.cpp when it is available.

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cudadiag::cuda_api {

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
// The linking entry points (the jit self-test).
constexpr int k_input_ltoir = 3;                                                  // NVJITLINK_INPUT_LTOIR
using AddDataFn = Result (*)(Handle, int, const void*, std::size_t, const char*); // nvJitLinkAddData
using CompleteFn = Result (*)(Handle);                                            // nvJitLinkComplete
using GetSizeFn = Result (*)(Handle, std::size_t*); // nvJitLinkGetLinkedCubinSize, GetErrorLogSize
using GetDataFn = Result (*)(Handle, void*);        // nvJitLinkGetLinkedCubin
using GetLogFn = Result (*)(Handle, char*);         // nvJitLinkGetErrorLog

// The entry points a linker user needs, without the "nvJitLink" prefix; "Create" must be first.
inline constexpr std::array<std::string_view, 13> k_entry_points{
    "Create",          "Destroy",          "AddData",
    "AddFile",         "Complete",         "GetLinkedCubinSize",
    "GetLinkedCubin",  "GetLinkedPtxSize", "GetLinkedPtx",
    "GetErrorLogSize", "GetErrorLog",      "GetInfoLogSize",
    "GetInfoLog",
};
} // namespace nvjitlink

} // namespace cudadiag::cuda_api
