// Every kind of work an isolated worker does: one row each. A kind sits above the stages it runs
// (verify/, selftest/), the process and protocol machinery below them (worker/).

#include "report/worker_kinds.hpp"

#include "linkage/link_map.hpp"
#include "selftest/selftest_codec.hpp"
#include "selftest/selftest_worker.hpp"
#include "verify/facts_codec.hpp"
#include "verify/probes.hpp"
#include "worker/child.hpp"

#include <span>
#include <string>

namespace cudadiag::report {
namespace {

using worker::WorkerKind;
using Arguments = std::span<char* const>;

// clang-format off
constexpr WorkerKind k_worker_kinds[] = {
    {"driver",    "PATH",                       1, [](Arguments a) { return verify::encode(verify::probe_driver(a[0])); }},    // libcuda.so.1
    {"nvml",      "PATH",                       1, [](Arguments a) { return verify::encode(verify::probe_nvml(a[0])); }},      // libnvidia-ml.so.1
    {"nvrtc",     "PATH",                       1, [](Arguments a) { return verify::encode(verify::probe_nvrtc(a[0])); }},     // libnvrtc.so.N
    {"nvjitlink", "PATH",                       1, [](Arguments a) { return verify::encode(verify::probe_nvjitlink(a[0])); }}, // libnvJitLink.so.N
    {"cudart",    "PATH",                       1, [](Arguments a) { return verify::encode(verify::probe_cudart(a[0])); }},    // libcudart.so.N
    {"link_map",  "ROOT PRELOADS",              2, [](Arguments a) { return linkage::encode(linkage::load_and_list(a[0], linkage::split_preloads(a[1]))); }}, // a closure loaded for real
    {"selftest",  "LIBCUDA CONFIG_JSON",        2, [](Arguments a) { return selftest::encode_evidence(selftest::run_selftest_worker(a[0], a[1])); }},   // one device's tests
    {"jit_lto",   "NVRTC ARCH CCCL_INCLUDE BUILTINS", 4, [](Arguments a) { return selftest::encode_evidence(selftest::run_jit_lto_compile(a[0], a[1], a[2], a[3])); }}, // the jit test's LTO-IR compile
    {"ipc_peer",  "LIBCUDA",                    1, [](Arguments a) { return selftest::encode_evidence(selftest::run_ipc_peer(a[0])); }},        // the ipc test's second process (socket on fd 4)
    {"checkpoint_target", "LIBCUDA ORDINAL BYTES SEED MODE", 5, [](Arguments a) { return selftest::encode_evidence(selftest::run_checkpoint_target(a[0], a[1], a[2], a[3], a[4])); }}, // the checkpoint test's target (socket on fd 4)
};
// clang-format on

} // namespace

int worker_main(int argc, char** argv) {
  worker::serve(argc, argv, k_worker_kinds);
}

} // namespace cudadiag::report
