#include "worker/child.hpp"

#include "core/filesystem.hpp"

#include <nlohmann/json.hpp>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <vector>

namespace cudadiag::worker {
namespace {

using json = nlohmann::json;

constexpr int k_protocol_fd = 3;
constexpr int k_protocol_fd_floor = 512; // where the protocol descriptor moves to
constexpr int k_exit_usage = 2;
constexpr int k_exit_internal = 3;

// The protocol descriptor of this process when it runs as a worker; -1 otherwise.
int g_protocol_fd = -1; // NOLINT(cppcoreguidelines-avoid-non-const-global-variables)

void write_all(int fd, std::string_view data) {
  while (!data.empty()) {
    const auto written = ::write(fd, data.data(), data.size());
    if (written < 0) {
      if (errno == EINTR) {
        continue;
      }
      return;
    }
    data.remove_prefix(static_cast<std::size_t>(written));
  }
}

void write_line(const json& line) {
  if (g_protocol_fd >= 0) {
    write_all(g_protocol_fd, line.dump(-1, ' ', false, json::error_handler_t::replace) + "\n");
  }
}

// The children of process `pid` (every thread's), from /proc/PID/task/*/children.
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> children;
  const auto task_dir = "/proc/" + std::to_string(pid) + "/task";
  DIR* tasks = ::opendir(task_dir.c_str());
  if (tasks == nullptr) {
    return children;
  }
  while (const dirent* task = ::readdir(tasks)) {
    if (task->d_name[0] == '.') {
      continue;
    }
    const auto listed = fs::read_file_prefix(task_dir + "/" + task->d_name + "/children", 64U << 10U);
    if (!listed) {
      continue;
    }
    std::string_view rest(*listed);
    while (!rest.empty()) {
      const auto space = rest.find(' ');
      const auto word = rest.substr(0, space);
      pid_t child = 0;
      if (std::from_chars(word.data(), word.data() + word.size(), child).ec == std::errc() && child > 0) {
        children.push_back(child);
      }
      rest = space == std::string_view::npos ? std::string_view{} : rest.substr(space + 1);
    }
  }
  ::closedir(tasks);
  return children;
}

// SIGKILLs every descendant of this process (children, theirs, and orphans reparented here by
// PR_SET_CHILD_SUBREAPER), stopping each before listing its children so none can slip away.
void kill_descendants() {
  std::vector<pid_t> pending = children_of(::getpid());
  for (std::size_t seen = 0; !pending.empty() && seen < 4096; ++seen) {
    const pid_t pid = pending.back();
    pending.pop_back();
    ::kill(pid, SIGSTOP);
    const auto grandchildren = children_of(pid);
    pending.insert(pending.end(), grandchildren.begin(), grandchildren.end());
    ::kill(pid, SIGKILL);
  }
}

std::string known_kinds(std::span<const WorkerKind> kinds) {
  std::string out;
  for (const auto& kind : kinds) {
    out += (out.empty() ? "" : ", ") + std::string(kind.name);
  }
  return out;
}

int run_worker(int argc, char** argv, std::span<const WorkerKind> kinds) {
  const std::string_view name = argc >= 3 ? argv[2] : "";
  const auto kind =
      std::find_if(kinds.begin(), kinds.end(), [name](const WorkerKind& row) { return row.name == name; });
  if (kind == kinds.end()) {
    if (argc < 3) {
      write_line(
          {{"error", "usage: cudadiag __worker KIND ARGUMENTS... (KIND: " + known_kinds(kinds) + ")"}});
    } else {
      write_line(
          {{"error", "unknown worker kind '" + std::string(name) + "' (known: " + known_kinds(kinds) + ")"}});
    }
    return k_exit_usage;
  }
  if (argc - 3 != kind->argument_count) {
    write_line({{"error", "usage: cudadiag __worker " + std::string(kind->name) + " " +
                              std::string(kind->arguments)}});
    return k_exit_usage;
  }
  const std::string result =
      kind->run(std::span<char* const>(argv + 3, static_cast<std::size_t>(kind->argument_count)));
  write_all(g_protocol_fd, "{\"result\":" + result + "}\n");
  return 0;
}

} // namespace

