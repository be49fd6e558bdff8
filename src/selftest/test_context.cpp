#include "selftest/test_context.hpp"

#include "worker/child.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <sys/socket.h>

namespace cudadiag::selftest {

const LevelSizes& sizes_for(Level level) {
  // quick: every buffer well past the L2 (H200: ~60 MB) but small enough for the whole suite to
  // take about a second; full: the sizes the performance targets are stated for (2^28+ elements).
  static const LevelSizes quick{
      .copy_elements = std::uint64_t{1} << 24U, // 256 MiB per buffer
      .copy_repetitions = 10,
      .cub_warmup = 3,
      .warm_ms = 20,
      .reduce_count = std::uint64_t{1} << 26U,
      .reduce_repetitions = 10,
      .sort_count = std::uint64_t{1} << 24U,
      .sort_repetitions = 5,
      .probe_spin_ns = 100'000,
      .latency_repetitions = 20,
      .pcie_bytes = std::uint64_t{256} << 20U,
      .pcie_repetitions = 5,
      .pcie_pageable = false,
      .compute_rounds = 512,
      .compute_repetitions = 5,
      .memory_test = false,
  };
  static const LevelSizes full{
      .copy_elements = std::uint64_t{1} << 28U, // 4 GiB per buffer
      .copy_repetitions = 20,
      .cub_warmup = 5,
      .warm_ms = 100,
      .reduce_count = std::uint64_t{1} << 30U,
      .reduce_repetitions = 20,
      .sort_count = std::uint64_t{1} << 28U,
      .sort_repetitions = 10,
      .probe_spin_ns = 200'000,
      .latency_repetitions = 50,
      .pcie_bytes = std::uint64_t{512} << 20U,
      .pcie_repetitions = 10,
      .pcie_pageable = true,
      .compute_rounds = 1024,
      .compute_repetitions = 10,
      .memory_test = true,
  };
  return level == Level::full ? full : quick;
}

int warm_up(const Gpu& gpu, cu::CUstream stream, int warm_ms, const std::function<void()>& launch) {
  const EventTimer timer(gpu);
  timer.start(stream);
  int runs = 0;
  for (int batch = 1; warm_ms > 0; batch = std::min(batch * 2, 1024)) {
    for (int i = 0; i < batch; ++i, ++runs) {
      launch();
    }
    if (timer.stop(stream) >= warm_ms) {
      break;
    }
  }
  return runs;
}

SmClock max_sm_clock(const TestContext& context) {
  // A plain value, not an optional: g++ 12 -O2 reads an optional's payload as maybe-uninitialised here.
  SmClock clock;
  clock.mhz = context.nvml != nullptr ? context.nvml->max_sm_clock_mhz().value_or(0U) : 0U;
  clock.source = "nvmlDeviceGetMaxClockInfo(SM)";
  if (clock.mhz == 0 && context.gpu != nullptr && context.device) {
    int khz = 0;
    if (context.gpu->api().device_get_attribute(&khz, cu::CU_DEVICE_ATTRIBUTE_CLOCK_RATE,
                                                context.device->handle) == cu::CUDA_SUCCESS &&
        khz > 0) {
      clock.mhz = static_cast<unsigned>(khz / 1000);
      clock.source = "CU_DEVICE_ATTRIBUTE_CLOCK_RATE";
    }
  }
  if (clock.mhz == 0) {
    clock.source.clear();
  }
  return clock;
}

TestResult errored(TestResult result, std::string reason) {
  result.status = TestStatus::error;
  result.reason = std::move(reason);
  return result;
}

Expected<SocketPair> seqpacket_pair() {
  std::array<int, 2> sockets{-1, -1};
  if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sockets.data()) != 0) {
    return Error{std::string("socketpair: ") + std::strerror(errno)};
  }
  return SocketPair{UniqueFd(sockets[0]), UniqueFd(sockets[1])};
}

cuda_api::DlHandle load_bounded(const TestContext& context, const std::string& path, int flags) {
  using std::chrono::milliseconds;
  const std::string phase = "test:" + std::string(context.info.key);
  const auto test_left = [&context] {
    return std::max(milliseconds(1), std::chrono::duration_cast<milliseconds>(
                                         context.deadline - std::chrono::steady_clock::now()));
  };
  const auto bound = context.config.load_timeout;
  if (bound.count() > 0) {
    worker::report_phase(phase + "|load " + path, std::min(bound, test_left()));
  }
  cuda_api::DlHandle handle(path, flags);
  if (bound.count() > 0) {
    worker::report_phase(phase, test_left());
  }
  return handle;
}

TestResult new_result(const TestContext& context) {
  TestResult result;
  result.key = std::string(context.info.key);
  result.description = std::string(context.info.description);
  if (context.device) {
    result.device = context.device->ordinal;
  }
  result.status = TestStatus::pass;
  return result;
}

TestResult skipped(const TestContext& context, std::string reason) {
  auto result = new_result(context);
  result.status = TestStatus::skip;
  result.reason = std::move(reason);
  return result;
}

TestResult without_gpu(const TestContext& context) {
  auto result = skipped(context, context.no_gpu_reason);
  if (context.device_broken) {
    result.status = TestStatus::fail;
  }
  return result;
}

void add_metric(TestResult& result, std::string name, double value, std::string unit, bool primary) {
  Metric metric{std::move(name), value, std::move(unit)};
  if (primary) {
    result.primary = metric;
  }
  result.metrics.push_back(std::move(metric));
}

std::string describe(const WrongData& wrong) {
  return "word " + std::to_string(wrong.first_index) + " is " + std::to_string(wrong.value) + ", expected " +
         std::to_string(wrong.expected) + "; " + std::to_string(wrong.differing) + " of " +
         std::to_string(wrong.checked) + " words differ";
}

Evidence wrong_data_evidence(const WrongData& first, const std::optional<std::optional<WrongData>>& repeat) {
  Evidence evidence = {{"first_index", first.first_index},
                       {"value", first.value},
                       {"expected", first.expected},
                       {"words_differing", first.differing},
                       {"words_checked", first.checked},
                       {"repeat", nullptr},
                       {"persistent", nullptr}};
  if (repeat) {
    evidence["persistent"] = repeat->has_value();
    evidence["repeat"] = Evidence{
        {"words_differing", *repeat ? EvidenceValue((*repeat)->differing) : EvidenceValue(std::uint64_t{0})},
        {"first_index", *repeat ? EvidenceValue((*repeat)->first_index) : EvidenceValue()}};
  }
  return evidence;
}

std::string wrong_data_reason(std::string_view what, const WrongData& first,
                              const std::optional<std::optional<WrongData>>& repeat) {
  std::string reason = std::string(what) + " wrote wrong data: " + describe(first);
  if (!repeat) {
    reason += "; the repeat on a fresh buffer could not run";
  } else if (*repeat) {
    reason += "; persistent: repeated on a fresh buffer, " + std::to_string((*repeat)->differing) +
              " words differ again (first: word " + std::to_string((*repeat)->first_index) + ")";
  } else {
    reason += "; transient: a repeat on a fresh buffer was right";
  }
  return reason;
}

} // namespace cudadiag::selftest
