#pragma once
// The self-test's one stream discipline (selftest/gpu.hpp): every test and worker orders its work
// on its own non-blocking stream, which does not wait for the legacy default stream, so a copy, fill
// or event that the stream's kernels consume is issued on that stream. The driver calls that run
// on the legacy default stream are offered only by name (`DriverEntryPoints::legacy_stream_*`) and
// used only where that is deliberate and synchronised. This table is every such use: the unit test
// test_selftest_stream_discipline.cpp scans the sources of the self-test, the verification probes,
// the worker and the CUB module and fails on a use that is not a row here (or a row with no use),
// and on a null stream handed to a launch, an event or an async copy.

#include <array>
#include <string_view>

namespace cudadiag::selftest {

struct LegacyStreamUse {
  std::string_view file; // from the source root
  std::string_view call; // the entry point (DriverEntryPoints member, or a CUDA runtime call)
  int count;             // how many call sites in that file
  std::string_view why;  // why the legacy stream is right there, and what synchronises it
};

// clang-format off
inline constexpr std::array<LegacyStreamUse, 6> k_legacy_stream_uses{{
    {"src/selftest/pcie_test.cpp", "legacy_stream_memcpy_htod", 1, "pageable H2D timing: the synchronous copy is what is timed; both test streams are synchronised before, cuCtxSynchronize after"},
    {"src/selftest/pcie_test.cpp", "legacy_stream_memcpy_dtoh", 1, "pageable D2H timing: as above; returns when the copy is done"},
    {"src/selftest/ipc_test.cpp",  "legacy_stream_memcpy_htod", 1, "the ipc test has no stream: its pattern is written on the legacy stream and cuCtxSynchronize follows"},
    {"src/selftest/ipc_test.cpp",  "legacy_stream_memcpy_dtoh", 1, "the ipc test's read-back, after cuCtxSynchronize; a synchronous copy"},
    {"src/selftest/ipc_test.cpp",  "legacy_stream_memcpy_peer", 2, "cuMemcpyPeer runs on the legacy stream; the clear between the two copies is issued there too, in order"},
    {"src/selftest/ipc_test.cpp",  "legacy_stream_memset_d32",  1, "the clear between the two peer copies, on the same legacy stream as they"},
}};
// clang-format on

} // namespace cudadiag::selftest
