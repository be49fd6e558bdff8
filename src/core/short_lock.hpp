#pragma once
// A mutex for critical sections of a few hundred nanoseconds (a hash-map lookup or insert), taken
// by many threads at once: a thread that finds it held spins briefly before it sleeps.
//
// glibc's pthread_mutex and pthread_rwlock put a thread to sleep (a futex system call, and later a
// wake-up and a context switch) the moment they find the lock held. For a lock held for a lookup
// that costs a hundred times the wait it avoids: on a 16-CPU virtual machine, discovery's threads
// met each other in the maps' locks hundreds of times per run, and the closures ran slower on 8
// threads than on one. Here the waiter spins (with the CPU's pause hint) for about as long as a
// lookup takes, then waits on the lock word (C++20 atomic wait: a futex on Linux); unlock wakes a
// sleeper only when one said it sleeps.
//
// Meets the Lockable requirements (std::lock_guard, std::unique_lock). Not recursive, not fair.

#include <atomic>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace cudadiag {

class ShortLock {
public:
  ShortLock() = default;
  ShortLock(const ShortLock&) = delete;
  ShortLock& operator=(const ShortLock&) = delete;

  void lock() {
    for (int spin = 0; spin < k_spins; ++spin) {
      if (try_lock()) {
        return;
      }
      while (m_state.load(std::memory_order_relaxed) != k_free && ++spin < k_spins) {
        relax();
      }
    }
    // Held for longer than a lookup: say that a thread sleeps, and sleep until the word changes.
    while (m_state.exchange(k_held_waited, std::memory_order_acquire) != k_free) {
      m_state.wait(k_held_waited, std::memory_order_relaxed);
    }
  }

  bool try_lock() {
    int expected = k_free;
    return m_state.load(std::memory_order_relaxed) == k_free &&
           m_state.compare_exchange_strong(expected, k_held, std::memory_order_acquire, std::memory_order_relaxed);
  }

  void unlock() {
    if (m_state.exchange(k_free, std::memory_order_release) == k_held_waited) {
      m_state.notify_one();
    }
  }

private:
  static constexpr int k_free = 0;
  static constexpr int k_held = 1;        // nobody sleeps
  static constexpr int k_held_waited = 2; // held, and a thread may sleep on the word
  static constexpr int k_spins = 200;     // about 2 to 10 µs of pause instructions

  static void relax() {
#if defined(__x86_64__) || defined(__i386__)
    _mm_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
  }

  std::atomic<int> m_state{k_free};
};

} // namespace cudadiag
