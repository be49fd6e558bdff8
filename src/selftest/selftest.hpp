#pragma once
// The GPU self-test: proves that the stack discovery found really works on this machine's GPUs.
// Every test runs in an isolated worker (`cudadiag __worker selftest ...`, one per device), one
// after another inside it, each with its own deadline; a test that hangs or crashes costs that test,
// and a fresh worker runs the ones after it.
//
// Tests (keys are stable; the JSON and --only use them):
//   jit        NVRTC compiles a kernel using cub::BlockReduce against the CCCL headers found on disk,
//              to PTX, to a cubin and to LTO-IR linked by nvJitLink; the driver loads and runs each.
//   ptx        the bundled PTX (kernels/*.ptx) JIT-compiled by the driver: a copy kernel timed
//              against cuMemcpyDtoD on the same buffers, and the %smid probe.
//   reduce     cub::DeviceReduce::Sum (f32 and i32 -> i64) from the nvcc-built self-test module.
//   sort       cub::DeviceRadixSort::SortKeys (u32 and u64, DoubleBuffer) from the same module.
//   ipc        device memory shared with a second process: legacy IPC handles and VMM POSIX fds.
//   green_ctx  SM partitions from green contexts: confinement proven with %smid, and isolation.
//   checkpoint a second process's CUDA state locked, checkpointed, restored and unlocked by the driver
//              (cuCheckpointProcess*); its data and context checked afterwards.
//   libs       one verified call into each math library discovery selected (cuBLAS, cuBLASLt with
//              the bf16 GEMM figure, cuFFT, cuRAND, cuSPARSE, cuSOLVER, cuDNN, NCCL).
//
// Statuses: "pass", "fail" (ran, wrong answer or a CUDA error where success was required), "skip"
// (cannot run here; `reason` says why, e.g. "no GPU", "driver 12.2 has no green contexts"),
// "error" (the test itself broke: crashed, timed out, the worker failed).

#include "core/environment.hpp"
#include "core/evidence.hpp"
#include "core/run_context.hpp"
#include "discovery/discovery.hpp"
#include "selftest/result_facts.hpp"
#include "selftest/test_status.hpp"
#include "verify/verification.hpp"

#include <chrono>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::selftest {

enum class Level { quick, full };
std::string_view level_name(Level level);

struct TestContext; // selftest/test_context.hpp: what a test receives inside the worker
struct TestResult;

// One self-test: a row of selftest/catalog.cpp.
struct TestInfo {
  std::string_view key;
  std::string_view description;
  std::chrono::seconds
      quick_timeout;                 // its deadline at --level quick (catches hangs; far above healthy times)
  std::chrono::seconds full_timeout; // ... and at --level full
  TestResult (*run)(const TestContext& context); // inside the worker; never throws (see test_context.hpp)
};
// Every test, in the order they are reported.
std::span<const TestInfo> test_catalog();
// The row for `key`, or nullptr.
const TestInfo* find_test(std::string_view key);

struct SelfTestOptions {
  bool enabled = false; // off: the report's "selftest" is null
  Level level = Level::quick;
  std::vector<std::string> only; // test keys to run; empty = all (unknown keys: usage error upstream)
  std::optional<int> device;     // a CUDA ordinal (after CUDA_VISIBLE_DEVICES); nullopt = every device
  std::string executable;        // the cudadiag binary to re-execute as the worker
  std::string module_path;       // libcudadiag_cub_selftest.so; "" = look next to the executable
  std::string kernels_dir;       // the bundled PTX; "" = look next to the executable / in share/
  std::chrono::milliseconds startup_timeout{15000}; // a worker's cuInit + context, before its first test
  // Each library a test loads must be loaded within this (--timeout); see WorkerConfig::load_timeout.
  std::chrono::milliseconds load_timeout{15000};
  // When every worker must have ended; run_selftest sets it from the overall budget
  // (CUDADIAG_SELFTEST_BUDGET_S, else 120 s quick / 900 s full). A test still running then is cut
  // (an error saying so), the ones not started are skipped, saying so.
  std::optional<std::chrono::steady_clock::time_point> deadline;
  std::chrono::seconds budget{0}; // the overall budget `deadline` came from, for the messages
  bool require_gpu = false;       // true: run nothing (skipped_reason says why) when no GPU is usable
  // At most this many workers (one per GPU) at once; nullopt: CUDADIAG_SELFTEST_WORKERS from the
  // environment snapshot, else one per two usable CPUs (selftest/health.hpp worker_limit). A driver
  // that lists 1000 devices, or 56 MIG instances on 8 GPUs, never starts that many processes at once.
  std::optional<unsigned> max_workers;
  // Optional: one line as each worker starts (the tests it runs), and one per finished test.
  std::function<void(std::string_view line)> progress;
  // Where cudadiag runs (core/run_context.hpp); nullopt: from the environment snapshot. It sets how
  // loud gpu.busy is: info interactively, a warning in ci and fleet.
  std::optional<RunContext> context;
  // The GPU must be idle (a prolog that needs it to itself): another process on it is an error.
  bool exclusive = false;
};

