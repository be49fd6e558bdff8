#pragma once
// What every self-test receives inside the worker, and the sizes each level uses. The tests
// themselves (one file each) are the rows of catalog.cpp; their contract:
//   TestResult run_<key>(const TestContext&)
// returns the finished result (status, reason, metrics, details) and never throws: a CudaFailure
// or any other exception is turned into a status by run_guarded.

#include "core/expected.hpp"
#include "core/unique_fd.hpp"
#include "cuda_api/library.hpp"
#include "selftest/gpu.hpp"
#include "selftest/nvml_health.hpp"
#include "selftest/selftest.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cudadiag::selftest {

// The worker's instructions, sent by the parent as one argument (selftest/selftest_codec.hpp).
struct WorkerConfig {
  std::optional<int> device;    // CUDA ordinal; nullopt = no device (compile-only jit, the rest skip)
  std::string no_device_reason; // why there is no device, for the skips
  Level level = Level::quick;
  std::vector<std::string> tests;
  bool tests_named = false; // the tests were named (--only), not every test of the level
  std::string libcuda;      // the driver discovery's loader order resolves; "" = none
  // The libs test's math libraries and their dependencies (selftest/libs.hpp): catalog name ->
  // the file discovery selected; a name that is absent was not found.
  std::map<std::string, std::string> libraries;
  // The libs test checks only these libraries (names of libs::k_libraries); empty = every one. The
  // parent runs NCCL's check in a worker of its own this way (selftest/libs_apart.hpp).
  std::vector<std::string> libs_checked;
  std::string nvrtc; // "" = not found
  // The builtins file CUDA Python loads after NVRTC (verify/nvrtc_builtins_preload.hpp): the jit
  // test loads it first, as that process has it; "" = CUDA Python preloads nothing.
  std::string nvrtc_builtins;
  std::string nvjitlink;    // "" = not found
  std::string cccl_include; // the directory holding cub/ and cuda/std; "" = not found
  std::string module_path;  // libcudadiag_cub_selftest.so; "" = not built
  std::string module_missing_reason;
  std::string executable; // the cudadiag binary (the ipc test starts its peer with it)
  std::string nvml;       // the libnvidia-ml discovery selected; "" = none (no link, clocks or ECC readings)
  std::optional<int>
      device_arch; // the device's compute capability (10 x major + minor) as verification saw it
  // Each library a test loads must be loaded within this (--timeout), whatever the test's own
  // deadline: the worker moves its deadline to it around the dlopen (load_bounded). 0: the test's.
  std::chrono::milliseconds load_timeout{0};
  // The cudadiag process that started the workers: it and every process below it are this run's
  // own, never "another process on the GPU" (selftest/gpu_busy.hpp). 0: the worker's parent.
  int session_pid = 0;
  // Fault injection for tests of the memory test itself (CUDADIAG_SELFTEST_INJECT_MEMORY_ERRORS,
  // 1-4096): after its first fill, that many words of the first chunk get bit 0 flipped by a kernel
  // on the test's stream, once; the result says they were injected. 0 = off (always, by default).
  unsigned inject_memory_errors = 0;
};

struct DeviceFacts {
  int ordinal = 0;
  cu::CUdevice handle = 0;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  double peak_gbps = 0; // 2 x memory clock x bus width; 0 when the driver does not say
  std::string uuid;
};

// Problem sizes per level (elements, repetitions).
struct LevelSizes {
  std::uint64_t copy_elements; // 16-byte elements per copy buffer
  int copy_repetitions;
  int cub_warmup; // untimed CUB runs first (caches and allocations settle)
  int warm_ms;    // then untimed runs of the same kernel for this much GPU time (clocks reach steady state)
  std::uint64_t reduce_count;
  int reduce_repetitions;
  std::uint64_t sort_count;
  int sort_repetitions;
  std::uint64_t probe_spin_ns; // how long each %smid probe block stays resident
  int latency_repetitions;     // green_ctx isolation samples
  std::uint64_t pcie_bytes;    // per pinned copy (pcie)
  int pcie_repetitions;
  bool pcie_pageable;           // pageable copies too (reported, not scored)
  std::uint64_t compute_rounds; // cudadiag_fma_f32 rounds (64 steps of 16 FMAs each per thread)
  int compute_repetitions;
  bool memory_test; // the memory pattern test runs at this level
};
const LevelSizes& sizes_for(Level level);

// The jit test's CPU half (the NVRTC compiles and the nvJitLink link), which the worker starts
// before the GPU tests so that it overlaps them (see jit_test.cpp).
struct JitPreparation;
// `device_arch` is the device's compute capability as 10 x major + minor (nullopt: no device).
std::shared_ptr<const JitPreparation> prepare_jit(const WorkerConfig& config, std::optional<int> device_arch);

struct TestContext {
  const WorkerConfig& config;
  const TestInfo& info;
  const Gpu* gpu = nullptr;          // null: no usable driver (see no_gpu_reason)
  std::optional<DeviceFacts> device; // null: no device
  std::string no_gpu_reason;
  bool device_broken = false; // the device exists but could not be used (no_gpu_reason says why)
  const LevelSizes& sizes;
  // The jit test's compiles, started early; not valid() = run_jit compiles itself.
  std::shared_future<std::shared_ptr<const JitPreparation>> jit_preparation;
  const NvmlDevice* nvml = nullptr; // this GPU in NVML; null: nvml_problem says why
  std::string nvml_problem;
  // When the parent kills the worker if this test has not finished (its TestInfo deadline).
  std::chrono::steady_clock::time_point deadline = std::chrono::steady_clock::time_point::max();
};