void report_phase(std::string_view phase) {
  write_line({{"phase", phase}});
}

void report_phase(std::string_view phase, std::chrono::milliseconds deadline) {
  write_line({{"phase", phase}, {"deadline_ms", deadline.count()}});
}

void report_record(std::string_view record) {
  if (g_protocol_fd >= 0) {
    write_all(g_protocol_fd, "{\"record\":" + std::string(record) + "}\n");
  }
}

namespace {

// The process's data size now (VmData of /proc/self/status), in bytes; 0 when unreadable.
std::uint64_t data_size_now() {
  const auto status = fs::read_file_prefix("/proc/self/status", 1U << 16U);
  if (!status) {
    return 0;
  }
  const std::string_view text = status.value();
  const auto at = text.find("\nVmData:");
  if (at == std::string_view::npos) {
    return 0;
  }
  auto rest = text.substr(at + 8);
  while (!rest.empty() && (rest.front() == ' ' || rest.front() == '\t')) {
    rest.remove_prefix(1);
  }
  std::uint64_t kib = 0;
  const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), kib);
  return error == std::errc{} && kib < (std::uint64_t{1} << 50U) ? kib << 10U : 0;
}

// RLIMIT_DATA, soft and hard (a library cannot raise it again): the data the process already has
// plus the parent's k_memory_limit_variable (MiB). Counting from what is already mapped keeps a
// sanitizer build working (AddressSanitizer's shadow is terabytes of private writable mappings,
// which the kernel counts as data). An absent or malformed value leaves the limit as inherited.
void limit_memory() {
  const char* text = std::getenv(std::string(k_memory_limit_variable).c_str());
  if (text == nullptr) {
    return;
  }
  const std::string_view value(text);
  std::uint64_t mib = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), mib);
  if (error != std::errc{} || end != value.data() + value.size() || mib == 0 ||
      mib > (std::uint64_t{1} << 24U)) {
    return;
  }
  const auto bytes = static_cast<rlim_t>(data_size_now() + (mib << 20U));
  const rlimit data{bytes, bytes};
  ::setrlimit(RLIMIT_DATA, &data);
}

} // namespace

void serve(int argc, char** argv, std::span<const WorkerKind> kinds) {
  if (::fcntl(k_protocol_fd, F_GETFD) == -1) {
    static_cast<void>(std::fputs(
        "cudadiag: __worker is internal: it talks to its parent on file descriptor 3, which is not open\n",
        stderr));
    ::_exit(k_exit_usage);
  }
  // The protocol moves off descriptor 3 to a high one, close-on-exec: nothing a library starts
  // inherits it, and a library that writes to "fd 3" blindly reaches nothing. (A library can still
  // find it, being in this process: the parent treats every line as hostile and bounded.)
  const int moved = ::fcntl(k_protocol_fd, F_DUPFD_CLOEXEC, k_protocol_fd_floor);
  if (moved >= 0) {
    ::close(k_protocol_fd);
    g_protocol_fd = moved;
  } else {
    ::fcntl(k_protocol_fd, F_SETFD, FD_CLOEXEC);
    g_protocol_fd = k_protocol_fd;
  }
  // Orphans of whatever a library starts (a daemon that double-forks) become this process's
  // children, and are killed with the rest before it exits (the parent also sweeps by session).
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core); // a crashing library is a finding, not a core file in the user's cwd
  limit_memory();
  ::prctl(PR_SET_PDEATHSIG, SIGKILL); // never outlive the parent
  int status = k_exit_internal;
  try {
    status = run_worker(argc, argv, kinds);
  } catch (const std::exception& error) {
    write_line({{"error", std::string("internal error: ") + error.what()}});
  } catch (...) {
    write_line({{"error", "internal error"}});
  }
  // End here: the loaded libraries' destructors and atexit handlers (a driver's teardown) never run,
  // so they can neither crash nor slow down a worker whose answer is already written.
  static_cast<void>(std::fflush(nullptr));
  kill_descendants();
  ::_exit(status);
}

} // namespace cudadiag::worker
