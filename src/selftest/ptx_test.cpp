// The ptx self-test: the bundled PTX (kernels/ptx/, written for PTX ISA 7.0 so that any driver
// since CUDA 11.0 can JIT it) loaded through the driver's JIT. The copy kernel is verified and
// timed against cuMemcpyDtoD on the same buffers; the %smid probe, launched on an ordinary stream,
// must reach every SM (the green_ctx test relies on it).

#include "selftest/test_context.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <memory>
#include <optional>

namespace cudadiag::selftest {
namespace {

constexpr std::size_t k_chunk_bytes = std::size_t{16} << 20U; // host pattern chunk
constexpr unsigned k_probe_threads = 1024; // at most 2 blocks per SM resident: the first wave spreads

std::uint32_t pattern_word(std::uint64_t index) {
  const auto low = static_cast<std::uint32_t>(index);
  return (low * 0x9E3779B1U) ^ static_cast<std::uint32_t>(index >> 7U) ^ 0xC0FFEE00U;
}

void fill_pattern(std::vector<std::uint32_t>& chunk, std::uint64_t first_word) {
  for (std::size_t i = 0; i < chunk.size(); ++i) {
    chunk[i] = pattern_word(first_word + i);
  }
}

// Writes the pattern into `buffer` chunk by chunk, ordered on `stream`.
void upload_pattern(const Stream& stream, const DeviceBuffer& buffer) {
  std::vector<std::uint32_t> chunk(k_chunk_bytes / sizeof(std::uint32_t));
  for (std::size_t offset = 0; offset < buffer.size(); offset += k_chunk_bytes) {
    const std::size_t bytes = std::min(k_chunk_bytes, buffer.size() - offset);
    chunk.resize(bytes / sizeof(std::uint32_t));
    fill_pattern(chunk, offset / sizeof(std::uint32_t));
    stream.upload(buffer.get() + offset, chunk.data(), bytes);
  }
}

// nullopt when `buffer` holds the pattern, else what differs. Reads after everything queued on
// `stream` (the copy that produced it) has finished.
std::optional<WrongData> check_pattern(const Stream& stream, const DeviceBuffer& buffer) {
  std::vector<std::uint32_t> chunk(k_chunk_bytes / sizeof(std::uint32_t));
  std::optional<WrongData> wrong;
  for (std::size_t offset = 0; offset < buffer.size(); offset += k_chunk_bytes) {
    const std::size_t bytes = std::min(k_chunk_bytes, buffer.size() - offset);
    chunk.resize(bytes / sizeof(std::uint32_t));
    stream.download(chunk.data(), buffer.get() + offset, bytes);
    compare_words(chunk, offset / sizeof(std::uint32_t), pattern_word, wrong);
  }
  if (wrong) {
    wrong->checked = buffer.size() / sizeof(std::uint32_t);
  }
  return wrong;
}

struct LaunchShape {
  unsigned blocks;
  unsigned threads;
};

} // namespace

std::vector<int> sms_touched(const Gpu& gpu, const Module& module, cu::CUstream stream, unsigned blocks,
                             std::uint64_t spin_ns) {
  const auto nsmid_kernel = module.function("cudadiag_nsmid");
  const auto probe = module.function("cudadiag_smid_probe");
  const Stream on(gpu, stream, Stream::Borrowed{}); // the caller's (a green context's, or the test's)
  const DeviceBuffer count(gpu, sizeof(std::uint32_t));
  auto count_ptr = count.get();
  gpu.launch(nsmid_kernel, 1, 1, stream, {&count_ptr});
  std::uint32_t nsmid = 0;
  on.download(&nsmid, count.get(), sizeof nsmid);
  const std::size_t words = std::max<std::size_t>(1, (std::size_t{nsmid} + 31) / 32);
  const DeviceBuffer bitmap(gpu, words * sizeof(std::uint32_t));
  on.fill_u32(bitmap.get(), 0, words);
  auto bitmap_ptr = bitmap.get();
  auto spin = static_cast<unsigned long long>(spin_ns);
  gpu.launch(probe, blocks, k_probe_threads, stream, {&bitmap_ptr, &spin});
  std::vector<std::uint32_t> bits(words);
  on.download(bits.data(), bitmap.get(), words * sizeof(std::uint32_t));
  std::vector<int> sms;
  for (std::size_t word = 0; word < words; ++word) {
    for (unsigned bit = 0; bit < 32; ++bit) {
      if ((bits[word] >> bit & 1U) != 0) {
        sms.push_back(static_cast<int>(word * 32 + bit));
      }
    }
  }
  return sms;
}

TestResult run_ptx(const TestContext& context) {
  if (context.gpu == nullptr || !context.device) {
    return without_gpu(context);
  }
  auto result = new_result(context);
  const Gpu& gpu = *context.gpu;
  const auto& device = *context.device;
  const auto& sizes = context.sizes;

  const Module copy_module(gpu, k_copy_ptx);
  const auto copy = copy_module.function("cudadiag_copy_u32x4");
  const Module smid_module(gpu, k_smid_ptx);
  const Stream stream(gpu);
  const EventTimer timer(gpu);

  const std::size_t bytes = sizes.copy_elements * 16;
  const DeviceBuffer source(gpu, bytes);
  auto target = std::make_unique<DeviceBuffer>(gpu, bytes);
  upload_pattern(stream, source);
  stream.fill_u32(target->get(), 0, bytes / 4);

  auto src = source.get();
  auto dst = target->get();
  auto count = static_cast<unsigned long long>(sizes.copy_elements);
  const auto sm = static_cast<unsigned>(device.sm_count);
  // A few launch shapes, each tried twice; the fastest is the one timed. "flat": one pass of four
  // elements per thread, no grid-stride loop (what streaming copies usually prefer).
  const auto flat =
      static_cast<unsigned>(std::min<std::uint64_t>((sizes.copy_elements + 1023) / 1024, 0x7fffffffULL));
  const std::array<LaunchShape, 6> shapes{
      {{sm * 4, 512}, {sm * 8, 256}, {sm * 16, 256}, {sm * 32, 256}, {sm * 8, 1024}, {flat, 256}}};
  LaunchShape best = shapes[0];
  double best_ms = 0;
  for (const auto& shape : shapes) {
    for (int attempt = 0; attempt < 2; ++attempt) {
      timer.start(stream.get());
      gpu.launch(copy, shape.blocks, shape.threads, stream.get(), {&dst, &src, &count});
      const double ms = timer.stop(stream.get());
      if (best_ms == 0 || ms < best_ms) {
        best_ms = ms;
        best = shape;
      }
    }
  }
  std::vector<double> kernel_ms;
  std::vector<double> memcpy_ms;
  for (int rep = 0; rep < sizes.copy_repetitions; ++rep) {
    timer.start(stream.get());
    gpu.launch(copy, best.blocks, best.threads, stream.get(), {&dst, &src, &count});
    kernel_ms.push_back(timer.stop(stream.get()));
    timer.start(stream.get());
    gpu.check(gpu.api().memcpy_dtod_async(target->get(), source.get(), bytes, stream.get()),
              "cuMemcpyDtoDAsync");
    memcpy_ms.push_back(timer.stop(stream.get()));
  }
  // The last operation was the memcpy; copy once more with the kernel alone and verify that: the
  // clearing fill, the copy and the read-back are all ordered on the test's stream.
  const auto copy_once = [&] {
    dst = target->get();
    stream.fill_u32(dst, 0, bytes / 4);
    gpu.launch(copy, best.blocks, best.threads, stream.get(), {&dst, &src, &count});
    return check_pattern(stream, *target);
  };
  const auto copy_error = copy_once();
  std::optional<std::optional<WrongData>> copy_repeat;
  if (copy_error) {
    target.reset();
    target = std::make_unique<DeviceBuffer>(gpu, bytes); // a fresh buffer: persistent or transient?
    copy_repeat.emplace(copy_once());
    result.details["copy_check"] = wrong_data_evidence(*copy_error, copy_repeat);
  }

  const double moved_gb = 2.0 * static_cast<double>(bytes) / 1e9; // read + write
  const double copy_gbps = moved_gb / (median(kernel_ms) / 1e3);
  const double memcpy_gbps = moved_gb / (median(memcpy_ms) / 1e3);
  add_metric(result, "copy_gbps", copy_gbps, "GB/s", true);
  add_metric(result, "memcpy_dtod_gbps", memcpy_gbps, "GB/s");
  add_metric(result, "copy_vs_memcpy", copy_gbps / memcpy_gbps, "fraction");
  if (device.peak_gbps > 0) {
    add_metric(result, "copy_fraction_of_peak", copy_gbps / device.peak_gbps, "fraction");
  }
  result.details["copy"] = {{"bytes_per_buffer", bytes},      {"repetitions", sizes.copy_repetitions},
                            {"blocks", best.blocks},          {"threads", best.threads},
                            {"median_ms", median(kernel_ms)}, {"memcpy_median_ms", median(memcpy_ms)}};

  const auto sms = sms_touched(gpu, smid_module, stream.get(), 4 * sm, sizes.probe_spin_ns);
  result.details["smid_probe"] = {
      {"blocks", 4 * sm}, {"sms_touched", sms.size()}, {"sm_count", device.sm_count}};
  add_metric(result, "sms_reached", static_cast<double>(sms.size()), "count");

  if (copy_error) {
    result.status = TestStatus::fail;
    result.reason = wrong_data_reason("the PTX copy kernel", *copy_error, copy_repeat);
  } else if (static_cast<int>(sms.size()) != device.sm_count) {
    result.status = TestStatus::fail;
    result.reason = "the %smid probe reached " + std::to_string(sms.size()) + " of " +
                    std::to_string(device.sm_count) + " SMs";
  }
  return result;
}

} // namespace cudadiag::selftest
