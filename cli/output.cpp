#include "output.hpp"

#include "cli_support/cli_support.hpp"

#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/base_sink.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <sys/stat.h>
#include <sys/uio.h>
#include <vector>

namespace cudadiag::cli {
namespace {

constexpr int k_exit_internal = 3;

// What this process did with stdout; one program, one stdout.
struct StdoutState {
  bool written = false;
  int write_errno = 0; // the first failed write's errno; 0 while every write succeeded
  std::vector<std::string> errors;
  std::mutex mutex;
};

StdoutState& state() {
  static StdoutState instance;
  return instance;
}

void on_sigpipe(int /*signal*/) {}

// Writes `left` to stdout in order and flushes nothing after it: straight to the descriptor (after
// what stdio holds), many pieces per call, a short write going on from where it stopped. After a
// failed write, writes nothing more (the first error is kept).
void write_stdout_pieces(std::vector<iovec> left) {
  auto& out = state();
  if (out.write_errno != 0) {
    return;
  }
  errno = 0;
  if (std::fflush(stdout) != 0) {
    out.write_errno = errno != 0 ? errno : EIO;
    return;
  }
  left.erase(std::remove_if(left.begin(), left.end(), [](const iovec& part) { return part.iov_len == 0; }),
             left.end());
  std::size_t first = 0;
  while (first < left.size()) {
    const auto count = static_cast<int>(std::min<std::size_t>(left.size() - first, IOV_MAX));
    const ssize_t wrote = ::writev(STDOUT_FILENO, left.data() + first, count);
    if (wrote < 0) {
      if (errno == EINTR) {
        continue;
      }
      out.write_errno = errno != 0 ? errno : EIO;
      return;
    }
    out.written = true;
    auto done = static_cast<std::size_t>(wrote);
    while (first < left.size() && done >= left[first].iov_len) {
      done -= left[first].iov_len;
      ++first;
    }
    if (done > 0) {
      left[first].iov_base = static_cast<char*>(left[first].iov_base) + done;
      left[first].iov_len -= done;
    }
  }
}

class ErrorRecorder final : public spdlog::sinks::base_sink<std::mutex> {
protected:
  void sink_it_(const spdlog::details::log_msg& message) override {
    record_error(std::string_view(message.payload.data(), message.payload.size()));
  }
  void flush_() override {}
};

// %* in the log pattern: the message, control characters escaped.
class SafeMessage final : public spdlog::custom_flag_formatter {
public:
  void format(const spdlog::details::log_msg& message, const std::tm& /*time*/,
              spdlog::memory_buf_t& destination) override {
    const auto safe =
        cli_support::escape_controls(std::string_view(message.payload.data(), message.payload.size()));
    destination.append(safe.data(), safe.data() + safe.size());
  }
  [[nodiscard]] std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<SafeMessage>();
  }
};

} // namespace

std::unique_ptr<spdlog::formatter> safe_log_formatter() {
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<SafeMessage>('*').set_pattern("cudadiag: %^%l%$: %*");
  return formatter;
}

void ignore_sigpipe() {
  struct sigaction action {};
  action.sa_handler = on_sigpipe;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  ::sigaction(SIGPIPE, &action, nullptr);
}

void write_stdout(std::string_view text) {
  write_stdout_pieces({{const_cast<char*>(text.data()), text.size()}});
}

void write_stdout(const std::vector<std::string>& pieces) {
  std::vector<iovec> parts;
  parts.reserve(pieces.size());
  for (const auto& piece : pieces) {
    parts.push_back({const_cast<char*>(piece.data()), piece.size()});
  }
  write_stdout_pieces(std::move(parts));
}

void record_error(std::string_view message) {
  auto& out = state();
  const std::lock_guard lock(out.mutex);
  out.errors.emplace_back(message);
}

std::shared_ptr<spdlog::sinks::sink> error_recorder() {
  auto sink = std::make_shared<ErrorRecorder>();
  sink->set_level(spdlog::level::err);
  return sink;
}

void ProgressLine::update(std::string_view text) {
  if (!m_live) {
    return;
  }
  const std::lock_guard lock(m_mutex);
  const auto shown = cli_support::shorten_middle(
      cli_support::escape_controls("cudadiag: " + std::string(text)), m_width > 1 ? m_width - 1 : m_width);
  std::fprintf(stderr, "\r\033[K%s", shown.c_str());
  std::fflush(stderr);
  m_shown = true;
}

void ProgressLine::clear() {
  const std::lock_guard lock(m_mutex);
  if (m_shown) {
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    m_shown = false;
  }
}

bool json_requested(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") {
      return false;
    }
    if (arg == "--json") {
      return true;
    }
  }
  return false;
}

int finish_output(int code, bool json) {
  auto& out = state();
  if (json && code != 0 && !out.written && out.write_errno == 0) {
    const auto message =
        out.errors.empty() ? "cudadiag failed with exit code " + std::to_string(code) : out.errors.front();
    write_stdout(cli_support::error_document(message, code));
  }
  if (out.write_errno == 0) {
    std::fflush(stdout);
    return code;
  }
  if (out.write_errno == EPIPE) {
    return code; // the reader went away: nothing to report, and no one to report it to
  }
  std::fprintf(stderr, "cudadiag: error: cannot write to stdout: %s\n", std::strerror(out.write_errno));
  return k_exit_internal;
}

} // namespace cudadiag::cli
