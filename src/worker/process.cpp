#include "worker/process.hpp"

#include "core/bounded_json.hpp"
#include "core/expected.hpp"
#include "core/filesystem.hpp"
#include "core/libc_compat.hpp"
#include "worker/child.hpp"

#include <nlohmann/json.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <vector>

namespace cudadiag::worker {
namespace {

using json = nlohmann::json;
using Clock = std::chrono::steady_clock;

constexpr int k_protocol_fd = 3; // the child's end of the protocol pipe
constexpr int k_passed_fd = 4;   // WorkerStep::pass_fd in the child
constexpr std::size_t k_stderr_tail_bytes = 2048;
constexpr std::size_t k_max_line_bytes = std::size_t{16} << 20U; // a result with many devices stays far below
// Every line is hostile until parsed (a loaded library can write to the protocol descriptor): at
// most this deep, and per step at most this many records and bytes in all (a full self-test on 8
// GPUs sends about 100 records, a few MiB).
constexpr std::size_t k_max_line_depth = 32;
constexpr std::size_t k_max_records = 4096;
constexpr std::size_t k_max_step_bytes = std::size_t{64} << 20U;
constexpr int k_lowest_parent_fd = 10; // pipe ends the parent keeps, above anything dup2'd in the child
// How long a killed child may take to die (it may be in uninterruptible sleep inside a kernel driver)
// before the parent stops waiting and leaves the reaping to a background thread.
constexpr auto k_kill_grace = std::chrono::seconds(2);
constexpr auto k_poll_slice = std::chrono::milliseconds(100);
constexpr auto k_exit_poll_slice = std::chrono::milliseconds(2);

std::string errno_text(int error) {
  return std::strerror(error);
}

std::string seconds_text(std::chrono::milliseconds duration) {
  std::array<char, 32> buffer{};
  const double seconds = static_cast<double>(duration.count()) / 1000.0;
  static_cast<void>(std::snprintf(buffer.data(), buffer.size(),
                                  duration.count() % 1000 == 0 ? "%.0f s" : "%.1f s", seconds));
  return buffer.data();
}

// Moves `fd` to a close-on-exec descriptor >= k_lowest_parent_fd; closes the original.
int move_high(int fd) {
  const int moved = ::fcntl(fd, F_DUPFD_CLOEXEC, k_lowest_parent_fd);
  ::close(fd);
  return moved;
}

void close_fd(int& fd) {
  if (fd >= 0) {
    ::close(fd);
    fd = -1;
  }
}

void close_pipes(std::array<int, 2>& first, std::array<int, 2>& second) {
  for (auto* pipe : {&first, &second}) {
    close_fd((*pipe)[0]);
    close_fd((*pipe)[1]);
  }
}

// Moves both ends of both pipes above k_lowest_parent_fd; false (all closed) when one cannot be moved.
bool move_pipes_high(std::array<int, 2>& first, std::array<int, 2>& second) {
  bool moved = true;
  for (auto* pipe : {&first, &second}) {
    for (int& fd : *pipe) {
      fd = move_high(fd);
      moved = moved && fd >= 0;
    }
  }
  if (!moved) {
    close_pipes(first, second);
  }
  return moved;
}

// One running child and what it has said so far.
class Child {
public:
  Child(const WorkerStep& step, const WorkerOptions& options)
      : m_timeout(options.step_timeout),
        m_budget(options.step_budget.count() > 0 ? std::max(options.step_budget, options.step_timeout)
                                                 : options.step_timeout),
        m_arguments(step.arguments), m_pass_fd(step.pass_fd), m_term_grace(step.term_grace),
        m_on_record(options.on_record) {
    outcome.id = step.id;
    outcome.kind = step.kind;
    outcome.path = step.path;
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  // Kills and reaps a child that is still around (only on an unexpected exit from run_steps).
  ~Child() {
    if (m_pid > 0) {
      ::kill(-m_pid, SIGKILL);
      ::waitpid(m_pid, nullptr, 0);
    }
    close_fd(m_protocol_fd);
    close_fd(m_stderr_fd);
  }

  StepOutcome outcome;

  // Starts `executable __worker KIND PATH`; on failure the outcome is final (status error).
  void start(const std::string& executable, char* const* envp, const std::string& cwd) {
    m_start = Clock::now();
    m_deadline = m_start + m_timeout;
    m_hard_deadline = m_start + m_budget;
    if (auto spawned = spawn(executable, envp, cwd); !spawned) {
      outcome.status = StepStatus::error;
      outcome.detail = "could not start the worker " + executable + ": " + spawned.error().message;
      m_done = true;
    }
  }

  [[nodiscard]] bool done() const { return m_done; }

  // Adds this child's open pipes to `fds` and shortens `wait` to this child's next event.
  void prepare_poll(std::vector<pollfd>& fds, std::vector<Child*>& owners, Clock::time_point now,
                    Clock::duration& wait) {
    for (const int fd : {m_protocol_fd, m_stderr_fd}) {
      if (fd >= 0) {
        fds.push_back(pollfd{fd, POLLIN, 0});
        owners.push_back(this);
      }
    }
    const auto next = m_killed_at ? *m_killed_at + k_kill_grace : m_deadline;
    wait = std::min(wait, std::max(Clock::duration::zero(), next - now));
    if ((m_protocol_fd < 0 && m_stderr_fd < 0) || m_killed_at) {
      wait = std::min<Clock::duration>(wait, k_exit_poll_slice); // waiting for the exit itself
    }
  }

  // Reads whatever is available on `fd` (one of ours) without blocking.
  void drain(int fd) {
    std::array<char, 65536> buffer{};
    for (;;) {
      const auto got = ::read(fd, buffer.data(), buffer.size());
      if (got > 0) {
        const std::string_view chunk(buffer.data(), static_cast<std::size_t>(got));
        if (fd == m_protocol_fd) {
          take_protocol(chunk);
        } else {
          take_stderr(chunk);
        }
        continue;
      }
      if (got < 0 && errno == EINTR) {
        continue;
      }
      if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        return;
      }
      (fd == m_protocol_fd ? m_protocol_fd : m_stderr_fd) = -1; // end of file or a read error
      ::close(fd);
      return;
    }
  }

