// Independent tasks over threads: every index exactly once, results in index order whatever the
// thread count, and a task's exception reaches the caller after the threads have stopped. Values
// computed once per key (OnceMap), and the once-only call under it (OnceFlag).
#include "core/once_flag.hpp"
#include "core/once_map.hpp"
#include "core/parallel.hpp"
#include "core/worker_pool.hpp"

#include <doctest/doctest.h>

#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <vector>

TEST_CASE("parallel: every index runs exactly once, at every thread count") {
  for (const std::size_t threads : {1U, 2U, 3U, 8U, 64U}) {
    for (const std::size_t count : {0U, 1U, 7U, 1000U}) {
      CAPTURE(threads);
      CAPTURE(count);
      std::vector<std::atomic<int>> runs(count);
      cudadiag::parallel_for_each_index(count, threads, [&](std::size_t i) { ++runs[i]; });
      for (std::size_t i = 0; i < count; ++i) {
        CHECK(runs[i].load() == 1);
      }
    }
  }
}

TEST_CASE("parallel: parallel_map keeps the index order") {
  const auto squares =
      cudadiag::parallel_map<std::string>(500, [](std::size_t i) { return std::to_string(i * i); });
  REQUIRE(squares.size() == 500);
  for (std::size_t i = 0; i < squares.size(); ++i) {
    CHECK(squares[i] == std::to_string(i * i));
  }
  CHECK(cudadiag::parallel_map<int>(0, [](std::size_t) { return 1; }).empty());
}

TEST_CASE("parallel: a task's exception is rethrown to the caller once every thread has stopped") {
  std::atomic<int> in_flight{0};
  CHECK_THROWS_WITH_AS(cudadiag::parallel_for_each_index(2000, 4,
                                                         [&](std::size_t i) {
                                                           ++in_flight;
                                                           if (i == 10) {
                                                             --in_flight;
                                                             throw std::runtime_error("task 10 failed");
                                                           }
                                                           std::this_thread::sleep_for(
                                                               std::chrono::microseconds(10));
                                                           --in_flight;
                                                         }),
                       "task 10 failed", std::runtime_error);
  CHECK(in_flight.load() == 0); // no task still running when the exception reached the caller
}

TEST_CASE("parallel: the thread count is one per CPU, capped, and never more than the tasks") {
  CHECK(cudadiag::parallel_threads(0) == 1);
  CHECK(cudadiag::parallel_threads(1) == 1);
  CHECK(cudadiag::parallel_threads(1000, 3) <= 3);
  CHECK(cudadiag::parallel_threads(1000) >= 1);
}

TEST_CASE("once map: find answers only what was computed, and never computes") {
  cudadiag::OnceMap<int> map;
  CHECK(map.find("a") == nullptr);
  int computed = 0;
  CHECK(map.get("a", [&] { return ++computed; }) == 1);
  REQUIRE(map.find("a") != nullptr);
  CHECK(*map.find("a") == 1);
  CHECK(map.find("b") == nullptr);
  CHECK(computed == 1);
  CHECK(map.size() == 1);
}

TEST_CASE("once flag: one caller runs it, every caller returns after it has, seeing what it wrote") {
  for (int round = 0; round < 50; ++round) {
    cudadiag::OnceFlag once;
    std::atomic<int> runs{0};
    int value = 0; // written by the one run, read by every caller after call() returns
    std::atomic<int> wrong{0};
    cudadiag::parallel_for_each_index(16, 16, [&](std::size_t) {
      once.call([&] {
        std::this_thread::sleep_for(std::chrono::microseconds(200)); // the others arrive and wait
        value = 42;
        ++runs;
      });
      if (value != 42) {
        ++wrong;
      }
    });
    CHECK(runs.load() == 1);
    CHECK(wrong.load() == 0);
    CHECK(once.done());
  }
}

TEST_CASE("once flag: a call that throws leaves it unset, and the next caller runs it") {
  cudadiag::OnceFlag once;
  CHECK_THROWS_AS(once.call([] { throw std::runtime_error("first try fails"); }), std::runtime_error);
  CHECK_FALSE(once.done());
  int runs = 0;
  once.call([&] { ++runs; });
  once.call([&] { ++runs; });
  CHECK(runs == 1);
  CHECK(once.done());
}

