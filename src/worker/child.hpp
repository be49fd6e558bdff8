#pragma once
// The child side of the isolated worker (see process.hpp for the protocol): `cudadiag __worker KIND
// ARGUMENTS...` looks KIND up in a table of WorkerKind rows (report/worker_kinds.cpp), runs it and
// writes the protocol to file descriptor 3. The functions below let the code a kind runs tell the
// parent what it is doing; outside a worker they do nothing, so that probes may also run in an
// ordinary process.

#include <chrono>
#include <span>
#include <string>
#include <string_view>

namespace cudadiag::worker {

// The variable through which the parent gives a child its memory limit in MiB (process.hpp's
// memory_limit_mb); serve() sets RLIMIT_DATA, soft and hard, to the data the worker has at that
// point plus that much, before the kind loads anything.
inline constexpr std::string_view k_memory_limit_variable = "CUDADIAG_WORKER_DATA_LIMIT_MB";

// One kind of work a worker can do.
struct WorkerKind {
  std::string_view name; // the KIND argument
  std::string_view
      arguments;      // the arguments after KIND, for the usage message ("PATH", "LIBCUDA CONFIG_JSON")
  int argument_count; // how many there are
  // Does the work; returns the result object as JSON text. May throw (an internal error).
  std::string (*run)(std::span<char* const> arguments);
};

// For `cudadiag __worker KIND ...` (argv[1] is "__worker"): runs the row of `kinds` named KIND and
// writes the protocol to fd 3. Never returns: the process ends with _exit (0 after a result, 2 for
// a usage error: unknown kind, wrong arguments, fd 3 not open; 3 for an internal error), so that
// the loaded libraries' destructors never run.
[[noreturn]] void serve(int argc, char** argv, std::span<const WorkerKind> kinds);

// Tells the parent which risky step comes next, so that a crash or hang can be attributed to it.
// Writes {"phase": PHASE} to fd 3 at once (no buffering). A no-op outside serve().
void report_phase(std::string_view phase);
// The same, moving the step's deadline to now + `deadline` (a self-test announcing its next test).
void report_phase(std::string_view phase, std::chrono::milliseconds deadline);
// Sends {"record": RECORD} to the parent at once; `record` is a JSON object's text. A no-op outside serve().
void report_record(std::string_view record);

} // namespace cudadiag::worker
