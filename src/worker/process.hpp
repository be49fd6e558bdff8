#pragma once
// The parent side of the isolated worker: every library is loaded in a child process of its own
// (`cudadiag __worker KIND ARGUMENTS...`), so a library that crashes in its constructor, hangs in
// cuInit or corrupts memory costs one step of the report, never the report.
//
// Protocol (child -> parent, on file descriptor 3, one JSON object per line; see child.hpp):
//   {"phase": "dlopen"}          progress, written before each risky call (see report_phase)
//   {"phase": P, "deadline_ms": N}  the same, and the step's deadline becomes now + N
//   {"record": {...}}            an intermediate result (a self-test's finished test), kept in order
//   {"result": {...}}            the kind's result object, once, then the child exits 0
//   {"error": "..."}             a usage or internal error, then the child exits 2 (usage) or 3
// stdin and stdout are /dev/null; stderr is captured (its tail is kept for the report).
// What the objects mean is the business of the kind (the wire codecs of verify/ and selftest/);
// this layer carries them as JSON text.

#include "core/environment.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::worker {

// One child to run: `executable __worker KIND PATH ARGUMENTS...`.
struct WorkerStep {
  WorkerStep() = default;
  WorkerStep(std::string step_id, std::string step_kind, std::string step_path,
             std::vector<std::string> step_arguments = {}, int step_pass_fd = -1,
             std::chrono::milliseconds step_term_grace = std::chrono::milliseconds(0))
      : id(std::move(step_id)), kind(std::move(step_kind)), path(std::move(step_path)),
        arguments(std::move(step_arguments)), pass_fd(step_pass_fd), term_grace(step_term_grace) {}

  std::string id;                     // the caller's name for the step (a catalog component name)
  std::string kind;                   // a row of the worker kinds table (report/worker_kinds.cpp)
  std::string path;                   // the absolute path of the file to dlopen
  std::vector<std::string> arguments; // appended to the command line after PATH
  int pass_fd = -1;                   // when >= 0: becomes the child's file descriptor 4
  // When > 0, the child must not be killed outright: it ends itself on SIGTERM (a checkpoint target
  // first locks and checkpoints its own CUDA state: a live restored context must never be torn
  // down by a kill). It carries k_ends_on_sigterm_variable; at its deadline, and in every session
  // sweep that finds it, it gets SIGTERM and this long to end before SIGKILL.
  std::chrono::milliseconds term_grace{0};
};

// Marks a process that ends itself on SIGTERM (WorkerStep::term_grace): "CUDADIAG_WORKER_ENDS_ON_SIGTERM=1".
inline constexpr std::string_view k_ends_on_sigterm_variable = "CUDADIAG_WORKER_ENDS_ON_SIGTERM";
// How long a session sweep waits for such processes to end after SIGTERM, before SIGKILL.
inline constexpr std::chrono::milliseconds k_sweep_term_grace{20000};

// How a step ended. ok: the kind returned a result (the library itself may still have failed to
// load; see the result). crashed: a signal the parent did not send. timeout: still running at the
// deadline, killed. error: could not start, broke the protocol or exited non-zero.
enum class StepStatus { ok, crashed, timeout, error };
// The name the report and the caches spell it with: "ok", "crashed", "timeout", "error".
std::string_view to_string(StepStatus status);
// The status `text` names; nullopt for any other text.
std::optional<StepStatus> parse_step_status(std::string_view text);

struct StepOutcome {
  std::string id, kind, path;
  StepStatus status = StepStatus::error;
  std::optional<int> signal;    // crashed: the signal number
  std::optional<int> exit_code; // the child's exit status when it exited normally
  std::string
      detail; // one line for users, e.g. "killed by SIGSEGV while loading /x/libcuda.so.1 (in cuInit)"
  std::string stderr_tail;          // the last ~2 KiB of the child's stderr, unsanitized
  std::string last_phase;           // the last phase the child reported ("dlopen", "cuInit", ...), "" if none
  std::string result;               // the result object as JSON text; "" when there is none (status not ok)
  std::vector<std::string> records; // the {"record": ...} objects as JSON text, in the order they arrived
  double elapsed_ms = 0;
};

struct WorkerOptions {
  std::string executable; // the cudadiag binary to re-execute (/proc/self/exe)
  std::chrono::milliseconds step_timeout{
      15000}; // per step, measured from its start (or its last deadline_ms)
  // The hard limit of a step from its start (0: step_timeout). A deadline_ms line moves the step's
  // deadline to now + N with N capped at this budget, and never past start + budget, so a worker
  // (or a library writing on its descriptor) cannot keep a step alive beyond it.
  std::chrono::milliseconds step_budget{0};
  // How much each child's data (heap and private writable mappings) may grow, in MiB: the child
  // sets RLIMIT_DATA to its data at start plus this before it loads anything. nullopt =
  // memory_limit_mb(env); 0 = unlimited. A library that allocates past it gets ENOMEM (its step
  // fails or crashes), never the machine's memory.
  std::optional<std::uint64_t> memory_limit_mb;
  // Called (on the calling thread of run_steps) for each record (JSON text) as it arrives.
  std::function<void(const StepOutcome& outcome, const std::string& record)> on_record;
};

// A worker's RLIMIT_DATA by default, in MiB: 8x the largest peak measured on the H200 host (the
// self-test worker with cuBLAS, cuDNN and NCCL loaded: VmData 998 MiB; every step still passes
// at 1024, and fails at 512). RLIMIT_AS is not used: the same worker's VmPeak is 294 GiB (the
// driver reserves address space for unified memory), and 8 GiB of RLIMIT_AS already breaks a report.
inline constexpr std::uint64_t k_default_memory_limit_mb = 8192;
// CUDADIAG_WORKER_MEMORY_MB from the snapshot (0 = unlimited, else 64 .. 16777216), else
// k_default_memory_limit_mb; anything else is ignored.
std::uint64_t memory_limit_mb(const Environment& env);

// Runs every step in its own child process, all at once: `executable __worker KIND PATH` with the
// environment of `env` (its variables only, nothing of this process) plus a session variable
// unique to this call (CUDADIAG_WORKER_SESSION), cwd env.cwd (when it is a directory), stdin and
// stdout /dev/null, stderr and fd 3 piped back. A child runs in a process group of its own; at its
// deadline the whole group is killed with SIGKILL (a step with a term_grace: SIGTERM first). When a
// step ends, any process left in its group is killed too, and the child is reaped; when all have
// ended, any process still carrying the session variable (a daemon that left the group with setsid),
// or naming it among CUDADIAG_WORKER_OUTER_SESSIONS (a worker started by a worker), is killed: one
// marked k_ends_on_sigterm_variable gets SIGTERM first and up to k_sweep_term_grace to end.
// Every protocol line is parsed bounded (depth, size); a step that sends more than its limits of
// lines, records or bytes is stopped and reported as an error naming the limit.
// Never throws, never leaves children behind. Outcomes are returned in step order.
std::vector<StepOutcome> run_steps(const std::vector<WorkerStep>& steps, const WorkerOptions& options,
                                   const Environment& env);

} // namespace cudadiag::worker