// Loads `path` (dlopen `flags`) for the test of `context` under WorkerConfig::load_timeout: the
// parent kills the worker if the load has not returned by then (a constructor that blocks), and
// names the file ("test:KEY|load PATH" phase). The test's own deadline applies again afterwards.
cuda_api::DlHandle load_bounded(const TestContext& context, const std::string& path, int flags);

// The two ends of a close-on-exec SOCK_SEQPACKET pair between a test and the process it starts
// (the ipc test's peer, the checkpoint test's target): the test keeps `ours` and hands `theirs` to
// the worker step; the error is "socketpair: " and errno's words.
struct SocketPair {
  UniqueFd ours, theirs;
};
Expected<SocketPair> seqpacket_pair();

// The SM clock a peak expectation assumes: NVML's max SM clock, else the driver's
// CU_DEVICE_ATTRIBUTE_CLOCK_RATE (deprecated in CUDA 13: an error there is "unknown"); mhz 0 = unknown.
struct SmClock {
  unsigned mhz = 0;
  std::string source; // "nvmlDeviceGetMaxClockInfo(SM)" or "CU_DEVICE_ATTRIBUTE_CLOCK_RATE"
};
SmClock max_sm_clock(const TestContext& context);

// A result skeleton for the context's test.
TestResult new_result(const TestContext& context);
TestResult skipped(const TestContext& context, std::string reason);
// `result` as an error of the test's own machinery (not of the GPU): status "error", `reason`.
TestResult errored(TestResult result, std::string reason);
// The result of a test that needs a GPU when there is none: a skip, or a failure when the device
// exists but the driver could not use it (that is a broken stack, not an absent one).
TestResult without_gpu(const TestContext& context);
void add_metric(TestResult& result, std::string name, double value, std::string unit, bool primary = false);

// --- verification that cannot be raced ---------------------------------------------------------
// A correctness check reads what a kernel produced only after the stream that produced it is
// synchronised (Stream::download). What it found wrong is named in full: the first bad word, its
// value and the value expected, and how many words differ. A failed check is repeated once on a
// fresh buffer, only to say whether the error is persistent or transient: both are failures.

struct WrongData {
  std::uint64_t first_index = 0; // in words of the checked buffer
  std::uint64_t value = 0;
  std::uint64_t expected = 0;
  std::uint64_t differing = 0; // words that differ
  std::uint64_t checked = 0;   // words compared
};

// Compares `count` words at `words` with expected(index) for index = first + i; `into` stays nullopt
// when every word matches, and accumulates across chunks of one buffer (its first_index stays the
// first one found).
template <class Word, class Expected>
void compare_words(const Word* words, std::size_t count, std::uint64_t first, Expected expected,
                   std::optional<WrongData>& into) {
  for (std::size_t i = 0; i < count; ++i) {
    const auto want = static_cast<std::uint64_t>(expected(first + i));
    const auto got = static_cast<std::uint64_t>(words[i]);
    if (got != want) {
      if (!into) {
        into = WrongData{first + i, got, want, 0, 0};
      }
      ++into->differing;
    }
  }
  if (into) {
    into->checked += count;
  }
}
template <class Word, class Expected>
void compare_words(const std::vector<Word>& words, std::uint64_t first, Expected expected,
                   std::optional<WrongData>& into) {
  compare_words(words.data(), words.size(), first, expected, into);
}

// "word 0 is 0, expected 3237998080; 16777216 of 67108864 words differ"
std::string describe(const WrongData& wrong);
// The check's outcome as evidence: {"first_index", "value", "expected", "words_differing",
// "words_checked", "repeat": {"words_differing", "first_index"} | null, "persistent": bool | null}.
Evidence wrong_data_evidence(const WrongData& first, const std::optional<std::optional<WrongData>>& repeat);
// The failure text of a check that found `first` and, repeated on a fresh buffer, `repeat`
// (nullopt: the repeat could not run): "<what> wrote wrong data: <describe>; persistent: repeated
// on a fresh buffer, 12 words differ again" or "...; transient: a repeat on a fresh buffer was right".
std::string wrong_data_reason(std::string_view what, const WrongData& first,
                              const std::optional<std::optional<WrongData>>& repeat);

// The bundled PTX (kernels/ptx/*.ptx, embedded at build time; see embedded_ptx.cpp.in).
extern const char* const k_copy_ptx;
extern const char* const k_smid_ptx;
extern const char* const k_fma_ptx;
extern const char* const k_memtest_ptx;

// The warm-up by time of the bundled kernels: calls `launch` (which enqueues one run on `stream`)
// until `warm_ms` of GPU time have passed; returns the runs made.
int warm_up(const Gpu& gpu, cu::CUstream stream, int warm_ms, const std::function<void()>& launch);

// Reads %smid bitmaps: launches the probe (cudadiag_smid_probe) with `blocks` blocks on `stream`
// and returns the set of SM ids it ran on. `module` holds smid.ptx, loaded in the stream's context.
std::vector<int> sms_touched(const Gpu& gpu, const Module& module, cu::CUstream stream, unsigned blocks,
                             std::uint64_t spin_ns);

} // namespace cudadiag::selftest
