// The pcie self-test: pinned host->device, device->host and bidirectional copies (timed with events,
// bidirectional with the host clock over both streams), and pageable copies (full level; reported,
// not scored),
// of sizes.pcie_bytes each. The link NVML reports while the copies run (an idle link may train down
// to save power) gives the expected rate (selftest/health.hpp: raw gen x width x k_pcie_efficiency);
// a link below its max, or a pinned copy under 70% of expected, is in details.pcie.problem (the
// gpu.pcie_degraded finding). Every byte is checked after the round trip.

#include "selftest/test_context.hpp"

#include <chrono>
#include <cstring>

namespace cudadiag::selftest {
namespace {

using Clock = std::chrono::steady_clock;

double gbps(std::size_t bytes, double ms) {
  return ms > 0 ? static_cast<double>(bytes) / (ms / 1e3) / 1e9 : 0;
}

// The highest link state seen: an earlier reading may have caught the link before it trained up.
void keep_best(PcieLink& best, const PcieLink& seen) {
  const auto higher = [](std::optional<unsigned>& kept, const std::optional<unsigned>& now) {
    if (now && (!kept || *now > *kept)) {
      kept = now;
    }
  };
  best.bus_id = seen.bus_id;
  higher(best.gen_current, seen.gen_current);
  higher(best.width_current, seen.width_current);
  best.gen_max = seen.gen_max ? seen.gen_max : best.gen_max;
  best.width_max = seen.width_max ? seen.width_max : best.width_max;
}

} // namespace

TestResult run_pcie(const TestContext& context) {
  if (context.gpu == nullptr || !context.device) {
    return without_gpu(context);
  }
  auto result = new_result(context);
  const Gpu& gpu = *context.gpu;
  const auto& api = gpu.api();
  gpu.require(api.memcpy_htod_async, "cuMemcpyHtoDAsync");
  gpu.require(api.memcpy_dtoh_async, "cuMemcpyDtoHAsync");
  const std::size_t bytes = context.sizes.pcie_bytes;
  const int reps = context.sizes.pcie_repetitions;

  const PinnedBuffer source(gpu, bytes);
  const PinnedBuffer target(gpu, bytes);
  const DeviceBuffer device_a(gpu, bytes);
  const DeviceBuffer device_b(gpu, bytes);
  auto* const src = static_cast<unsigned char*>(source.get());
  auto* const words = static_cast<std::uint64_t*>(source.get());
  const auto word_at = [](std::uint64_t i) { return (i + 1) * 0x9E3779B97F4A7C15ULL; };
  for (std::size_t i = 0; i < bytes / sizeof(std::uint64_t); ++i) {
    words[i] = word_at(i);
  }
  // What came back into `target`, read after the stream that copied it was synchronised.
  const auto check_target = [&]() {
    std::optional<WrongData> wrong;
    compare_words(static_cast<const std::uint64_t*>(target.get()), bytes / sizeof(std::uint64_t), 0, word_at,
                  wrong);
    return wrong;
  };
  std::memset(target.get(), 0, bytes);
  const Stream up(gpu);
  const Stream down(gpu);
  const EventTimer timer(gpu);
  const auto h2d = [&](cu::CUdeviceptr to, cu::CUstream stream) {
    gpu.check(api.memcpy_htod_async(to, source.get(), bytes, stream), "cuMemcpyHtoDAsync");
  };
  const auto d2h = [&](cu::CUdeviceptr from, cu::CUstream stream) {
    gpu.check(api.memcpy_dtoh_async(target.get(), from, bytes, stream), "cuMemcpyDtoHAsync");
  };

  // Warm-up, with the link read while copies are in flight.
  PcieLink link;
  const int warm_runs = warm_up(gpu, up.get(), context.sizes.warm_ms, [&] { h2d(device_a.get(), up.get()); });
  for (int i = 0; i < 4; ++i) {
    h2d(device_a.get(), up.get());
  }
  if (context.nvml != nullptr) {
    keep_best(link, context.nvml->link());
  }
  up.synchronize();

  std::vector<double> h2d_ms;
  std::vector<double> d2h_ms;
  for (int rep = 0; rep < reps; ++rep) {
    timer.start(up.get());
    h2d(device_a.get(), up.get());
    h2d_ms.push_back(timer.stop(up.get()));
  }
  for (int rep = 0; rep < reps; ++rep) {
    timer.start(down.get());
    d2h(device_a.get(), down.get());
    d2h_ms.push_back(timer.stop(down.get()));
  }
  const auto round_trip_wrong = check_target();

  // Both directions at once: device_b <- source while target <- device_a.
  std::vector<double> both_ms;
  for (int rep = 0; rep < reps; ++rep) {
    const auto started = Clock::now();
    h2d(device_b.get(), up.get());
    d2h(device_a.get(), down.get());
    if (rep == 0 && context.nvml != nullptr) {
      keep_best(link, context.nvml->link());
    }
    up.synchronize();
    down.synchronize();
    both_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - started).count());
  }
  // device_b now holds what source sent: bring it back and compare.
  std::memset(target.get(), 0, bytes);
  d2h(device_b.get(), down.get());
  down.synchronize();
  const auto bidirectional_wrong = check_target();
  // A wrong round trip is repeated once through a fresh device buffer (up, synchronised, then
  // down), only to say whether it is persistent or transient.
  std::optional<std::optional<WrongData>> repeat;
  if (round_trip_wrong || bidirectional_wrong) {
    const DeviceBuffer fresh(gpu, bytes);
    h2d(fresh.get(), up.get());
    up.synchronize();
    std::memset(target.get(), 0, bytes);
    d2h(fresh.get(), down.get());
    down.synchronize();
    repeat.emplace(check_target());
  }

  // Pageable memory (ordinary host allocations): reported, not scored; full level only (the staging
  // through the driver's bounce buffers costs a quarter second that the quick level does not have).
  std::vector<unsigned char> pageable(context.sizes.pcie_pageable ? bytes : 0);
  if (context.sizes.pcie_pageable) {
    std::memcpy(pageable.data(), src, bytes);
  }
  std::vector<double> pageable_h2d_ms;
  std::vector<double> pageable_d2h_ms;
  for (int rep = 0; context.sizes.pcie_pageable && rep < std::max(2, reps / 3); ++rep) {
    auto started = Clock::now();
    // Deliberately the synchronous legacy-stream copies, timed on the host: both streams of this
    // test are synchronised above, and each call returns when its copy is done.
    gpu.check(api.legacy_stream_memcpy_htod(device_a.get(), pageable.data(), bytes),
              "cuMemcpyHtoD (pageable)");
    pageable_h2d_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - started).count());
    started = Clock::now();
    gpu.check(api.legacy_stream_memcpy_dtoh(pageable.data(), device_a.get(), bytes),
              "cuMemcpyDtoH (pageable)");
    pageable_d2h_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - started).count());
  }
  if (context.sizes.pcie_pageable) {
    gpu.check(api.ctx_synchronize(), "cuCtxSynchronize"); // nothing of the legacy stream outlives this test
  }

  const double h2d_gbps = gbps(bytes, median(h2d_ms));
  const double d2h_gbps = gbps(bytes, median(d2h_ms));
  add_metric(result, "h2d_gbps", h2d_gbps, "GB/s", true);
  add_metric(result, "d2h_gbps", d2h_gbps, "GB/s");
  add_metric(result, "bidirectional_gbps", gbps(2 * bytes, median(both_ms)), "GB/s");
  if (context.sizes.pcie_pageable) {
    add_metric(result, "pageable_h2d_gbps", gbps(bytes, median(pageable_h2d_ms)), "GB/s");
    add_metric(result, "pageable_d2h_gbps", gbps(bytes, median(pageable_d2h_ms)), "GB/s");
  }

  Evidence pcie = {{"bytes_per_copy", bytes},         {"repetitions", reps},
                   {"warmup_runs", warm_runs},        {"h2d_median_ms", median(h2d_ms)},
                   {"d2h_median_ms", median(d2h_ms)}, {"bidirectional_median_ms", median(both_ms)},
                   {"efficiency", k_pcie_efficiency}};
  if (context.nvml == nullptr) {
    pcie["link"] = nullptr;
    pcie["link_unknown"] = context.nvml_problem.empty() ? "NVML was not found" : context.nvml_problem;
  } else {
    const auto verdict = judge_pcie(link, h2d_gbps, d2h_gbps);
    result.pcie = PcieFacts{link, verdict};
    if (verdict.expected_max_gbps > 0) {
      // The score compares with what the slot should give at its max gen and width.
      add_metric(result, "h2d_expected_gbps", verdict.expected_max_gbps, "GB/s");
      add_metric(result, "d2h_expected_gbps", verdict.expected_max_gbps, "GB/s");
    }
  }
  result.details["pcie"] = pcie;
  if (round_trip_wrong || bidirectional_wrong) {
    const auto& wrong = round_trip_wrong ? *round_trip_wrong : *bidirectional_wrong;
    result.status = TestStatus::fail;
    result.reason = wrong_data_reason(
        std::string("the ") +
            (round_trip_wrong ? "host -> device -> host round trip" : "bidirectional copies") +
            " over PCIe (64-bit words)",
        wrong, repeat);
    result.details["pcie_check"] = wrong_data_evidence(wrong, repeat);
  }
  return result;
}

} // namespace cudadiag::selftest
