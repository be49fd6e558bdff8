#include "core/command_capture.hpp"

#include "core/filesystem.hpp"
#include "core/libc_compat.hpp"

#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <sys/wait.h>

namespace cudadiag {
namespace {

using Clock = std::chrono::steady_clock;

// Closes the descriptors it owns.
class Pipe {
public:
  Pipe() = default;
  Pipe(const Pipe&) = delete;
  Pipe& operator=(const Pipe&) = delete;
  ~Pipe() {
    close_read();
    close_write();
  }
  bool open() { return ::pipe2(m_fds.data(), O_CLOEXEC) == 0; }
  [[nodiscard]] int read_end() const { return m_fds[0]; }
  [[nodiscard]] int write_end() const { return m_fds[1]; }
  void close_read() { close(0); }
  void close_write() { close(1); }

private:
  void close(std::size_t which) {
    if (m_fds[which] >= 0) {
      ::close(m_fds[which]);
      m_fds[which] = -1;
    }
  }
  std::array<int, 2> m_fds{-1, -1};
};

class SpawnSetup {
public:
  SpawnSetup() {
    m_ok = ::posix_spawn_file_actions_init(&m_actions) == 0 && ::posix_spawnattr_init(&m_attr) == 0;
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
  ~SpawnSetup() {
    ::posix_spawn_file_actions_destroy(&m_actions);
    ::posix_spawnattr_destroy(&m_attr);
  }
  [[nodiscard]] bool ok() const { return m_ok; }
  posix_spawn_file_actions_t* actions() { return &m_actions; }
  posix_spawnattr_t* attr() { return &m_attr; }

private:
  posix_spawn_file_actions_t m_actions{};
  posix_spawnattr_t m_attr{};
  bool m_ok = false;
};

int remaining_ms(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<long long>(left, 0, 3600000));
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& text : strings) {
    out.push_back(text.data());
  }
  out.push_back(nullptr);
  return out;
}

// Reads both pipes until they close or the deadline passes.
void drain(Pipe& out_pipe, Pipe& err_pipe, CommandCapture& capture, Clock::time_point deadline) {
  std::array<pollfd, 2> fds{pollfd{out_pipe.read_end(), POLLIN, 0}, pollfd{err_pipe.read_end(), POLLIN, 0}};
  const std::array<std::string*, 2> sinks{&capture.out, &capture.err};
  const std::array<std::size_t, 2> caps{k_max_command_stdout, k_max_command_stderr};
  std::array<char, 16384> buffer{};
  while (fds[0].fd >= 0 || fds[1].fd >= 0) {
    const int wait_ms = remaining_ms(deadline);
    if (wait_ms <= 0) {
      capture.timed_out = true;
      return;
    }
    const int ready = ::poll(fds.data(), fds.size(), wait_ms);
    if (ready < 0 && errno == EINTR) {
      continue;
    }
    if (ready < 0) {
      return;
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) {
        continue;
      }
      const ssize_t got = ::read(fds[i].fd, buffer.data(), buffer.size());
      if (got > 0) {
        const std::size_t room = caps[i] - std::min(caps[i], sinks[i]->size());
        capture.truncated = capture.truncated || static_cast<std::size_t>(got) > room;
        sinks[i]->append(buffer.data(), std::min(room, static_cast<std::size_t>(got)));
      } else if (got == 0 || errno != EINTR) {
        fds[i].fd = -1;
      }
    }
  }
}

} // namespace

std::string CommandCapture::outcome(std::chrono::milliseconds timeout) const {
  if (timed_out) {
    std::array<char, 32> seconds{};
    static_cast<void>(
        std::snprintf(seconds.data(), seconds.size(), "%.1f", static_cast<double>(timeout.count()) / 1000.0));
    return "timed out after " + std::string(seconds.data()) + " s (killed)";
  }
  if (signal) {
    return "killed by signal " + std::to_string(*signal);
  }
  return exit_code ? "exit " + std::to_string(*exit_code) : "unknown status";
}

Expected<CommandCapture> capture_command(const Environment& env, const std::vector<std::string>& argv,
                                         std::chrono::milliseconds timeout) {
  if (argv.empty()) {
    return Error{"no command"};
  }
  const auto start = Clock::now();
  const auto deadline = start + timeout;
  Pipe out_pipe;
  Pipe err_pipe;
  if (!out_pipe.open() || !err_pipe.open()) {
    return Error{std::string("pipe: ") + std::strerror(errno)};
  }
  SpawnSetup setup;
  if (!setup.ok()) {
    return Error{"posix_spawn setup failed"};
  }
  ::posix_spawn_file_actions_addopen(setup.actions(), 0, "/dev/null", O_RDONLY, 0);
  ::posix_spawn_file_actions_adddup2(setup.actions(), out_pipe.write_end(), 1);
  ::posix_spawn_file_actions_adddup2(setup.actions(), err_pipe.write_end(), 2);
  sigset_t none;
  sigemptyset(&none);
  sigset_t defaults;
  sigemptyset(&defaults);
  for (const int signal_number : {SIGPIPE, SIGINT, SIGTERM}) {
    sigaddset(&defaults, signal_number);
  }
  ::posix_spawnattr_setsigmask(setup.attr(), &none);
  ::posix_spawnattr_setsigdefault(setup.attr(), &defaults);
  ::posix_spawnattr_setpgroup(setup.attr(), 0);
  ::posix_spawnattr_setflags(setup.attr(), static_cast<short>(POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                                              POSIX_SPAWN_SETSIGDEF));
  std::vector<std::string> args = argv;
  if (!env.cwd.empty() && fs::is_directory(env.cwd)) {
    args = libc::spawn_in_directory(setup.actions(), env.cwd, std::move(args));
  }
  std::vector<std::string> variables;
  for (const auto& [name, value] : env.variables()) {
    variables.push_back(name);
    variables.back().append("=").append(value);
  }
  auto argv_c = c_strings(args);
  auto envp_c = c_strings(variables);
  pid_t pid = -1;
  const int rc =
      ::posix_spawn(&pid, args.front().c_str(), setup.actions(), setup.attr(), argv_c.data(), envp_c.data());
  out_pipe.close_write();
  err_pipe.close_write();
  if (rc != 0) {
    return Error{"cannot start " + argv.front() + ": " + std::strerror(rc)};
  }
  CommandCapture capture;
  drain(out_pipe, err_pipe, capture, deadline);
  int status = 0;
  bool reaped = false;
  while (!capture.timed_out && !reaped) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    reaped = done == pid || (done < 0 && errno != EINTR);
    if (!reaped && remaining_ms(deadline) <= 0) {
      capture.timed_out = true;
    } else if (!reaped) {
      ::poll(nullptr, 0, 5);
    }
  }
  if (!reaped) {
    ::kill(-pid, SIGKILL);
    ::kill(pid, SIGKILL);
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (WIFEXITED(status)) {
    capture.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    capture.signal = WTERMSIG(status);
  }
  capture.elapsed_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return capture;
}

std::optional<std::string> find_on_path(const Environment& env, std::string_view name) {
  for (const auto& entry : split_search_path(env.get("PATH").value_or(""))) {
    if (entry.empty()) {
      continue;
    }
    const auto dir = entry.front() == '/' ? entry : fs::join(env.cwd, entry);
    const auto candidate = fs::join(dir, name);
    if (fs::is_executable_file(candidate)) {
      return candidate;
    }
  }
  return std::nullopt;
}

} // namespace cudadiag