// A named figure a test measured. `unit` is one of "GB/s", "Gkeys/s", "TFLOP/s", "GiB/s", "GiB", "ms",
// "us", "fraction", "count".
struct Metric {
  std::string name;
  double value = 0;
  std::string unit;
};

struct TestResult {
  std::string key;
  std::optional<int> device; // nullopt for a run with no device (jit compile-only)
  std::string description;
  TestStatus status = TestStatus::error;
  std::string reason; // why, for everything but a plain pass ("" then)
  double wall_ms = 0;
  std::vector<Metric> metrics;
  std::optional<Metric> primary; // the headline figure (copy GB/s, reduce f32 GB/s, sort u32 Gkeys/s, ...)
  // The facts the findings' rules read (selftest/result_facts.hpp); details_evidence renders them
  // into the details.
  std::optional<PcieFacts> pcie;     // the pcie test's link and verdict (details.pcie)
  std::optional<MemoryFacts> memory; // the memory test's wrong words and NVML counters (details.memory)
  std::optional<CheckpointFacts>
      checkpoint;                     // the checkpoint test's outcome and failed step (details.checkpoint)
  std::optional<ClockSummary> clocks; // NVML's clocks while the test ran (details.clocks)
  std::optional<BusyFacts> busy;      // other processes on the GPU while the test ran (details.busy)
  Evidence details;                   // the rest of the test-specific evidence (archs, SM sets, CUresults)
};

// The result's details as the report shows them: `details` with the typed facts' fields added.
Evidence details_evidence(const TestResult& result);

// The score, 0..100 per device and overall (the minimum over devices). Documented in README.md
// ("Self-test score"): 0 when a correctness gate failed (any fail or error but a checkpoint cycle
// that failed without wrong data), else 100 x the geometric mean over the
// benchmarks that ran of min(1, measured / expected), where expected is what CUB reaches on an H200
// scaled by this device's attribute peak bandwidth; figures measured while another process used the
// GPU are listed but left out of the value.
// One benchmark's part in the score.
struct ScoreComponent {
  int device = 0;
  std::string benchmark; // "reduce.f32_gbps": test key and metric name
  double measured = 0;
  double expected = 0; // the H200 reference scaled by this device's peak bandwidth
  double ratio = 0;    // measured / expected (not capped)
  // Measured while another process used the GPU (the test's BusyFacts): shown, but neither in the
  // score's value nor blamed on the GPU (no gpu.throttled or selftest.slow for it).
  bool busy = false;
};

struct Score {
  std::optional<double> value; // nullopt when no benchmark ran (no GPU)
  bool correctness_passed = true;
  std::vector<ScoreComponent> components;
  std::size_t busy_excluded = 0; // components measured while the GPU was busy, left out of `value`
};

// The nvcc-built CUB self-test module (libcudadiag_cub_selftest.so) the reduce and sort tests use.
struct SelfTestModule {
  std::string path;   // "" when it is not installed
  std::string reason; // why it is not ("" when it is)
  [[nodiscard]] bool built() const { return !path.empty(); }
};

struct SelfTestRun {
  bool ran = false;
  std::string skipped_reason; // when !ran
  Level level = Level::quick;
  std::optional<SelfTestModule> module; // nullopt when the run did not get as far as looking
  std::vector<TestResult> tests;
  Score score;
  double wall_ms = 0;
  unsigned max_workers = 1;                     // workers that ran at once (see SelfTestOptions::max_workers)
  RunContext context = RunContext::interactive; // as resolved (SelfTestOptions::context)
  bool exclusive = false;                       // SelfTestOptions::exclusive
  // pass (nothing failed, a test passed on a GPU), fail (a fail or error), skip (nothing ran on a
  // GPU; a compile-only pass without one included).
  [[nodiscard]] TestStatus status() const;
};

// Runs the self-test for the components discovery selected (the driver the loader resolves, the
// NVRTC/nvJitLink/CCCL and math libraries CUDA Python would use) on the devices verification found.
// Never throws.
SelfTestRun run_selftest(const discovery::DiscoveryResult& discovery,
                         const verify::Verification& verification, const SelfTestOptions& options,
                         const Environment& env);

} // namespace cudadiag::selftest
