// The self-tests: one row each. Adding a test is a file with its run_<key> function, a row here and
// a line in src/CMakeLists.txt. Keys are stable (the JSON, --only and policy requirements use them).

#include "selftest/selftest.hpp"
#include "selftest/selftest_worker.hpp"

#include <algorithm>
#include <chrono>

namespace cudadiag::selftest {

// The tests' entry points (contract: test_context.hpp).
TestResult run_jit(const TestContext& context);        // jit_test.cpp
TestResult run_ptx(const TestContext& context);        // ptx_test.cpp
TestResult run_reduce(const TestContext& context);     // cub_tests.cpp
TestResult run_sort(const TestContext& context);       // cub_tests.cpp
TestResult run_ipc(const TestContext& context);        // ipc_test.cpp
TestResult run_green_ctx(const TestContext& context);  // green_ctx_test.cpp
TestResult run_pcie(const TestContext& context);       // pcie_test.cpp
TestResult run_compute(const TestContext& context);    // compute_test.cpp
TestResult run_memory(const TestContext& context);     // memory_test.cpp
TestResult run_libs(const TestContext& context);       // libs_test.cpp (libs_checks.cpp)
TestResult run_checkpoint(const TestContext& context); // checkpoint_test.cpp

namespace {

using std::chrono::seconds;

// Deadlines catch hangs; they are far above the healthy times (quick: ~0.1-0.5 s per test on an
// H200; jit: NVRTC compiling CUB headers three times, seconds on a slow CPU).
// clang-format off
constexpr TestInfo k_tests[] = {
    {.key = "jit",       .description = "NVRTC compiles a cub::BlockReduce kernel against the CCCL headers found (PTX, cubin, LTO-IR + nvJitLink); the driver loads and runs each",
     .quick_timeout = seconds(120), .full_timeout = seconds(120), .run = run_jit},
    {.key = "ptx",       .description = "bundled PTX (ISA 7.0) JIT-compiled by the driver: copy kernel vs cuMemcpyDtoD, %smid probe reaches every SM",
     .quick_timeout = seconds(30),  .full_timeout = seconds(90),  .run = run_ptx},
    {.key = "reduce",    .description = "cub::DeviceReduce::Sum (f32, i32->i64) from the nvcc-built module on the selected driver: exact result, GB/s",
     .quick_timeout = seconds(30),  .full_timeout = seconds(90),  .run = run_reduce},
    {.key = "sort",      .description = "cub::DeviceRadixSort::SortKeys (u32, u64) from the nvcc-built module: sorted, same multiset, Gkeys/s",
     .quick_timeout = seconds(30),  .full_timeout = seconds(90),  .run = run_sort},
    {.key = "pcie",      .description = "pinned H2D, D2H and bidirectional copies (pageable reported) against the PCIe link NVML reports: GB/s, link below its max gen/width",
     .quick_timeout = seconds(30),  .full_timeout = seconds(90),  .run = run_pcie},
    {.key = "compute",   .description = "FP32 FMA throughput of a bundled PTX kernel (dependent FMA chains on every SM) against SMs x max SM clock x FMA/clock; results checked bit for bit",
     .quick_timeout = seconds(30),  .full_timeout = seconds(90),  .run = run_compute},
    {.key = "memory",    .description = "full level: walking ones, moving inversions and seeded random patterns over most of the free device memory, verified on the GPU; NVML ECC and remapped rows before and after",
     .quick_timeout = seconds(30),  .full_timeout = seconds(120), .run = run_memory},
    {.key = "ipc",       .description = "device memory shared with a second process: legacy IPC handle and VMM POSIX fd, both directions",
     .quick_timeout = seconds(60),  .full_timeout = seconds(180), .run = run_ipc},
    {.key = "green_ctx", .description = "green contexts: two SM partitions, confinement proven with %smid, latency under load in the other partition",
     .quick_timeout = seconds(30),  .full_timeout = seconds(90),  .run = run_green_ctx},
    {.key = "libs",      .description = "one verified call into each math library discovery selected (cuBLAS SGEMM, cuBLASLt bf16 GEMM TFLOP/s, cuFFT, cuRAND, cuSPARSE SpMV, cuSOLVER potrf, cuDNN convolution, NCCL all-reduce), loaded by path",
     .quick_timeout = seconds(60),  .full_timeout = seconds(120), .run = run_libs},
    {.key = "checkpoint", .description = "a second process's CUDA state locked, checkpointed, restored and unlocked by the driver (cuCheckpointProcess*, R570+): each step timed, its GPU memory released meanwhile, its data and context intact after; full level, or when named",
     .quick_timeout = seconds(120), .full_timeout = seconds(180), .run = run_checkpoint},
};
// clang-format on

} // namespace

std::span<const TestInfo> test_catalog() {
  return k_tests;
}

const TestInfo* find_test(std::string_view key) {
  const auto* found = std::find_if(std::begin(k_tests), std::end(k_tests),
                                   [key](const TestInfo& test) { return test.key == key; });
  return found != std::end(k_tests) ? found : nullptr;
}

std::chrono::milliseconds test_timeout(std::string_view key, Level level) {
  const auto* test = find_test(key);
  const auto& row = test != nullptr ? *test : k_tests[1];
  return level == Level::full ? row.full_timeout : row.quick_timeout;
}

} // namespace cudadiag::selftest
