// The memory self-test (full level): most of the free device memory, in chunks of up to 4 GiB, written
// and verified on the GPU by the bundled PTX (kernels/ptx/memtest.cu) with walking ones (4 rotations),
// moving inversions (0 and ~0, ascending then descending) and a seeded random pattern and its
// inverse, like DCGM's memtest and cuda_memtest. Wrong words are counted, the first 32 of each chunk
// recorded with their device addresses; when any is wrong, the patterns run once more over the same
// memory to say whether the error is persistent or transient. Everything (the counters' clear, the
// kernels, the read-back) is ordered on the test's stream, so another process's work cannot reorder
// it. NVML's ECC counters and remapped rows are read before and after; a wrong word or any new
// memory error fails the test (and is the gpu.memory_errors finding).
//
// Fault injection (a test of this test, never on by default): WorkerConfig::inject_memory_errors
// words of the first chunk get bit 0 flipped by cudadiag_mem_corrupt, on the test's stream, after
// the first pass's first fill; the check must then count exactly that many wrong words (a transient
// error: the repeat pass is not injected), and the result says they were injected.

#include "selftest/test_context.hpp"

#include <chrono>
#include <cstdio>

namespace cudadiag::selftest {
namespace {

constexpr std::size_t k_chunk_bytes = std::size_t{4} << 30U;
constexpr std::size_t k_min_chunk_bytes = std::size_t{256} << 20U;
constexpr std::size_t k_records = 32;                    // kernels/ptx/memtest.cu: CUDADIAG_MEM_RECORDS
constexpr std::size_t k_error_words = 1 + 2 * k_records; // count, then (word, expected | found << 32)
constexpr unsigned k_threads = 256;
constexpr std::uint64_t k_invert = 0x100;
constexpr std::uint64_t k_descending = 0x200;

// One kernel launch over every chunk. kind: 0 fill, 1 check, 2 check then write `next`.
struct Step {
  int kind;
  std::uint64_t mode, arg, next_mode, next_arg;
};
struct Pattern {
  std::string name;
  std::vector<Step> steps;
};

std::vector<Pattern> patterns(std::uint64_t seed) {
  std::vector<Pattern> out;
  Pattern walking{"walking_ones", {}};
  for (std::uint64_t rotation = 0; rotation < 32; rotation += 8) {
    walking.steps.push_back({0, 1, rotation, 0, 0});
    walking.steps.push_back({1, 1, rotation, 0, 0});
  }
  out.push_back(walking);
  out.push_back({"moving_inversions",
                 {{0, 0, 0, 0, 0},
                  {2, 0, 0, 0, 0xffffffffULL},
                  {2, 0, 0xffffffffULL, k_descending, 0},
                  {1, 0, 0, 0, 0}}});
  out.push_back({"random",
                 {{0, 2, seed, 0, 0},
                  {1, 2, seed, 0, 0},
                  {0, 2 | k_invert, seed, 0, 0},
                  {1, 2 | k_invert, seed, 0, 0}}});
  return out;
}

std::string hex(std::uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

} // namespace

TestResult run_memory(const TestContext& context) {
  if (context.gpu == nullptr || !context.device) {
    return without_gpu(context);
  }
  if (!context.sizes.memory_test) {
    return skipped(context, "runs at --level full only (it writes most of the free device memory)");
  }
  auto result = new_result(context);
  const Gpu& gpu = *context.gpu;
  const auto& api = gpu.api();
  gpu.require(api.mem_get_info, "cuMemGetInfo");
  const Module module(gpu, k_memtest_ptx);
  const auto fill = module.function("cudadiag_mem_fill");
  const auto check = module.function("cudadiag_mem_check");
  const auto check_write = module.function("cudadiag_mem_check_write");
  const unsigned injected = context.config.inject_memory_errors;
  const auto corrupt = injected > 0 ? module.function("cudadiag_mem_corrupt") : decltype(fill){};
  const Stream stream(gpu);
  const EventTimer timer(gpu);

  const std::optional<MemoryCounters> before =
      context.nvml != nullptr ? std::optional(context.nvml->memory_counters()) : std::nullopt;
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  gpu.check(api.mem_get_info(&free_bytes, &total_bytes), "cuMemGetInfo");
  // Leave 2% of the memory (at least 512 MiB) to the driver and whatever else runs.
  const std::size_t reserve = std::max<std::size_t>(std::size_t{512} << 20U, total_bytes / 50);
  const std::size_t wanted = free_bytes > reserve ? free_bytes - reserve : 0;

  std::vector<std::unique_ptr<DeviceBuffer>> chunks;
  std::size_t tested = 0;
  for (std::size_t chunk = k_chunk_bytes; tested < wanted && chunk >= k_min_chunk_bytes;) {
    const std::size_t bytes = std::min(chunk, wanted - tested) / 16 * 16;
    if (bytes < k_min_chunk_bytes) {
      break;
    }
    try {
      chunks.push_back(std::make_unique<DeviceBuffer>(gpu, bytes));
      tested += bytes;
    } catch (const CudaFailure& failure) {
      if (failure.code() != cu::CUDA_ERROR_OUT_OF_MEMORY) {
        throw;
      }
      chunk /= 2;
    }
  }
  if (chunks.empty()) {
    return skipped(context, "not enough free device memory for the pattern test (" +
                                std::to_string(free_bytes >> 20U) + " MiB free)");
  }
  // The error counters are cleared on the test's stream, before the kernels that count into them:
  // a clear on another stream could run after them and erase a real error.
  const DeviceBuffer errors(gpu, chunks.size() * k_error_words * sizeof(std::uint64_t));
  stream.fill_u32(errors.get(), 0, errors.size() / 4);

  const auto seed = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  const unsigned blocks = static_cast<unsigned>(context.device->sm_count) * 8;
  Evidence::List timings;
  double total_ms = 0;
  std::uint64_t traffic = 0;
  bool inject_now = injected > 0;
  const auto run_pattern = [&](const Pattern& pattern) {
    timer.start(stream.get());
    for (const auto& step : pattern.steps) {
      for (std::size_t c = 0; c < chunks.size(); ++c) {
        auto buffer = chunks[c]->get();
        auto elements = static_cast<unsigned long long>(chunks[c]->size() / 16);
        auto mode = static_cast<unsigned long long>(step.mode);
        auto arg = static_cast<unsigned long long>(step.arg);
        auto next_mode = static_cast<unsigned long long>(step.next_mode);
        auto next_arg = static_cast<unsigned long long>(step.next_arg);
        auto error_block = errors.get() + c * k_error_words * sizeof(std::uint64_t);
        if (step.kind == 0) {
          gpu.launch(fill, blocks, k_threads, stream.get(), {&buffer, &elements, &mode, &arg});
        } else if (step.kind == 1) {
          gpu.launch(check, blocks, k_threads, stream.get(), {&buffer, &elements, &mode, &arg, &error_block});
        } else {
          gpu.launch(check_write, blocks, k_threads, stream.get(),
                     {&buffer, &elements, &mode, &arg, &next_mode, &next_arg, &error_block});
        }
      }
      traffic += tested * (step.kind == 2 ? 2 : 1);
      if (inject_now && step.kind == 0) {
        inject_now = false;
        auto buffer = chunks.front()->get();
        auto elements = static_cast<unsigned long long>(chunks.front()->size() / 16);
        auto count = static_cast<unsigned long long>(injected);
        gpu.launch(corrupt, 1, k_threads, stream.get(), {&buffer, &elements, &count});
      }
    }
    return timer.stop(stream.get());
  };
  const auto all_patterns = patterns(seed);
  for (const auto& pattern : all_patterns) {
    const double ms = run_pattern(pattern);
    total_ms += ms;
    timings.push_back({{"pattern", pattern.name}, {"ms", ms}});
  }

  // The counters, read after the stream that wrote them is synchronised (download does).
  const auto read_errors = [&](std::uint64_t& wrong, std::vector<WrongWord>& first) {
    std::vector<std::uint64_t> words(chunks.size() * k_error_words);
    stream.download(words.data(), errors.get(), words.size() * sizeof(std::uint64_t));
    for (std::size_t c = 0; c < chunks.size(); ++c) {
      const auto* block = &words[c * k_error_words];
      wrong += block[0];
      for (std::size_t r = 0; r < std::min<std::uint64_t>(block[0], k_records) && first.size() < k_records;
           ++r) {
        const auto record = block[2 + 2 * r];
        first.push_back(
            {hex(chunks[c]->get() + block[1 + 2 * r] * 4), hex(record & 0xffffffffULL), hex(record >> 32U)});
      }
    }
  };
  std::uint64_t wrong = 0;
  std::vector<WrongWord> first;
  read_errors(wrong, first);
  // A failed check runs once more over the same memory (a fresh fill of every pattern), only to
  // say whether the error is persistent (a bad cell) or transient: both fail the test.
  std::optional<std::uint64_t> repeat_wrong;
  std::vector<WrongWord> repeat_first;
  if (wrong > 0) {
    stream.fill_u32(errors.get(), 0, errors.size() / 4);
    const std::uint64_t timed_traffic = traffic; // the figure is the first pass's
    for (const auto& pattern : all_patterns) {
      static_cast<void>(run_pattern(pattern));
    }
    traffic = timed_traffic;
    repeat_wrong = 0;
    read_errors(*repeat_wrong, repeat_first);
  }
  const double gbps = total_ms > 0 ? static_cast<double>(traffic) / (total_ms / 1e3) / 1e9 : 0;
  add_metric(result, "tested_gib", static_cast<double>(tested) / static_cast<double>(1ULL << 30U), "GiB",
             true);
  add_metric(result, "pattern_gbps", gbps, "GB/s");
  add_metric(result, "wrong_words", static_cast<double>(wrong), "count");

  Evidence memory = {{"bytes_tested", tested},
                     {"chunks", chunks.size()},
                     {"free_bytes_before", free_bytes},
                     {"total_bytes", total_bytes},
                     {"seed", seed},
                     {"patterns", timings}};
  MemoryFacts facts;
  facts.wrong_words = wrong;
  facts.first_wrong_words = first;
  facts.injected_words = injected;
  if (before) {
    facts.nvml_before = *before;
    facts.nvml_after = context.nvml->memory_counters();
    facts.new_errors = new_memory_errors(*facts.nvml_before, *facts.nvml_after);
  } else {
    memory["nvml_unknown"] = context.nvml_problem.empty() ? "NVML was not found" : context.nvml_problem;
  }
  const auto rose = facts.new_errors;
  if (repeat_wrong) {
    memory["repeat"] =
        Evidence{{"wrong_words", *repeat_wrong},
                 {"first_address",
                  repeat_first.empty() ? EvidenceValue() : EvidenceValue(repeat_first.front().address)},
                 {"persistent", *repeat_wrong > 0}};
  }
  result.details["memory"] = std::move(memory);
  result.memory = std::move(facts);
  if (wrong > 0) {
    result.status = TestStatus::fail;
    result.reason =
        std::to_string(wrong) + " words read back wrong in " + std::to_string(tested >> 20U) +
        " MiB; first at " + first.front().address + " (expected " + first.front().expected + ", found " +
        first.front().found + ")" +
        (*repeat_wrong > 0
             ? "; persistent: the patterns run again found " + std::to_string(*repeat_wrong) +
                   " wrong words" +
                   (repeat_first.empty() ? "" : " (first at " + repeat_first.front().address + ")")
             : std::string("; transient: the patterns run again found none")) +
        (injected > 0 ? "; " + std::to_string(injected) +
                            " of them injected on purpose (CUDADIAG_SELFTEST_INJECT_MEMORY_ERRORS)"
                      : std::string());
  } else if (!rose.empty()) {
    std::string list;
    for (const auto& item : rose) {
      list += (list.empty() ? "" : ", ") + item;
    }
    result.status = TestStatus::fail;
    result.reason = "NVML counted new memory errors during the test: " + list;
  }
  return result;
}

} // namespace cudadiag::selftest
