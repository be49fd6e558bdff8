#pragma once
// The isolated worker: every library is loaded in a child process of its own (`cudadiag __worker
// KIND PATH`), so a library that crashes in its constructor, hangs in cuInit or corrupts memory
// costs one step of the report, never the report.
//
// Protocol (child -> parent, on file descriptor 3, one JSON object per line):
//   {"phase": "dlopen"}          progress, written before each risky call (see report_phase)
//   {"phase": P, "deadline_ms": N}  the same, and the step's deadline becomes now + N
//   {"record": {...}}            an intermediate result (a self-test's finished test), kept in order
//   {"result": {...}}            the probe's object, once, then the child exits 0
//   {"error": "..."}             a usage or internal error, then the child exits 2 (usage) or 3
// stdin and stdout are /dev/null; stderr is captured (its tail is kept for the report).

#include "core/environment.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::verify {

// One library to load. `kind` picks the probe: "driver", "nvml", "nvrtc", "nvjitlink", "cudart",
// or "selftest" (arguments: the configuration JSON) and "ipc_peer" (pass_fd: its socket).
struct WorkerStep {
  WorkerStep() = default;
  WorkerStep(std::string step_id, std::string step_kind, std::string step_path,
             std::vector<std::string> step_arguments = {}, int step_pass_fd = -1)
      : id(std::move(step_id)), kind(std::move(step_kind)), path(std::move(step_path)),
        arguments(std::move(step_arguments)), pass_fd(step_pass_fd) {}

  std::string id; // the caller's name for the step (a catalog component name)
  std::string kind;
  std::string path;                   // the absolute path of the file to dlopen
  std::vector<std::string> arguments; // appended to the command line after PATH
  int pass_fd = -1;                   // when >= 0: becomes the child's file descriptor 4
};

// NOLINTNEXTLINE(bugprone-exception-escape): nlohmann::json's noexcept move is flagged spuriously
struct StepOutcome {
  std::string id, kind, path;
  // "ok": the probe returned a result (the library itself may still have failed to load; see
  //       result.loaded). "crashed": a signal the parent did not send. "timeout": still running
  //       at the deadline, killed. "error": could not start, broke the protocol or exited non-zero.
  std::string status;
  std::optional<int> signal;    // crashed: the signal number
  std::optional<int> exit_code; // the child's exit status when it exited normally
  std::string
      detail; // one line for users, e.g. "killed by SIGSEGV while loading /x/libcuda.so.1 (in cuInit)"
  std::string stderr_tail; // the last ~2 KiB of the child's stderr, unsanitized
  std::string last_phase;  // the last phase the child reported ("dlopen", "cuInit", ...), "" if none
  nlohmann::json result;   // the probe's object, or null
  std::vector<nlohmann::json> records; // the {"record": ...} objects, in the order they arrived
  double elapsed_ms = 0;
};

struct WorkerOptions {
  std::string executable;                        // the cudadiag binary to re-execute (/proc/self/exe)
  std::chrono::milliseconds step_timeout{15000}; // per step, measured from its start (or its last deadline_ms)
  // Called (on the calling thread of run_steps) for each record as it arrives.
  std::function<void(const StepOutcome& outcome, const nlohmann::json& record)> on_record;
};

// Runs every step in its own child process, all at once: `executable __worker KIND PATH` with the
// environment of `env` (its variables only, nothing of this process), cwd env.cwd (when it is a
// directory), stdin and stdout /dev/null, stderr and fd 3 piped back. A child runs in a process
// group of its own; at its deadline the whole group is killed with SIGKILL. When a step ends, any
// process left in its group is killed too, and the child is reaped.
// Never throws, never leaves children behind. Outcomes are returned in step order.
std::vector<StepOutcome> run_steps(const std::vector<WorkerStep>& steps, const WorkerOptions& options,
                                   const Environment& env);

// The child side, for `cudadiag __worker KIND PATH` (argv[1] is "__worker"). Runs the probe for
// KIND on PATH and writes the protocol above to fd 3. Returns the process exit status: 0 after a
// result, 2 for a usage error (unknown kind, wrong arguments, fd 3 not open), 3 for an internal error.
int worker_main(int argc, char** argv);

// Tells the parent which risky step comes next, so that a crash or hang can be attributed to it.
// Writes {"phase": PHASE} to fd 3 at once (no buffering). A no-op outside worker_main, so probes may
// also run in an ordinary process.
void report_phase(std::string_view phase);
// The same, moving the step's deadline to now + `deadline` (a self-test announcing its next test).
void report_phase(std::string_view phase, std::chrono::milliseconds deadline);
// Sends {"record": RECORD} to the parent at once. A no-op outside worker_main.
void report_record(const nlohmann::json& record);

} // namespace cudadiag::verify
