#pragma once
// A once-only call, as std::call_once makes it, that costs no system call when nobody waits.
//
// std::call_once runs on glibc's pthread_once, whose slow path ends every initialization with a
// futex wake for all waiters, waiting or not: one system call per value a run computes once. A
// run computes hundreds (each directory listed, each directory's real path, each library's facts
// and symbols), and on a virtual machine, where a system call is dearer, those wakes were the
// larger part of discovery's time. Here a thread that finds the call running marks the state word
// as waited on and waits on it (C++20 atomic wait); the caller that finishes wakes the waiters only
// when the word says there are some.
//
// The contract is std::call_once's: exactly one caller runs `f` to completion; the others return
// after it has returned, seeing what it wrote. When `f` throws, the exception goes to its caller and
// the flag stays unset: the next caller (or one that waited) runs it again.

#include <atomic>

namespace cudadiag {

class OnceFlag {
public:
  OnceFlag() = default;
  OnceFlag(const OnceFlag&) = delete;
  OnceFlag& operator=(const OnceFlag&) = delete;

  template <class Function> void call(Function&& f) {
    if (m_state.load(std::memory_order_acquire) == k_done) {
      return;
    }
    for (;;) {
      int seen = k_idle;
      if (m_state.compare_exchange_strong(seen, k_running)) {
        try {
          f();
        } catch (...) {
          finish(k_idle);
          throw;
        }
        finish(k_done);
        return;
      }
      if (seen == k_done) {
        return;
      }
      // Running: say that a thread waits (unless one said so already), then wait for the change.
      if (seen == k_waited || m_state.compare_exchange_strong(seen, k_waited)) {
        m_state.wait(k_waited);
      }
    }
  }

  // Whether a call has completed (never waits).
  [[nodiscard]] bool done() const { return m_state.load(std::memory_order_acquire) == k_done; }

private:
  static constexpr int k_idle = 0;
  static constexpr int k_running = 1; // nobody waits
  static constexpr int k_waited = 2;  // running, and at least one thread waits
  static constexpr int k_done = 3;

  void finish(int state) {
    if (m_state.exchange(state) == k_waited) {
      m_state.notify_all();
    }
  }

  std::atomic<int> m_state{k_idle};
};

} // namespace cudadiag
