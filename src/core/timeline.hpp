#pragma once
// Where a run's time goes, thread by thread: spans (what, a detail, the thread, start and end) kept
// in memory for bench/bench_timeline, and for the `cudadiag` process when CUDADIAG_TIMELINE_OUT names
// a file (written at exit). Recorded only in a build configured with
// -DCUDADIAG_TIMELINE=ON; otherwise a Span is an empty object the compiler removes, and the product
// carries no cost for it.
//
// Contract: at most `capacity` spans are kept between two clear() calls (later ones are counted as
// dropped); clear() and write() must not run while a span is being recorded.

#include <array>
#include <cstddef>
#include <cstdio>
#include <string_view>

namespace cudadiag::timeline {

#if defined(CUDADIAG_TIMELINE)

inline constexpr std::size_t capacity = 1U << 16;

class Span {
public:
  // `what` must outlive the run (a string literal); `detail` is copied, its last 47 bytes (a path's
  // end: its file name), spaces as '_'. Pass a path as it is: nothing is computed for a span.
  explicit Span(const char* what, std::string_view detail = {}) noexcept;
  ~Span();
  Span(const Span&) = delete;
  Span& operator=(const Span&) = delete;

private:
  const char* m_what;
  std::array<char, 48> m_detail{}; // copied: the caller's string may be a temporary
  long long m_start_ns;
};

inline constexpr bool enabled = true;
// Forgets every span kept.
void clear() noexcept;
// One line per span, in the order they ended: "THREAD START_US END_US WHAT DETAIL", times from the
// last clear(); then "# dropped N".
void write(std::FILE* out);

#else

class Span {
public:
  explicit Span(const char* /*what*/, std::string_view /*detail*/ = {}) noexcept {}
};

inline constexpr bool enabled = false;
inline void clear() noexcept {}
inline void write(std::FILE* /*out*/) {}

#endif

} // namespace cudadiag::timeline
