#include "core/worker_pool.hpp"

#include <memory>
#include <system_error>
#include <utility>

namespace cudadiag {
namespace {

thread_local WorkerPool* t_active = nullptr;

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
  {
    const std::lock_guard lock(m_mutex);
    m_stopping = true;
  }
  m_wake.notify_all();
  for (auto& thread : m_threads) {
    thread.join();
  }
  // What no helper took (none could be started): posted jobs run here, closed sections' claims
  // return at once.
  for (auto& job : m_queue) {
    job();
  }
}

WorkerPool::Use::Use(WorkerPool& pool) : m_previous(t_active) { t_active = &pool; }
WorkerPool::Use::~Use() { t_active = m_previous; }

WorkerPool* WorkerPool::active() { return t_active; }

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
    try {
      std::thread thread([this] { helper_loop(); });
      const std::lock_guard lock(m_mutex);
      m_threads.push_back(std::move(thread));
    } catch (const std::system_error&) {
      // No thread to be had (RLIMIT_NPROC, a container's pids limit): the callers' own threads,
      // and at the latest the destructor, do the work.
      const std::lock_guard lock(m_mutex);
      m_started -= start - i;
      m_coming -= start - i;
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
      return; // stopping, and nothing left
    }
    auto job = std::move(m_queue.front());
    m_queue.pop_front();
    lock.unlock();
    job();
    lock.lock();
  }
}

} // namespace cudadiag