  // Kills the child at its deadline, and finishes it once it has exited.
  void advance(Clock::time_point now) {
    if (m_done) {
      return;
    }
    if (!m_killed_at && now >= m_deadline) {
      m_timed_out = true;
      if (m_term_grace.count() > 0 && !m_termed_at) {
        ::kill(-m_pid, SIGTERM); // it ends itself (WorkerStep::term_grace); SIGKILL after the grace
        m_termed_at = now;
        m_deadline = now + m_term_grace;
      } else {
        kill_group(now);
      }
    }
    siginfo_t info{};
    const int waited = ::waitid(P_PID, static_cast<id_t>(m_pid), &info, WEXITED | WNOHANG | WNOWAIT);
    if (waited == 0 && info.si_pid == m_pid) {
      finish(now, true);
    } else if (waited != 0 && errno == ECHILD) {
      finish(now, false); // someone else reaped it (SIGCHLD ignored): the exit status is unknown
    } else if (m_killed_at && now >= *m_killed_at + k_kill_grace) {
      abandon(now);
    }
  }

private:
  Expected<void> spawn(const std::string& executable, char* const* envp, const std::string& cwd) {
    std::array<int, 2> protocol{-1, -1};
    std::array<int, 2> errors{-1, -1};
    if (::pipe2(protocol.data(), O_CLOEXEC) != 0 || ::pipe2(errors.data(), O_CLOEXEC) != 0) {
      Error error{"pipe: " + errno_text(errno)};
      close_pipes(protocol, errors);
      return error;
    }
    if (!move_pipes_high(protocol, errors)) {
      return Error{"fcntl: " + errno_text(errno)};
    }

    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attributes;
    ::posix_spawn_file_actions_init(&actions);
    ::posix_spawnattr_init(&attributes);
    ::posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    ::posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
    ::posix_spawn_file_actions_adddup2(&actions, errors[1], STDERR_FILENO);
    ::posix_spawn_file_actions_adddup2(&actions, protocol[1], k_protocol_fd);
    if (m_pass_fd >= 0) {
      ::posix_spawn_file_actions_adddup2(&actions, m_pass_fd, k_passed_fd);
    }
    // Nothing else of this process reaches the child: descriptors an embedding application left
    // inheritable are closed there, so a loaded library can neither write into them nor hold them.
    libc::add_close_from(&actions, m_pass_fd >= 0 ? k_passed_fd + 1 : k_protocol_fd + 1);
    sigset_t no_signals;
    sigset_t all_signals;
    sigemptyset(&no_signals);
    sigfillset(&all_signals);
    ::posix_spawnattr_setflags(&attributes,
                               POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    ::posix_spawnattr_setpgroup(&attributes,
                                0); // a group of its own, so a timeout kills everything it started
    ::posix_spawnattr_setsigmask(&attributes, &no_signals);
    ::posix_spawnattr_setsigdefault(&attributes, &all_signals);

    std::vector<std::string> arguments = {executable, "__worker", outcome.kind, outcome.path};
    arguments.insert(arguments.end(), m_arguments.begin(), m_arguments.end());
    if (!cwd.empty() && fs::is_directory(cwd)) {
      arguments = libc::spawn_in_directory(&actions, cwd, std::move(arguments));
    }
    std::vector<char*> argv;
    for (auto& argument : arguments) {
      argv.push_back(argument.data());
    }
    argv.push_back(nullptr);
    pid_t pid = -1;
    const int spawned = ::posix_spawn(&pid, argv.front(), &actions, &attributes, argv.data(), envp);
    ::posix_spawn_file_actions_destroy(&actions);
    ::posix_spawnattr_destroy(&attributes);
    close_fd(protocol[1]);
    close_fd(errors[1]);
    if (spawned != 0) {
      close_fd(protocol[0]);
      close_fd(errors[0]);
      return Error{errno_text(spawned)};
    }
    m_pid = pid;
    m_protocol_fd = protocol[0];
    m_stderr_fd = errors[0];
    for (const int fd : {m_protocol_fd, m_stderr_fd}) {
      ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    }
    return {};
  }

  void kill_group(Clock::time_point now) {
    ::kill(-m_pid, SIGKILL);
    m_killed_at = now;
  }

  void take_protocol(std::string_view chunk) {
    m_line += chunk;
    std::size_t newline = 0;
    while ((newline = m_line.find('\n')) != std::string::npos) {
      take_line(std::string_view(m_line).substr(0, newline));
      m_line.erase(0, newline + 1);
    }
    if (m_line.size() > k_max_line_bytes) {
      refuse("a protocol line longer than " + std::to_string(k_max_line_bytes) + " bytes");
      m_line.clear();
    }
  }

  // Ends a step whose protocol broke a limit: the reason is kept (the first one) and the child
  // killed, since nothing it sends afterwards is believed.
  void refuse(std::string reason) {
    if (m_protocol_error.empty()) {
      m_protocol_error = std::move(reason);
    }
    if (!m_killed_at && m_pid > 0) {
      kill_group(Clock::now());
    }
  }

  // A deadline_ms value as a duration within [0, the step's budget]; nullopt when not an integer.
  [[nodiscard]] std::optional<std::chrono::milliseconds> announced_deadline(const json& value) const {
    if (value.is_number_unsigned()) {
      const auto asked = value.get<std::uint64_t>();
      return std::chrono::milliseconds(static_cast<std::int64_t>(
          std::min<std::uint64_t>(asked, static_cast<std::uint64_t>(m_budget.count()))));
    }
    if (value.is_number_integer()) {
      return std::chrono::milliseconds(0); // negative: due now
    }
    return std::nullopt;
  }

  void take_line(std::string_view line) {
    if (line.empty()) {
      return;
    }
    if (m_killed_at && !m_protocol_error.empty()) {
      return; // refused: nothing more is believed
    }
    m_received_bytes += line.size();
    if (m_received_bytes > k_max_step_bytes) {
      refuse("more than " + std::to_string(k_max_step_bytes >> 20U) + " MiB of protocol lines");
      return;
    }
    auto parsed = bounded_json::parse(line, {k_max_line_depth, k_max_line_bytes});
    if (const auto* failure = std::get_if<bounded_json::Failure>(&parsed)) {
      refuse("an unreadable protocol line (" + failure->message() + "): " + std::string(line.substr(0, 120)));
      return;
    }
    const auto& message = std::get<json>(parsed);
    if (message.is_object() && message.contains("phase") && message["phase"].is_string()) {
      outcome.last_phase = message["phase"].get<std::string>();
      if (message.contains("deadline_ms") && !m_killed_at) {
        // A worker may move its deadline (a self-test announcing its next test), within the
        // step's budget: never past the hard deadline set when it started.
        if (const auto announced = announced_deadline(message["deadline_ms"])) {
          m_timeout = *announced;
          m_deadline = std::min(Clock::now() + *announced, m_hard_deadline);
        }
      }
    } else if (message.is_object() && message.contains("record")) {
      if (outcome.records.size() >= k_max_records) {
        refuse("more than " + std::to_string(k_max_records) + " records");
        return;
      }
      outcome.records.push_back(message["record"].dump(-1, ' ', false, json::error_handler_t::replace));
      if (m_on_record) {
        m_on_record(outcome, outcome.records.back());
      }
    } else if (message.is_object() && message.contains("result") && message["result"].is_object()) {
      outcome.result = message["result"].dump(-1, ' ', false, json::error_handler_t::replace);
    } else if (message.is_object() && message.contains("error") && message["error"].is_string()) {
      m_child_error = message["error"].get<std::string>();
    } else if (m_protocol_error.empty()) {
      m_protocol_error = "an unreadable protocol line: " + std::string(line.substr(0, 120));
    }
  }

  void take_stderr(std::string_view chunk) {
    outcome.stderr_tail += chunk;
    if (outcome.stderr_tail.size() > 2 * k_stderr_tail_bytes) {
      outcome.stderr_tail.erase(0, outcome.stderr_tail.size() - k_stderr_tail_bytes);
    }
  }

  // The child has exited (a zombie, not yet reaped) or was reaped elsewhere (`reapable` false).
  void finish(Clock::time_point now, bool reapable) {
    for (const int fd : {m_protocol_fd, m_stderr_fd}) {
      if (fd >= 0) {
        drain(fd);
      }
    }
    int status = 0;
    bool have_status = false;
    if (reapable) {
      ::kill(-m_pid, SIGKILL); // anything it left running in its group; the zombie keeps the group id ours
      have_status = ::waitpid(m_pid, &status, 0) == m_pid;
    }
    m_pid = -1;
    close_fd(m_protocol_fd);
    close_fd(m_stderr_fd);
    if (!m_line.empty() && m_protocol_error.empty()) {
      take_line(m_line); // a last line without its newline
    }
    m_line.clear();
    m_done = true;
    outcome.elapsed_ms = std::chrono::duration<double, std::milli>(now - m_start).count();
    if (outcome.stderr_tail.size() > k_stderr_tail_bytes) {
      outcome.stderr_tail.erase(0, outcome.stderr_tail.size() - k_stderr_tail_bytes);
    }
    classify(have_status, status);
  }

  // Gives up on a killed child that does not die (stuck in the kernel): a detached thread reaps it
  // whenever it does, so it never lingers as a zombie.
  void abandon(Clock::time_point now) {
    const pid_t pid = m_pid;
    m_pid = -1;
    try {
      std::thread([pid] { ::waitpid(pid, nullptr, 0); }).detach();
    } catch (const std::exception&) { // no thread: it is reparented to init when this process ends
    }
    close_fd(m_protocol_fd);
    close_fd(m_stderr_fd);
    m_done = true;
    outcome.elapsed_ms = std::chrono::duration<double, std::milli>(now - m_start).count();
    outcome.status = StepStatus::timeout;
    outcome.detail = "timed out after " + seconds_text(m_timeout) + " " + where() +
                     "; it did not exit after SIGKILL (stuck in the kernel?)";
  }

  [[nodiscard]] std::string where() const {
    return "while loading " + outcome.path +
           (outcome.last_phase.empty() ? "" : " (in " + outcome.last_phase + ")");
  }

  void classify(bool have_status, int status) {
    if (!m_protocol_error.empty() && m_killed_at &&
        !m_timed_out) { // refused and killed: the limit is the cause
      outcome.status = StepStatus::error;
      outcome.detail = "the worker sent " + m_protocol_error + " " + where() + "; it was stopped";
      outcome.result.clear();
      return;
    }
    if (m_timed_out) {
      outcome.status = StepStatus::timeout;
      outcome.detail = "timed out after " + seconds_text(m_timeout) + " " + where();
      outcome.result.clear();
      return;
    }
    if (have_status && WIFSIGNALED(status)) {
      outcome.status = StepStatus::crashed;
      outcome.signal = WTERMSIG(status);
      outcome.detail = "killed by " + libc::signal_name(WTERMSIG(status)) + " " + where();
      return;
    }
    if (have_status && WIFEXITED(status)) {
      outcome.exit_code = WEXITSTATUS(status);
    }
    const bool exited_zero = !have_status || outcome.exit_code == 0;
    if (exited_zero && !outcome.result.empty() && m_protocol_error.empty() && !m_child_error) {
      outcome.status = StepStatus::ok;
      return;
    }
    outcome.status = StepStatus::error;
    if (m_child_error) {
      outcome.detail = "the worker failed: " + *m_child_error;
    } else if (!exited_zero) {
      outcome.detail = "the worker exited with status " + std::to_string(*outcome.exit_code) + " " + where();
    } else if (!m_protocol_error.empty()) {
      outcome.detail = "the worker sent " + m_protocol_error;
    } else {
      outcome.detail = "the worker exited without a result " + where();
    }
  }

  std::chrono::milliseconds m_timeout; // the deadline last set: step_timeout, then each deadline_ms
  std::chrono::milliseconds m_budget;  // the hard limit of the whole step
  std::vector<std::string> m_arguments;
  int m_pass_fd = -1;
  std::chrono::milliseconds m_term_grace{0};    // WorkerStep::term_grace
  std::optional<Clock::time_point> m_termed_at; // when SIGTERM was sent at the deadline
  std::function<void(const StepOutcome&, const std::string&)> m_on_record;
  pid_t m_pid = -1;
  int m_protocol_fd = -1;
  int m_stderr_fd = -1;
  Clock::time_point m_start{};
  Clock::time_point m_deadline{};
  Clock::time_point m_hard_deadline{};
  std::optional<Clock::time_point> m_killed_at;
  std::size_t m_received_bytes = 0;
  bool m_timed_out = false;
  bool m_done = false;
  std::string m_line;                       // the protocol line being received
  std::string m_protocol_error;             // what was wrong with the protocol, "" when nothing
  std::optional<std::string> m_child_error; // the child's {"error": ...}
};

// The variable that marks every process a run of workers starts, whatever group or session it
// moves to: "CUDADIAG_WORKER_SESSION=<pid>.<random>", unique to the run.
std::string session_variable() {
  std::random_device entropy;
  const std::uint64_t random = (std::uint64_t{entropy()} << 32U) ^ entropy();
  return "CUDADIAG_WORKER_SESSION=" + std::to_string(::getpid()) + "." + std::to_string(random);
}

constexpr std::string_view k_session_name = "CUDADIAG_WORKER_SESSION";
// The sessions of the runs above this one (a worker that starts workers), comma-separated, so that
// each enclosing run's sweep finds what its workers started.
constexpr std::string_view k_outer_sessions_name = "CUDADIAG_WORKER_OUTER_SESSIONS";

// Whether the environment block `environ` (NUL-separated) belongs to the run whose session value
// is `value`, and whether it is marked as ending itself on SIGTERM.
struct SessionMatch {
  bool member = false;
  bool ends_on_sigterm = false;
};
SessionMatch match_session(std::string_view environ, std::string_view value) {
  SessionMatch match;
  while (!environ.empty()) {
    const auto end = environ.find('\0');
    const auto entry = environ.substr(0, end);
    environ = end == std::string_view::npos ? std::string_view() : environ.substr(end + 1);
    const auto equals = entry.find('=');
    if (equals == std::string_view::npos) {
      continue;
    }
    const auto name = entry.substr(0, equals);
    auto text = entry.substr(equals + 1);
    if (name == k_session_name && text == value) {
      match.member = true;
    } else if (name == k_outer_sessions_name) {
      while (!text.empty()) {
        const auto comma = text.find(',');
        match.member = match.member || text.substr(0, comma) == value;
        text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
      }
    } else if (name == k_ends_on_sigterm_variable && text == "1") {
      match.ends_on_sigterm = true;
    }
  }
  return match;
}

// Whether `pid` has gone (no longer exists, or is a zombie).
bool gone(pid_t pid) {
  const auto stat = fs::read_file_prefix("/proc/" + std::to_string(pid) + "/stat", 4096);
  if (!stat) {
    return true;
  }
  const auto close = stat->rfind(')');
  return close == std::string::npos || close + 2 >= stat->size() || (*stat)[close + 2] == 'Z' ||
         (*stat)[close + 2] == 'X';
}

// Ends every process of the run whose session variable is `variable`: one whose environment holds
// it (a daemon a library double-forked out of its worker's process group keeps the variable it
// inherited) or names its value among the outer sessions (started by a worker of this run). Only
// processes this user may read are seen, which covers everything a worker started. A process marked
// k_ends_on_sigterm_variable gets SIGTERM and up to k_sweep_term_grace to end itself before
// SIGKILL; every other one gets SIGKILL at once. Two passes: one that was forking during the first
// is caught by the second.
void sweep_session(const std::string& variable) {
  const std::string_view value = std::string_view(variable).substr(k_session_name.size() + 1);
  for (int pass = 0; pass < 2; ++pass) {
    DIR* proc = ::opendir("/proc");
    if (proc == nullptr) {
      return;
    }
    bool killed = false;
    std::vector<pid_t> ending;
    while (const dirent* entry = ::readdir(proc)) {
      pid_t pid = 0;
      const std::string_view name(entry->d_name);
      if (std::from_chars(name.data(), name.data() + name.size(), pid).ec != std::errc() || pid <= 1 ||
          pid == ::getpid()) {
        continue;
      }
      const auto environ = fs::read_file_prefix("/proc/" + std::string(name) + "/environ", 1U << 20U);
      if (!environ) {
        continue;
      }
      const auto match = match_session(*environ, value);
      if (!match.member) {
        continue;
      }
      if (match.ends_on_sigterm) {
        ::kill(pid, SIGTERM);
        ending.push_back(pid);
      } else {
        ::kill(pid, SIGKILL);
      }
      killed = true;
    }
    ::closedir(proc);
    const auto give_up = Clock::now() + k_sweep_term_grace;
    while (!ending.empty()) {
      std::erase_if(ending, gone);
      if (ending.empty() || Clock::now() >= give_up) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    for (const pid_t pid : ending) {
      ::kill(pid, SIGKILL); // it did not end itself in time
    }
    if (!killed) {
      return;
    }
  }
}

std::vector<StepOutcome> run_all(const std::vector<WorkerStep>& steps, const WorkerOptions& options,
                                 const Environment& env) {
  std::vector<std::string> variables;
  variables.reserve(env.variables().size() + 2);
  std::string outer_sessions;
  for (const auto& [name, value] : env.variables()) {
    if (name == k_session_name || name == k_outer_sessions_name) {
      // A worker starting workers marks them with a session of its own, and lists the sessions above.
      if (!value.empty()) {
        outer_sessions += (outer_sessions.empty() ? "" : ",") + value;
      }
      continue;
    }
    if (name == k_memory_limit_variable || name == k_ends_on_sigterm_variable) {
      continue; // a limit of its own, and the mark only where a step asks for it
    }
    auto& variable = variables.emplace_back(name);
    variable += '=';
    variable += value;
  }
  const std::string session = session_variable();
  variables.push_back(session);
  if (!outer_sessions.empty()) {
    variables.push_back(std::string(k_outer_sessions_name) + "=" + outer_sessions);
  }
  if (const auto limit = options.memory_limit_mb.value_or(memory_limit_mb(env)); limit > 0) {
    variables.push_back(std::string(k_memory_limit_variable) + "=" + std::to_string(limit));
  }
  std::vector<char*> envp;
  envp.reserve(variables.size() + 1);
  for (auto& variable : variables) {
    envp.push_back(variable.data());
  }
  envp.push_back(nullptr);
  // The same, marked as ending itself on SIGTERM, for the steps with a term_grace.
  std::string ends_on_sigterm = std::string(k_ends_on_sigterm_variable) + "=1";
  std::vector<char*> envp_ends_on_sigterm(envp.begin(), envp.end() - 1);
  envp_ends_on_sigterm.push_back(ends_on_sigterm.data());
  envp_ends_on_sigterm.push_back(nullptr);

  std::vector<std::unique_ptr<Child>> children;
  children.reserve(steps.size());
  for (const auto& step : steps) {
    children.push_back(std::make_unique<Child>(step, options));
    children.back()->start(options.executable,
                           step.term_grace.count() > 0 ? envp_ends_on_sigterm.data() : envp.data(), env.cwd);
  }

  std::vector<pollfd> fds;
  std::vector<Child*> owners;
  for (;;) {
    auto now = Clock::now();
    for (auto& child : children) {
      child->advance(now);
    }
    if (std::all_of(children.begin(), children.end(), [](const auto& child) { return child->done(); })) {
      break;
    }
    fds.clear();
    owners.clear();
    Clock::duration wait = k_poll_slice;
    for (auto& child : children) {
      if (!child->done()) {
        child->prepare_poll(fds, owners, now, wait);
      }
    }
    const auto wait_ms = std::chrono::ceil<std::chrono::milliseconds>(wait).count();
    const int ready = ::poll(fds.data(), fds.size(), static_cast<int>(wait_ms));
    if (ready <= 0) {
      continue; // timeout or EINTR
    }
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents != 0) {
        owners[i]->drain(fds[i].fd);
      }
    }
  }

