#pragma once
// cudadiag C++ API: which CUDA libraries this process will load, whether they agree, whether the GPU
// works — as values (libcudadiag.so.0; CMake target cudadiag::cudadiag; C++17 or later).
//
// Every function is safe to call from many threads at once and prints nothing (see set_log_handler).
// Functions throw cudadiag::Exception for what the caller can act on (an unknown component name, a
// process that cannot be read); std::bad_alloc passes through. The C API (cudadiag.h) is the
// ABI-stable surface; this header is source-compatible within a minor release (docs/api.md "Versioning
// policy"): new fields and functions may be added, nothing is renamed or removed without a
// deprecation period.

#include "cudadiag/export.h"
#include "cudadiag/types.hpp"
#include "cudadiag/version.h"

#include <string>

namespace cudadiag {

// The loaded library's version, "0.1.0" (the macros in version.h give the headers' version).
CUDADIAG_API std::string version();

// Discovery only: every candidate of every component and the two selections, with the findings the
// files support. Reads files; loads nothing; starts no process unless options.python names one.
CUDADIAG_API Report discover(const Options& options = {});
// discover(), then the selected libcuda, NVML, cudart, NVRTC and nvJitLink are loaded, each in an
// isolated worker process (options.executable), and asked for their versions and devices. A library
// that crashes or hangs becomes a finding. Without a worker executable, verification is skipped
// (Report::verification_skipped says why) and the rest of the report is produced.
CUDADIAG_API Report verify(const Options& options = {});
// verify(), then the GPU self-test (JIT chain, bundled PTX, CUB kernels, IPC, green contexts) in
// the same kind of workers. Without a GPU every test is a skip, not a failure.
CUDADIAG_API Report self_test(const Options& options = {});
// The startup check: what this process has mapped already and what it would load next, judged in a
// few milliseconds, in this process: no process started, nothing loaded, no kernel launched. A
// repeated call answers the kept report while nothing its discovery read changed (stats only; what
// the process has mapped is read every time; docs/api.md "Contract").
// Findings are the warnings and errors only (two copies of one library mapped, the driver stub in
// use or first on the search path, no driver, unusable files, ...). The verdict is Verdict::error
// when CUDA is expected to fail here. Without Options::components it covers what a process loads or
// reads at run time: the libraries, header sets, bitcode and static libraries, not the toolkit's
// programs (nvcc, ...), and not what importing torch or JAX would load nor their CUDA pins
// (python.requirement_unmet); discover() reports those.
CUDADIAG_API Report quick_check(const Options& options = {});
// The CUDA libraries process `pid` has mapped (0: this process). Throws Exception when the process
// cannot be read (no such process, another user's, a zombie).
CUDADIAG_API ProcessInspection inspect_process(int pid = 0);

// The JSON document (schema_version 1, docs/schema/report.schema.json), two-space indented.
CUDADIAG_API std::string to_json(const Report& report);
// `cudadiag inspect --pid PID --json`'s document.
CUDADIAG_API std::string to_json(const ProcessInspection& inspection);

// Installs `handler` (empty: none, the default — nothing is logged anywhere) for messages at
// `min_level` or above. Process-wide, shared with the C API's log callback. The handler may be
// called from several threads at once and must not call set_log_handler.
CUDADIAG_API void set_log_handler(LogHandler handler, LogLevel min_level = LogLevel::info);

} // namespace cudadiag