TEST_CASE("once flag: a thread waiting on a call that throws runs it itself") {
  cudadiag::OnceFlag once;
  std::atomic<bool> started{false};
  std::atomic<int> runs{0};
  std::thread failing([&] {
    try {
      once.call([&] {
        started = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20)); // the waiter below waits on it
        throw std::runtime_error("fails");
      });
    } catch (const std::runtime_error&) {
    }
  });
  while (!started) {
    std::this_thread::yield();
  }
  once.call([&] { ++runs; }); // waits for the failing call, then runs its own
  failing.join();
  CHECK(runs.load() == 1);
  CHECK(once.done());
}

TEST_CASE("once map: many threads asking about many keys get one value per key") {
  cudadiag::OnceMap<std::string> map;
  std::atomic<int> computed{0};
  cudadiag::parallel_for_each_index(4000, 8, [&](std::size_t i) {
    const auto key = "key" + std::to_string(i % 100); // every key asked 40 times, on any shard
    const auto& value = map.get(key, [&] {
      ++computed;
      return key + "!";
    });
    CHECK(value == key + "!");
  });
  CHECK(computed.load() == 100);
  CHECK(map.size() == 100);
  for (int i = 0; i < 100; ++i) {
    const auto key = "key" + std::to_string(i);
    REQUIRE(map.find(key) != nullptr);
    CHECK(*map.find(key) == key + "!");
  }
}

TEST_CASE("once map: keys inserted at once by many threads, many more than its buckets, each get one node") {
  // Every thread inserts the same fresh keys in the same order, so that inserts into one bucket
  // race: a lost race must find the winner's node, never publish a second one.
  for (int round = 0; round < 20; ++round) {
    cudadiag::OnceMap<std::size_t> map;
    std::atomic<int> computed{0};
    cudadiag::parallel_for_each_index(8, 8, [&](std::size_t) {
      for (std::size_t k = 0; k < 2000; ++k) {
        CHECK(map.get("k" + std::to_string(k), [&] {
          ++computed;
          return k;
        }) == k);
      }
    });
    CHECK(computed.load() == 2000);
    CHECK(map.size() == 2000);
    for (std::size_t k = 0; k < 2000; k += 97) {
      REQUIRE(map.find("k" + std::to_string(k)) != nullptr);
      CHECK(*map.find("k" + std::to_string(k)) == k);
    }
  }
}

TEST_CASE("worker pool: sections in turn reuse the same helpers, and every index runs once") {
  cudadiag::WorkerPool pool(3);
  const cudadiag::WorkerPool::Use use(pool);
  REQUIRE(cudadiag::WorkerPool::active() == &pool);
  std::mutex mutex;
  std::set<std::thread::id> threads;
  for (int section = 0; section < 20; ++section) {
    std::vector<std::atomic<int>> runs(97);
    cudadiag::parallel_for_each_index(runs.size(), 4, [&](std::size_t i) {
      ++runs[i];
      const std::lock_guard lock(mutex);
      threads.insert(std::this_thread::get_id());
    });
    for (const auto& count : runs) {
      CHECK(count == 1);
    }
  }
  CHECK(threads.size() <= 4); // this thread and at most the pool's 3 helpers, over all 20 sections
}

TEST_CASE("worker pool: helpers run under SCHED_BATCH, and the caller's own policy is left as it was") {
  const int callers_policy = ::sched_getscheduler(0);
  cudadiag::WorkerPool pool(2);
  const cudadiag::WorkerPool::Use use(pool);
  std::mutex mutex;
  std::set<int> helper_policies;
  const auto caller = std::this_thread::get_id();
  for (int section = 0; section < 20 && helper_policies.empty(); ++section) {
    cudadiag::parallel_for_each_index(16, 3, [&](std::size_t) {
      std::this_thread::sleep_for(std::chrono::microseconds(200)); // room for a helper to take one
      if (std::this_thread::get_id() != caller) {
        const std::lock_guard lock(mutex);
        helper_policies.insert(::sched_getscheduler(0));
      }
    });
  }
  REQUIRE_FALSE(helper_policies.empty());
  CHECK(helper_policies == std::set<int>{SCHED_BATCH});
  CHECK(::sched_getscheduler(0) == callers_policy);
}

TEST_CASE("worker pool: nested sections finish even when every helper is busy in an outer one") {
  cudadiag::WorkerPool pool(2);
  const cudadiag::WorkerPool::Use use(pool);
  std::atomic<int> inner{0};
  cudadiag::parallel_for_each_index(
      8, 8, [&](std::size_t) { cudadiag::parallel_for_each_index(16, 8, [&](std::size_t) { ++inner; }); });
  CHECK(inner == 8 * 16);
}

