#include "core/worker_pool.hpp"

#include "core/timeline.hpp"

#include <pthread.h>
#include <sched.h>

#include <chrono>
#include <memory>
#include <system_error>
#include <thread>
#include <utility>

namespace cudadiag {
namespace {

thread_local WorkerPool* t_active = nullptr;

// Puts the calling thread under SCHED_BATCH (where the system has it and allows it; nothing
// changes otherwise): woken for work, it does not preempt the thread that woke it, which goes on
// with its own part while the helper takes another CPU or waits its turn. A virtual machine whose
// kernel packs threads onto one vCPU ran each woken helper at once on its waker's vCPU, the waker
// waiting. For a thread of nice 0 nothing else changes, and no privilege is needed.
void become_batch_thread() {
#if defined(SCHED_BATCH)
  const sched_param priority{};
  static_cast<void>(::pthread_setschedparam(::pthread_self(), SCHED_BATCH, &priority));
#endif
}

// The process's idle threads: a thread whose pool has let it go waits here for the next pool that
// wants a helper, and exits after m_linger (a quarter of a second unless set) without one. Starting a thread
// costs tens of microseconds in a virtual machine, paid by the thread that starts it, and ending one (its
// stack given back, the join) as much again at the end of every run; back-to-back runs (a health check called
// in a loop, the API's calls in one program) take the threads the last one left.
//
// Contract: a thread lingers only between two calls of run work, holding no pool's memory; the state
// is never destroyed (a lingering thread may outlive static destruction; exit() ends it), and after
// fork() the child, which has none of these threads, starts with none. libcudadiag.so is linked
// with -z nodelete, so that dlclose() never unmaps the code a lingering thread waits in.
class IdleThreads {
public:
  static constexpr auto k_default_linger = std::chrono::milliseconds(250);

  static IdleThreads& instance() {
    static IdleThreads* const threads = [] {
      ::pthread_atfork([] { instance().m_mutex.lock(); }, [] { instance().m_mutex.unlock(); },
                       [] {
                         auto& child = instance();
                         child.m_idle = 0; // the child has none of the parent's threads
                         child.m_work.clear();
                         child.m_mutex.unlock();
                       });
      return new IdleThreads(); // never destroyed: see the contract
    }();
    return *threads;
  }

  // Runs `work` on an idle thread, else on a new one (which lingers after it); false when no
  // thread could be had (RLIMIT_NPROC, a container's pids limit).
  bool run(std::function<void()> work) {
    {
      const std::lock_guard lock(m_mutex);
      if (m_idle > m_work.size()) {
        m_work.push_back(std::move(work));
        m_wake.notify_one();
        return true;
      }
    }
    try {
      count_start();
      std::thread([this, work = std::move(work)]() mutable {
        become_batch_thread();
        work();
        work = nullptr; // what it holds is released before the thread lingers
        linger();
      }).detach();
      return true;
    } catch (const std::system_error&) {
      return false;
    }
  }

  void set_linger(std::chrono::milliseconds linger) {
    const std::lock_guard lock(m_mutex);
    m_linger = linger;
  }

  WorkerPool::ThreadCounts counts() {
    const std::lock_guard lock(m_mutex);
    return {m_started, m_started - m_ended, m_idle};
  }

private:
  IdleThreads() = default;

  void count_start() {
    const std::lock_guard lock(m_mutex);
    ++m_started;
  }

  void linger() {
    std::unique_lock lock(m_mutex);
    for (;;) {
      ++m_idle;
      const bool woken = m_wake.wait_for(lock, m_linger, [this] { return !m_work.empty(); });
      --m_idle;
      if (!woken) {
        ++m_ended;
        return; // nothing for m_linger: the thread ends
      }
      auto work = std::move(m_work.front());
      m_work.pop_front();
      lock.unlock();
      work();
      work = nullptr;
      lock.lock();
    }
  }

