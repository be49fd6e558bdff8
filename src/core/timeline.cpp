#include "core/timeline.hpp"

#if defined(CUDADIAG_TIMELINE)

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <memory>

namespace cudadiag::timeline {
namespace {

struct Record {
  unsigned thread;
  long long start_ns;
  long long end_ns;
  const char* what;
  std::array<char, 48> detail;
};

long long now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Written by the span that claimed its index; read by write() only when no span is recording.
std::unique_ptr<Record[]> g_records(new Record[capacity]);
std::atomic<std::size_t> g_claimed{0};
std::atomic<long long> g_origin_ns{now_ns()};
std::atomic<unsigned> g_next_thread{0};

unsigned this_thread_number() {
  thread_local const unsigned number = g_next_thread++;
  return number;
}

} // namespace

Span::Span(const char* what, std::string_view detail) noexcept : m_what(what) {
  const auto length = std::min(detail.size(), m_detail.size() - 1);
  std::memcpy(m_detail.data(), detail.data() + (detail.size() - length), length);
  std::replace(m_detail.begin(), m_detail.begin() + static_cast<std::ptrdiff_t>(length), ' ', '_');
  m_start_ns = now_ns();
}

Span::~Span() {
  const auto index = g_claimed.fetch_add(1, std::memory_order_relaxed);
  if (index >= capacity) {
    return;
  }
  auto& record = g_records[index];
  record.thread = this_thread_number();
  record.start_ns = m_start_ns;
  record.end_ns = now_ns();
  record.what = m_what;
  record.detail = m_detail;
}

void clear() noexcept {
  g_claimed = 0;
  g_origin_ns = now_ns();
}

void write(std::FILE* out) {
  const auto claimed = g_claimed.load();
  const auto kept = std::min(claimed, capacity);
  const auto origin = g_origin_ns.load();
  for (std::size_t i = 0; i < kept; ++i) {
    const auto& record = g_records[i];
    std::fprintf(out, "%u %.1f %.1f %s %s\n", record.thread,
                 static_cast<double>(record.start_ns - origin) / 1e3,
                 static_cast<double>(record.end_ns - origin) / 1e3, record.what,
                 record.detail[0] != '\0' ? record.detail.data() : "-");
  }
  std::fprintf(out, "# dropped %zu\n", claimed - kept);
}

} // namespace cudadiag::timeline

#endif
