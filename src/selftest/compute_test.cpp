// The compute self-test: FP32 FMA throughput of the bundled PTX kernel cudadiag_fma_f32 (16
// independent dependent FMA chains per thread, 8 blocks of 256 threads per SM), warmed up by time,
// timed with events, against SMs x max SM clock x FMA/clock/SM (selftest/health.hpp's table) x 2
// FLOP. Every thread's result must equal that of the thread with the same index mod 1024, and four of
// those must equal the host's fmaf recomputation bit for bit. (The tensor-core GEMM figure is the
// libs test's: cuBLASLt bf16.)

#include "selftest/test_context.hpp"

#include <cmath>
#include <cstring>

namespace cudadiag::selftest {
namespace {

constexpr unsigned k_threads = 256;
constexpr unsigned k_blocks_per_sm = 8;
constexpr int k_chains = 16; // kernels/ptx/fma.cu: CUDADIAG_FMA_CHAINS
constexpr int k_steps = 64;  // CUDADIAG_FMA_STEPS

// What cudadiag_fma_f32 writes for a thread whose index is `residue` mod 1024.
float host_fma_value(unsigned residue, std::uint64_t rounds) {
  const float a = 1.0F - 1.0F / 4096.0F;
  const float b = 1.0F / 1024.0F;
  float sum = 0.0F;
  for (int k = 0; k < k_chains; ++k) {
    float x = static_cast<float>(residue) / 1024.0F + static_cast<float>(k);
    for (std::uint64_t step = 0; step < rounds * k_steps; ++step) {
      x = std::fmaf(x, a, b);
    }
    sum += x;
  }
  return sum;
}

std::uint32_t bits(float value) {
  std::uint32_t out = 0;
  std::memcpy(&out, &value, sizeof out);
  return out;
}

// What the FMA check found: the threads whose result differs from thread (t mod 1024)'s (every
// thread with the same residue runs the same chain), and a residue whose result differs from the
// host's fmaf ("" when none).
struct FmaCheck {
  std::optional<WrongData> spread;
  std::string host_mismatch;
  [[nodiscard]] bool ok() const { return !spread && host_mismatch.empty(); }
};

FmaCheck check_fma(const std::vector<float>& values, unsigned long long rounds) {
  FmaCheck check;
  for (std::size_t t = 1024; t < values.size(); ++t) {
    if (bits(values[t]) != bits(values[t % 1024])) {
      if (!check.spread) {
        check.spread = WrongData{t, bits(values[t]), bits(values[t % 1024]), 0, 0};
      }
      ++check.spread->differing;
    }
  }
  if (check.spread) {
    check.spread->checked = values.size() - 1024;
  }
  for (const unsigned residue : {0U, 1U, 511U, 1023U}) {
    if (residue < values.size() && bits(values[residue]) != bits(host_fma_value(residue, rounds))) {
      check.host_mismatch = "thread " + std::to_string(residue) + " computed " +
                            std::to_string(values[residue]) + ", the host's fmaf gives " +
                            std::to_string(host_fma_value(residue, rounds));
      break;
    }
  }
  return check;
}

} // namespace

TestResult run_compute(const TestContext& context) {
  if (context.gpu == nullptr || !context.device) {
    return without_gpu(context);
  }
  auto result = new_result(context);
  const Gpu& gpu = *context.gpu;
  const auto& device = *context.device;
  const Module module(gpu, k_fma_ptx);
  const auto kernel = module.function("cudadiag_fma_f32");
  const Stream stream(gpu);
  const EventTimer timer(gpu);
  const unsigned blocks = static_cast<unsigned>(device.sm_count) * k_blocks_per_sm;
  const std::size_t threads = std::size_t{blocks} * k_threads;
  const DeviceBuffer out(gpu, threads * sizeof(float));
  auto out_ptr = out.get();
  auto rounds = static_cast<unsigned long long>(context.sizes.compute_rounds);
  const auto launch = [&] { gpu.launch(kernel, blocks, k_threads, stream.get(), {&out_ptr, &rounds}); };

  const int warm_runs = warm_up(gpu, stream.get(), context.sizes.warm_ms, launch);
  std::vector<double> ms;
  for (int rep = 0; rep < context.sizes.compute_repetitions; ++rep) {
    timer.start(stream.get());
    launch();
    ms.push_back(timer.stop(stream.get()));
  }
  const double flops = static_cast<double>(threads) * k_chains * k_steps * static_cast<double>(rounds) * 2.0;
  const double tflops = flops / (median(ms) / 1e3) / 1e12;
  add_metric(result, "fp32_tflops", tflops, "TFLOP/s", true);

  const auto clock = max_sm_clock(context);
  const unsigned clock_mhz = clock.mhz;
  const std::string& clock_source = clock.source;
  const int fma = fma_per_clock_per_sm(device.cc_major, device.cc_minor);
  Evidence compute = {{"blocks", blocks},
                      {"threads_per_block", k_threads},
                      {"rounds", rounds},
                      {"fma_per_thread", k_chains * k_steps * rounds},
                      {"warmup_runs", warm_runs},
                      {"median_ms", median(ms)},
                      {"best_ms", *std::min_element(ms.begin(), ms.end())},
                      {"max_ms", *std::max_element(ms.begin(), ms.end())},
                      {"fma_per_clock_per_sm", fma == 0 ? EvidenceValue() : EvidenceValue(fma)},
                      {"sm_clock_mhz", clock_mhz != 0 ? EvidenceValue(clock_mhz) : EvidenceValue()},
                      {"sm_clock_source", clock_mhz != 0 ? EvidenceValue(clock_source) : EvidenceValue()}};
  if (fma > 0 && clock_mhz != 0) {
    const double expected = device.sm_count * (clock_mhz * 1e6) * fma * 2.0 / 1e12;
    add_metric(result, "fp32_expected_tflops", expected, "TFLOP/s");
    add_metric(result, "fp32_fraction_of_peak", tflops / expected, "fraction");
    compute["expected_tflops"] = expected;
  } else {
    compute["expected_unknown"] = fma == 0 ? "compute capability " + std::to_string(device.cc_major) + "." +
                                                 std::to_string(device.cc_minor) + " is not in the FMA table"
                                           : std::string("neither NVML nor the driver gave the SM clock");
  }
  result.details["compute"] = compute;

  // The values of the last timed launch, read on its stream after it finished; a failed check is
  // repeated once into a fresh buffer to say whether the error is persistent or transient.
  std::vector<float> values(threads);
  stream.download(values.data(), out.get(), threads * sizeof(float));
  const auto check = check_fma(values, rounds);
  if (!check.ok()) {
    const DeviceBuffer fresh(gpu, threads * sizeof(float));
    auto fresh_ptr = fresh.get();
    gpu.launch(kernel, blocks, k_threads, stream.get(), {&fresh_ptr, &rounds});
    stream.download(values.data(), fresh.get(), threads * sizeof(float));
    const auto again = check_fma(values, rounds);
    const std::string recurrence = again.ok() ? "; transient: a repeat into a fresh buffer was right"
                                              : "; persistent: a repeat into a fresh buffer was wrong again";
    result.status = TestStatus::fail;
    if (check.spread) {
      const std::optional<std::optional<WrongData>> repeat{again.spread};
      result.details["fma_check"] = wrong_data_evidence(*check.spread, repeat);
      result.reason = "threads computed a different FMA chain result than the thread of the same residue: " +
                      describe(*check.spread) + " (as float bits)" + recurrence;
    } else {
      result.reason = "FMA results differ from IEEE fused multiply-add: " + check.host_mismatch + recurrence;
    }
  }
  return result;
}

} // namespace cudadiag::selftest