TEST_CASE("worker pool: a task's exception reaches the section's caller, and the pool goes on") {
  cudadiag::WorkerPool pool(3);
  const cudadiag::WorkerPool::Use use(pool);
  CHECK_THROWS_AS(cudadiag::parallel_for_each_index(50, 4,
                                                    [](std::size_t i) {
                                                      if (i == 7) {
                                                        throw std::runtime_error("task 7");
                                                      }
                                                    }),
                  std::runtime_error);
  std::atomic<int> after{0};
  cudadiag::parallel_for_each_index(50, 4, [&](std::size_t) { ++after; });
  CHECK(after == 50);
}

TEST_CASE("worker pool: posted jobs run before the pool is gone, a throwing one included") {
  std::atomic<int> ran{0};
  {
    cudadiag::WorkerPool pool(1);
    const cudadiag::WorkerPool::Use use(pool);
    for (int i = 0; i < 10; ++i) {
      static_cast<void>(cudadiag::start_beside([&ran] {
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
        ++ran;
      }));
    }
    static_cast<void>(cudadiag::start_beside([] { throw std::runtime_error("a read-ahead that fails"); }));
  }
  CHECK(ran == 10);
  CHECK(cudadiag::WorkerPool::active() == nullptr);
  // Without a pool: a thread of its own, whose future waits for it.
  auto alone = cudadiag::start_beside([&ran] { ++ran; });
  alone.wait();
  CHECK(ran == 11);
}

TEST_CASE("worker pool: with no helper to be had, the caller does every task itself") {
  cudadiag::WorkerPool pool(0);
  const cudadiag::WorkerPool::Use use(pool);
  std::vector<int> runs(40, 0);
  cudadiag::parallel_for_each_index(runs.size(), 8, [&](std::size_t i) { ++runs[i]; });
  CHECK(std::count(runs.begin(), runs.end(), 1) == 40);
}

TEST_CASE(
    "worker pool: the next pool takes the threads the last one let go, and a forked child starts afresh") {
  using cudadiag::WorkerPool;
  const auto run_pool = [] {
    WorkerPool pool(3);
    const WorkerPool::Use use(pool);
    cudadiag::parallel_for_each_index(
        64, 4, [&](std::size_t) { std::this_thread::sleep_for(std::chrono::microseconds(200)); });
  };
  // Waits (bounded) until the process's pool threads are as `wanted` says, and returns them.
  const auto until = [](const auto& wanted) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    auto counts = WorkerPool::thread_counts();
    while (!wanted(counts) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
      counts = WorkerPool::thread_counts();
    }
    return counts;
  };
  const auto none_alive = [](const WorkerPool::ThreadCounts& counts) { return counts.alive == 0; };
  const auto all_idle = [](const WorkerPool::ThreadCounts& counts) { return counts.idle == counts.alive; };
  // The threads earlier tests let go end after their quarter of a second; then, with the long
  // linger set here, none of this test's ends during it, however slow the machine: the first pool
  // starts its three helpers, and the second takes them and starts none.
  REQUIRE(until(none_alive).alive == 0);
  WorkerPool::set_idle_linger(std::chrono::seconds(60));
  const auto before = WorkerPool::thread_counts();
  run_pool();
  const auto between = until(all_idle);
  CHECK(between.started - before.started == 3);
  CHECK(between.idle == 3);
  run_pool();
  CHECK(WorkerPool::thread_counts().started == between.started); // none started for the second pool
  WorkerPool::set_idle_linger(std::chrono::milliseconds(250));

  // The child of a fork() has none of the lingering threads: its pool starts its own, and a job it
  // posts still runs (a pool that counted on the parent's threads would wait for ever).
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::alarm(20); // a hang ends the child, and the check below fails
    std::atomic<int> ran{0};
    {
      cudadiag::WorkerPool pool(2);
      const cudadiag::WorkerPool::Use use(pool);
      static_cast<void>(cudadiag::start_beside([&ran] { ++ran; }));
      cudadiag::parallel_for_each_index(32, 3, [&](std::size_t) { ++ran; });
    }
    ::_exit(ran == 33 ? 0 : 1);
  }
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 0);
}
