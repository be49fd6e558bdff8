#pragma once
// The NVRTC and nvJitLink entry points the jit self-test calls beyond the verify probes' (see
// verify/library_api.hpp), mirrored from the CUDA 13.0 nvrtc.h and nvJitLink.h; checked against
// the real headers by tests/unit/test_selftest_gpu_api.cpp when they are present.

#include "verify/library_api.hpp"

#include <cstddef>
#include <cstdint>

namespace cudadiag::selftest {

namespace nvrtc = verify::nvrtc;
namespace nvjitlink = verify::nvjitlink;

namespace nvrtc_more {
using GetSizeFn = nvrtc::Result (*)(nvrtc::Program,
                                    std::size_t*);          // nvrtcGetPTXSize, GetCUBINSize, GetLTOIRSize
using GetDataFn = nvrtc::Result (*)(nvrtc::Program, char*); // nvrtcGetPTX, GetCUBIN, GetLTOIR
} // namespace nvrtc_more

namespace nvjitlink_more {
constexpr int k_input_ltoir = 3; // NVJITLINK_INPUT_LTOIR
using AddDataFn = nvjitlink::Result (*)(nvjitlink::Handle, int, const void*, std::size_t,
                                        const char*);        // nvJitLinkAddData
using CompleteFn = nvjitlink::Result (*)(nvjitlink::Handle); // nvJitLinkComplete
using GetSizeFn = nvjitlink::Result (*)(nvjitlink::Handle,
                                        std::size_t*);             // GetLinkedCubinSize, GetErrorLogSize
using GetDataFn = nvjitlink::Result (*)(nvjitlink::Handle, void*); // nvJitLinkGetLinkedCubin
using GetLogFn = nvjitlink::Result (*)(nvjitlink::Handle, char*);  // nvJitLinkGetErrorLog
} // namespace nvjitlink_more

} // namespace cudadiag::selftest
