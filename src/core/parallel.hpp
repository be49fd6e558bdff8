#pragma once
// Independent tasks spread over a few threads, for work that is mostly waiting on the file system
// (listing directories, reading ELF headers and package metadata) and whose results are stored by
// index, so that the output does not depend on which thread ran what.

#include "core/worker_pool.hpp"

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <functional>
#include <future>
#include <mutex>
#include <optional>
#include <system_error>
#include <thread>
#include <vector>

namespace cudadiag {

// How many threads a run of `tasks` independent tasks uses: one per CPU, at most `cap`, at least 1,
// never more than the tasks.
inline std::size_t parallel_threads(std::size_t tasks, std::size_t cap = 8) {
  // Read once: glibc reads /sys/devices/system/cpu/online on every call.
  static const std::size_t cpus = std::max(1U, std::thread::hardware_concurrency());
  return std::max<std::size_t>(1, std::min({tasks, cpus, cap}));
}

// Calls task(i) once for every i in [0, count), on up to `threads` threads (the calling thread is
// one of them, so every task runs even when no thread can be started), and returns when every call
// has returned. The first exception a task throws is
// rethrown here after all threads have stopped taking tasks. The other threads are the active
// WorkerPool's helpers when this thread has one (a run's), else those of a pool made for the call.
template <typename Task>
void parallel_for_each_index(std::size_t count, std::size_t threads, const Task& task) {
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const auto work = [&] {
    for (std::size_t i = next++; i < count; i = next++) {
      try {
        task(i);
      } catch (...) {
        const std::lock_guard lock(failure_mutex);
        if (!failure) {
          failure = std::current_exception();
        }
        next = count; // stop handing out tasks
      }
    }
  };
  const std::size_t extra = std::min(threads, count) > 1 ? std::min(threads, count) - 1 : 0;
  if (extra > 0) {
    // Without an active pool, one for this call: it takes the process's idle threads (those a run
    // let go linger a quarter of a second) before it starts new ones.
    std::optional<WorkerPool> own;
    auto* pool = WorkerPool::active();
    if (pool == nullptr) {
      pool = &own.emplace(extra);
    }
    pool->share(extra, work);
  } else {
    work();
  }
  if (failure) {
    std::rethrow_exception(failure);
  }
}

// Runs `job` beside the caller: on a helper of the active pool, which runs it before the pool is
// destroyed (the future returned is then empty), else on a thread of its own, whose future the
// caller keeps (its destructor waits for the job).
inline std::shared_future<void> start_beside(std::function<void()> job) {
  if (auto* pool = WorkerPool::active(); pool != nullptr) {
    pool->post(std::move(job));
    return {};
  }
  return std::async(std::launch::async, std::move(job)).share();
}

// task(i) for every i in [0, count), computed as parallel_for_each_index does (one thread per CPU,
// at most 8), the results in index order.
template <typename Result, typename Task>
std::vector<Result> parallel_map(std::size_t count, const Task& task) {
  std::vector<Result> results(count);
  parallel_for_each_index(count, parallel_threads(count), [&](std::size_t i) { results[i] = task(i); });
  return results;
}

} // namespace cudadiag
