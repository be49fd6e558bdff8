#pragma once
// stdout and error reporting for the cudadiag program. Every command writes its document through
// write_stdout() and reports failures through spdlog (or record_error()), so that run() can keep
// two promises in one place (finish_output):
// - with --json, stdout carries one JSON document whatever happened: when a failing command
//   printed nothing, the error document of report/error_document.hpp;
// - a reader that goes away (`cudadiag --json | head -c1`) ends the command quietly: SIGPIPE does
//   not kill cudadiag, nothing more is written, and the exit code is the command's own. Any other
//   failure to write stdout (a full disk, a closed descriptor) is an error on stderr, exit 3.

#include <spdlog/formatter.h>
#include <spdlog/sinks/sink.h>

#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::cli {

// Makes SIGPIPE harmless in this process (writes to a pipe without a reader fail with EPIPE).
// A caught signal, unlike an ignored one, gets its default action back in children on exec, so
// the workers and commands cudadiag starts behave as if it had never been touched.
void ignore_sigpipe();

// Writes `text` to stdout and flushes; after a failed write, writes nothing more.
void write_stdout(std::string_view text);
// The same for a text in pieces, written in order (a large JSON report: one writev, no copy).
void write_stdout(const std::vector<std::string>& pieces);

// Remembers an error message for the JSON error document; the first one is its message.
void record_error(std::string_view message);

// A spdlog sink that calls record_error() for every message of level error or worse.
std::shared_ptr<spdlog::sinks::sink> error_recorder();

// The log format on stderr, "cudadiag: LEVEL: message", with the message passed through
// cli_support::escape_controls: logged paths and library strings cannot drive the terminal either.
std::unique_ptr<spdlog::formatter> safe_log_formatter();

// A live status line on stderr for a person watching a terminal: each update() replaces it (cut
// to `width` columns, control characters escaped), clear() removes it; when not `live`, nothing.
// Safe to call from several threads.
class ProgressLine {
public:
  ProgressLine(bool live, std::size_t width) : m_live(live), m_width(width) {}
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  ~ProgressLine() { clear(); }
  void update(std::string_view text);
  void clear();

private:
  bool m_live;
  std::size_t m_width;
  bool m_shown = false;
  std::mutex m_mutex;
};

// True when `--json` is among the arguments (before a "--"), whether or not parsing succeeds.
bool json_requested(int argc, char** argv);

// The exit code of the program for a command that returned `code`, after the error document
// (json, a nonzero code and nothing written yet) and the check that stdout took everything.
int finish_output(int code, bool json);

} // namespace cudadiag::cli