  sweep_session(session);
  std::vector<StepOutcome> outcomes;
  outcomes.reserve(children.size());
  for (auto& child : children) {
    outcomes.push_back(std::move(child->outcome));
  }
  return outcomes;
}

} // namespace

std::string_view to_string(StepStatus status) {
  switch (status) {
  case StepStatus::ok: return "ok";
  case StepStatus::crashed: return "crashed";
  case StepStatus::timeout: return "timeout";
  case StepStatus::error: return "error";
  }
  return "error";
}

std::optional<StepStatus> parse_step_status(std::string_view text) {
  for (const auto status : {StepStatus::ok, StepStatus::crashed, StepStatus::timeout, StepStatus::error}) {
    if (to_string(status) == text) {
      return status;
    }
  }
  return std::nullopt;
}

std::uint64_t memory_limit_mb(const Environment& env) {
  const auto text = env.non_empty("CUDADIAG_WORKER_MEMORY_MB");
  std::uint64_t value = 0;
  if (!text) {
    return k_default_memory_limit_mb;
  }
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (error != std::errc{} || end != text->data() + text->size() || (value != 0 && value < 64) ||
      value > (std::uint64_t{1} << 24U)) {
    return k_default_memory_limit_mb;
  }
  return value;
}

std::vector<StepOutcome> run_steps(const std::vector<WorkerStep>& steps, const WorkerOptions& options,
                                   const Environment& env) {
  try {
    return run_all(steps, options, env);
  } catch (const std::exception& error) { // children were killed and reaped by ~Child
    std::vector<StepOutcome> outcomes;
    for (const auto& step : steps) {
      StepOutcome outcome;
      outcome.id = step.id;
      outcome.kind = step.kind;
      outcome.path = step.path;
      outcome.status = StepStatus::error;
      outcome.detail = std::string("internal error while running the worker: ") + error.what();
      outcomes.push_back(std::move(outcome));
    }
    return outcomes;
  }
}

} // namespace cudadiag::worker
