#pragma once
// Runs one external command and captures what it prints: the bundle's raw evidence (`nvidia-smi
// -q`) and discovery's `--python` interpreter probe. The command runs with the snapshot's variables and
// working directory, stdin on /dev/null, no shell, in its own process group; at the deadline the whole group
// is killed.

#include "core/environment.hpp"
#include "core/expected.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace cudadiag {

// Output beyond these sizes is dropped (and the capture says it was truncated).
inline constexpr std::size_t k_max_command_stdout = std::size_t{8} << 20U;
inline constexpr std::size_t k_max_command_stderr = std::size_t{64} << 10U;

struct CommandCapture {
  std::string out;
  std::string err;
  std::optional<int> exit_code; // when it exited
  std::optional<int> signal;    // when a signal ended it (SIGKILL after a timeout)
  bool timed_out = false;
  bool truncated = false;
  double elapsed_ms = 0;

  // "exit 0", "exit 9", "killed by signal 11", "timed out after 10 s (killed)".
  [[nodiscard]] std::string outcome(std::chrono::milliseconds timeout) const;
};

// Runs `argv` (argv[0] an absolute path). An Error only when it could not be started at all.
Expected<CommandCapture> capture_command(const Environment& env, const std::vector<std::string>& argv,
                                         std::chrono::milliseconds timeout);

// The first executable file named `name` in the snapshot's PATH (relative entries are taken
// relative to env.cwd; empty entries are skipped); nullopt when there is none.
std::optional<std::string> find_on_path(const Environment& env, std::string_view name);

} // namespace cudadiag
