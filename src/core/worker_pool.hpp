#pragma once
// A run's helper threads, taken once and lent to every parallel section of the run.
//
// A run (pipeline::run) has parallel sections one after the other (the package lists, the
// components, the closures) and read-aheads beside them. Starting a thread costs tens of
// microseconds in a virtual machine, paid by the thread that starts it before it works: with a
// thread set per section, each section began 0.13–0.23 ms late on a 16-CPU GPU host. The threads
// themselves outlive the pool: let go at its end, they linger idle for a quarter of a second, and
// the next run's pool takes them instead of starting new ones (worker_pool.cpp, IdleThreads). A pool
// made active on a thread (WorkerPool::Use) keeps its helpers from one section to the next;
// parallel_for_each_index and start_beside (core/parallel.hpp) use it when there is one.
//
// Contract: share() runs the caller's part on the caller's thread and returns only when every call
// it lent has returned. A helper joins a shared section only while the section is open; one busy
// elsewhere (a read-ahead, another section) is not waited for, so a section never waits on a helper
// that waits on it. Helpers run with their pool active, so that nested sections borrow from it too.

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>

namespace cudadiag {

class WorkerPool {
public:
  // Up to `helpers` threads, each taken (an idle one, else a new one) when work finds none of the
  // pool's own idle.
  explicit WorkerPool(std::size_t helpers);
  // Runs the posted jobs no helper took, and returns once every helper has left the pool (the
  // threads linger, idle, for the next pool).
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Makes `pool` the active pool of this thread while the Use lives (the previous one after).
  class Use {
  public:
    explicit Use(WorkerPool& pool);
    ~Use();
    Use(const Use&) = delete;
    Use& operator=(const Use&) = delete;

  private:
    WorkerPool* m_previous;
  };
  // The pool active on this thread, or nullptr.
  static WorkerPool* active();

  // The process's lingering threads (worker_pool.cpp, IdleThreads): how long a thread let go waits
  // for the next pool (a quarter of a second unless set; a thread already waiting keeps the
  // deadline it had), and how many threads pools have started in this process, how many of them
  // have not ended, and how many of those wait idle (none is started while an idle one is free).
  struct ThreadCounts {
    std::size_t started = 0;
    std::size_t alive = 0;
    std::size_t idle = 0;
  };
  static void set_idle_linger(std::chrono::milliseconds linger);
  static ThreadCounts thread_counts();

  // Calls work() on this thread and on up to `helpers` helpers at once, and returns when every
  // call that started has returned. `work` takes its tasks from a counter it shares, so that a
  // helper that comes late finds none left and returns at once; helpers that come after this
  // returns do not call it.
  void share(std::size_t helpers, const std::function<void()>& work);
  // Queues `job` (a read-ahead) for a helper; it runs before the pool is destroyed.
  void post(std::function<void()> job);

private:
  void queue(std::function<void()> job, std::size_t copies);
  void helper_loop();

  std::size_t m_max_helpers;
  std::mutex m_mutex;
  std::condition_variable m_wake;
  std::condition_variable m_gone; // a helper left helper_loop (the destructor waits for all)
  std::deque<std::function<void()>> m_queue;
  std::size_t m_started = 0; // helpers in helper_loop, or being started
  std::size_t m_coming = 0;  // started, not yet waiting for work
  std::size_t m_idle = 0;    // waiting for work
  bool m_stopping = false;
};

} // namespace cudadiag
