#include "worker/child.hpp"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <string>
#include <sys/prctl.h>
#include <sys/resource.h>

namespace cudadiag::worker {
namespace {

using json = nlohmann::json;

constexpr int k_protocol_fd = 3;
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
      write_line({{"error", "usage: cudadiag __worker KIND ARGUMENTS... (KIND: " + known_kinds(kinds) + ")"}});
    } else {
      write_line({{"error", "unknown worker kind '" + std::string(name) + "' (known: " + known_kinds(kinds) + ")"}});
    }
    return k_exit_usage;
  }
  if (argc - 3 != kind->argument_count) {
    write_line({{"error", "usage: cudadiag __worker " + std::string(kind->name) + " " + std::string(kind->arguments)}});
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

void serve(int argc, char** argv, std::span<const WorkerKind> kinds) {
  if (::fcntl(k_protocol_fd, F_GETFD) == -1) {
    static_cast<void>(std::fputs(
        "cudadiag: __worker is internal: it talks to its parent on file descriptor 3, which is not open\n",
        stderr));
    ::_exit(k_exit_usage);
  }
  ::fcntl(k_protocol_fd, F_SETFD, FD_CLOEXEC); // nothing a library starts inherits the protocol
  g_protocol_fd = k_protocol_fd;
  const rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core); // a crashing library is a finding, not a core file in the user's cwd
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
  ::_exit(status);
}

} // namespace cudadiag::worker
