#pragma once
// The self-test's worker kinds (the rows of report/worker_kinds.cpp): the child side of the
// self-test (see selftest_worker.cpp), the jit test's LTO-IR compile and the ipc test's peer. What
// each returns is sent encoded by selftest_codec.hpp encode_evidence.

#include "core/evidence.hpp"
#include "selftest/selftest.hpp"

#include <chrono>
#include <string>
#include <string_view>

namespace cudadiag::selftest {

// How long a test may run before the parent kills its worker.
std::chrono::milliseconds test_timeout(std::string_view key, Level level);

// Runs the tests named in the encoded configuration (WorkerConfig, selftest_codec.hpp) with the driver at
// `libcuda_path`; sends one record per test and returns the worker's summary. Throws only for a
// malformed configuration.
Evidence run_selftest_worker(const std::string& libcuda_path, const std::string& config_text);

// The jit test's LTO-IR compile in a process of its own (NVRTC compiles one program at a time per
// process): `cudadiag __worker jit_lto NVRTC ARCH CCCL_INCLUDE BUILTINS`, BUILTINS the builtins file
// loaded first ("" for none: WorkerConfig::nvrtc_builtins). Returns {"error", "ms", "ltoir_hex"}.
Evidence run_jit_lto_compile(const std::string& nvrtc_path, const std::string& arch_text,
                             const std::string& cccl_include, const std::string& builtins_preload);

// The ipc test's second process: `cudadiag __worker ipc_peer LIBCUDA` with the exporter's socket
// on file descriptor 4. Returns the peer's summary.
Evidence run_ipc_peer(const std::string& libcuda_path);

// The checkpoint test's target process: `cudadiag __worker checkpoint_target LIBCUDA ORDINAL BYTES
// SEED MODE` with the controller's socket on file descriptor 4 (protocol: checkpoint_test.cpp).
// Returns the target's summary; it always ends with its CUDA state checkpointed where the driver
// allowed (parked by the controller, or by itself when the controller has gone or on SIGTERM).
Evidence run_checkpoint_target(const std::string& libcuda_path, const std::string& ordinal_text,
                               const std::string& bytes_text, const std::string& seed_text,
                               const std::string& mode);

} // namespace cudadiag::selftest
