// Independent tasks over threads: every index exactly once, results in index order whatever the
// thread count, and a task's exception reaches the caller after the threads have stopped. Values
// computed once per key (OnceMap).
#include "core/parallel.hpp"
#include "core/once_map.hpp"

#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <string>
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
  const auto squares = cudadiag::parallel_map<std::string>(500, [](std::size_t i) { return std::to_string(i * i); });
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
                                                           std::this_thread::sleep_for(std::chrono::microseconds(10));
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
