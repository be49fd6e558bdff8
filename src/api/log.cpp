#include "api/log.hpp"

#include "cudadiag/cudadiag.hpp"

#include <atomic>
#include <memory>
#include <mutex>

namespace cudadiag::api {
namespace {

struct Sink {
  LogHandler handler;
  LogLevel min_level = LogLevel::info;
};

// The minimum level of the installed handler, or k_no_handler: read without the lock on every
// would-be message, so that logging costs one atomic load when nobody listens.
constexpr int k_no_handler = 1000;
std::atomic<int> g_min_level{k_no_handler};
std::mutex g_mutex;
std::shared_ptr<const Sink> g_sink; // guarded by g_mutex; copied out to call it without the lock

} // namespace

bool log_enabled(LogLevel level) {
  return static_cast<int>(level) >= g_min_level.load(std::memory_order_relaxed);
}

void log(LogLevel level, const std::string& message) {
  if (!log_enabled(level)) {
    return;
  }
  std::shared_ptr<const Sink> sink;
  {
    const std::lock_guard lock(g_mutex);
    sink = g_sink;
  }
  if (!sink || level < sink->min_level) {
    return;
  }
  try {
    sink->handler(level, message);
  } catch (...) { // NOLINT(bugprone-empty-catch): a handler's failure must not become the caller's
  }
}

} // namespace cudadiag::api

namespace cudadiag {

void set_log_handler(LogHandler handler, LogLevel min_level) {
  std::shared_ptr<const api::Sink> sink;
  if (handler) {
    sink = std::make_shared<const api::Sink>(api::Sink{std::move(handler), min_level});
  }
  const std::lock_guard lock(api::g_mutex);
  api::g_sink = std::move(sink);
  api::g_min_level.store(api::g_sink ? static_cast<int>(min_level) : api::k_no_handler,
                         std::memory_order_relaxed);
}

} // namespace cudadiag