  std::mutex m_mutex;
  std::condition_variable m_wake;
  std::deque<std::function<void()>> m_work; // handed to the idle threads, one each
  std::size_t m_idle = 0;                   // threads waiting in linger()
  std::chrono::milliseconds m_linger = k_default_linger;
  std::size_t m_started = 0; // threads started by run(), whether or not they still run
  std::size_t m_ended = 0;   // of those, the ones that ended
};

// One share() call: which helpers are inside `work`, and whether it still takes newcomers.
struct Section {
  std::mutex mutex;
  std::condition_variable all_out;
  std::size_t inside = 0;
  bool open = true;
};

} // namespace

WorkerPool::WorkerPool(std::size_t helpers) : m_max_helpers(helpers) {}

WorkerPool::~WorkerPool() {
  const timeline::Span span("pool_join");
  {
    const std::lock_guard lock(m_mutex);
    m_stopping = true;
  }
  m_wake.notify_all();
  {
    // Every helper has left helper_loop (and this pool) once m_started is back to 0.
    std::unique_lock lock(m_mutex);
    m_gone.wait(lock, [this] { return m_started == 0; });
  }
  // What no helper took (none could be started): posted jobs run here, closed sections' claims
  // return at once.
  for (auto& job : m_queue) {
    job();
  }
}

WorkerPool::Use::Use(WorkerPool& pool) : m_previous(t_active) {
  t_active = &pool;
}
WorkerPool::Use::~Use() {
  t_active = m_previous;
}

void WorkerPool::set_idle_linger(std::chrono::milliseconds linger) {
  IdleThreads::instance().set_linger(linger);
}

WorkerPool::ThreadCounts WorkerPool::thread_counts() {
  return IdleThreads::instance().counts();
}

WorkerPool* WorkerPool::active() {
  return t_active;
}

void WorkerPool::share(std::size_t helpers, const std::function<void()>& work) {
  auto section = std::make_shared<Section>();
  // A claim on a helper's time: it calls `work` only while the section is open. `work` outlives
  // every call that got in, since this function waits for them below.
  queue(
      [section, &work] {
        {
          const std::lock_guard lock(section->mutex);
          if (!section->open) {
            return;
          }
          ++section->inside;
        }
        work();
        const std::lock_guard lock(section->mutex);
        if (--section->inside == 0 && !section->open) {
          section->all_out.notify_all();
        }
      },
      helpers);
  work();
  std::unique_lock lock(section->mutex);
  section->open = false;
  section->all_out.wait(lock, [&] { return section->inside == 0; });
}

void WorkerPool::post(std::function<void()> job) {
  // A read-ahead that throws has computed nothing: whoever needs its result computes it again and
  // meets the error there.
  queue(
      [job = std::move(job)] {
        try {
          job();
        } catch (...) {
        }
      },
      1);
}

void WorkerPool::queue(std::function<void()> job, std::size_t copies) {
  std::size_t start = 0;
  {
    const std::lock_guard lock(m_mutex);
    for (std::size_t i = 0; i < copies; ++i) {
      m_queue.push_back(job);
    }
    // Helpers to start: as many as the idle and coming ones fall short of the queue, within the
    // pool's size; claimed here, so that two callers at once do not both fill the room.
    const std::size_t ready = m_idle + m_coming;
    const std::size_t wanted = m_queue.size() > ready ? m_queue.size() - ready : 0;
    const std::size_t room = m_max_helpers - m_started;
    start = wanted < room ? wanted : room;
    m_started += start;
    m_coming += start;
  }
  for (std::size_t i = 0; i < copies; ++i) {
    m_wake.notify_one();
  }
  for (std::size_t i = 0; i < start; ++i) {
    const timeline::Span span("thread_start");
    if (!IdleThreads::instance().run([this] { helper_loop(); })) {
      // No thread to be had (RLIMIT_NPROC, a container's pids limit): the callers' own threads,
      // and at the latest the destructor, do the work.
      const std::lock_guard lock(m_mutex);
      m_started -= start - i;
      m_coming -= start - i;
      m_gone.notify_all();
      break;
    }
  }
}

void WorkerPool::helper_loop() {
  const Use use(*this);
  std::unique_lock lock(m_mutex);
  --m_coming;
  for (;;) {
    ++m_idle;
    m_wake.wait(lock, [this] { return m_stopping || !m_queue.empty(); });
    --m_idle;
    if (m_queue.empty()) {
      // Stopping, and nothing left: the pool is let go (its destructor may free it the moment the
      // lock is released, so nothing of it is touched after).
      --m_started;
      m_gone.notify_all();
      return;
    }
    auto job = std::move(m_queue.front());
    m_queue.pop_front();
    lock.unlock();
    {
      const timeline::Span span("helper_job");
      job();
    }
    lock.lock();
  }
}

} // namespace cudadiag
