// The self-test module: cub::DeviceReduce::Sum and cub::DeviceRadixSort::SortKeys behind the C ABI of
// cub_selftest.h. Built by nvcc (kernels/CMakeLists.txt) into libcudadiag_cub_selftest.so with
// cudart linked statically, so the module has no NEEDED entry on libcuda: cudart dlopens
// "libcuda.so.1" at run time and gets whichever driver the worker preloaded.
//
// Every run: validate the parameters, check that a context is current (the module must not create
// or switch one), allocate, generate the input on the device, warm up, time each repetition between
// two events on the caller's stream, verify the last result on the device, free everything on every
// path, and report the first failing CUDA call.

#pragma GCC visibility push(default)
#include "cub_selftest.h"
#pragma GCC visibility pop

#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cub/block/block_reduce.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/util_type.cuh>
#include <cuda/std/functional>
#include <cuda/std/type_traits>
#include <cuda/std/version>
#include <exception>
#include <vector>

#ifndef CUDADIAG_MODULE_ARCHS
#error "CUDADIAG_MODULE_ARCHS must name the code the module carries (set by kernels/CMakeLists.txt)"
#endif

#define CUDADIAG_MODULE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

// CUB's Sum accumulates in decltype(plus(init, item)); with int32 items and an int64 output that is
// int64, so the I32 case's sum is exact (no int32 overflow inside the reduction).
static_assert(cuda::std::is_same_v<cuda::std::__accumulator_t<cuda::std::plus<>, int32_t, int64_t>, int64_t>,
              "CUB would not accumulate int32 items into an int64 sum");

constexpr int k_block_threads = 256;
constexpr int k_blocks_per_sm = 8;

// ---- device-side input generation and verification -------------------------------------------------

__host__ __device__ inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__device__ inline float reduce_f32_item(uint64_t i) {
  return static_cast<float>(i % 1024) / 1024.0f;
}
__device__ inline int32_t reduce_i32_item(uint64_t i) {
  return static_cast<int32_t>(i % 1000) - 499;
}

template <typename KeyT> __device__ inline KeyT sort_key(uint64_t i);
template <> __device__ inline uint32_t sort_key<uint32_t>(uint64_t i) {
  return static_cast<uint32_t>(splitmix64(i) >> 32);
}
template <> __device__ inline uint64_t sort_key<uint64_t>(uint64_t i) {
  return splitmix64(i);
}

__device__ inline uint64_t global_thread() {
  return static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline uint64_t grid_threads() {
  return static_cast<uint64_t>(gridDim.x) * blockDim.x;
}

__global__ void fill_reduce_f32(float* out, uint64_t n) {
  for (uint64_t i = global_thread(); i < n; i += grid_threads())
    out[i] = reduce_f32_item(i);
}
__global__ void fill_reduce_i32(int32_t* out, uint64_t n) {
  for (uint64_t i = global_thread(); i < n; i += grid_threads())
    out[i] = reduce_i32_item(i);
}
template <typename KeyT> __global__ void fill_sort_keys(KeyT* out, uint64_t n) {
  for (uint64_t i = global_thread(); i < n; i += grid_threads())
    out[i] = sort_key<KeyT>(i);
}

// What the sort check compares: adjacent inversions (0 when sorted), and two multiset checksums
// (sum of a hash of each key mod 2^64, xor of the keys) that must equal the input's.
struct KeyStats {
  unsigned long long inversions;
  unsigned long long hash_sum;
  unsigned long long key_xor;
};

template <typename KeyT>
__global__ void __launch_bounds__(k_block_threads) key_stats(const KeyT* keys, uint64_t n, KeyStats* out) {
  using BlockReduce = cub::BlockReduce<unsigned long long, k_block_threads>;
  __shared__ typename BlockReduce::TempStorage storage[3];
  unsigned long long inversions = 0, hash_sum = 0, key_xor = 0;
  for (uint64_t i = global_thread(); i < n; i += grid_threads()) {
    const KeyT key = keys[i];
    hash_sum += splitmix64(static_cast<uint64_t>(key));
    key_xor ^= static_cast<unsigned long long>(key);
    if (i + 1 < n && keys[i + 1] < key)
      ++inversions;
  }
  inversions = BlockReduce(storage[0]).Sum(inversions);
  hash_sum = BlockReduce(storage[1]).Sum(hash_sum);
  key_xor = BlockReduce(storage[2]).Reduce(key_xor, cuda::std::bit_xor<>{});
  if (threadIdx.x == 0) {
    atomicAdd(&out->inversions, inversions);
    atomicAdd(&out->hash_sum, hash_sum);
    atomicXor(&out->key_xor, key_xor);
  }
}

// ---- host side ---------------------------------------------------------------------------------------

template <size_t N> void copy_text(char (&dst)[N], const char* src) {
  std::snprintf(dst, N, "%s", src ? src : "");
}

// One run's resources and its first error. The destructor synchronizes the stream and releases
// everything, whatever happened before.
class Run {
public:
  Run(cudadiag_cub_result* result, cudaStream_t stream) : m_result(result), m_stream(stream) {}
  Run(const Run&) = delete;
  Run& operator=(const Run&) = delete;
  ~Run() {
    cudaStreamSynchronize(m_stream);
    for (cudaEvent_t event : m_events)
      cudaEventDestroy(event);
    for (void* pointer : m_allocations)
      cudaFree(pointer);
    cudaGetLastError(); // leave no non-sticky error behind for the caller's next runtime call
  }

  [[nodiscard]] bool failed() const { return m_result->cuda_error != 0; }
  cudaStream_t stream() const { return m_stream; }

  // Records the first failing call; returns whether `error` is success.
  bool check(cudaError_t error, const char* where) {
    if (error == cudaSuccess)
      return true;
    if (!failed()) {
      m_result->cuda_error = static_cast<int32_t>(error);
      copy_text(m_result->error_name, cudaGetErrorName(error));
      copy_text(m_result->error_where, where);
    }
    cudaGetLastError();
    return false;
  }
  bool check_launch(const char* where) { return check(cudaGetLastError(), where); }

  template <typename T> bool allocate(T** pointer, uint64_t bytes, const char* what) {
    void* raw = nullptr;
    const cudaError_t error = cudaMalloc(&raw, static_cast<size_t>(bytes));
    if (error != cudaSuccess) {
      char where[128];
      std::snprintf(where, sizeof where, "cudaMalloc %s (%llu bytes)", what,
                    static_cast<unsigned long long>(bytes));
      return check(error, where);
    }
    m_allocations.push_back(raw);
    m_result->device_bytes += bytes;
    *pointer = static_cast<T*>(raw);
    return true;
  }

  bool create_events(size_t count) {
    m_events.reserve(count);
    for (size_t i = 0; i < count; ++i) {
      cudaEvent_t event = nullptr;
      if (!check(cudaEventCreate(&event), "cudaEventCreate"))
        return false;
      m_events.push_back(event);
    }
    return true;
  }
  cudaEvent_t event(size_t index) const { return m_events[index]; }

  // Grid for the module's own grid-stride kernels.
  bool grid_for(uint64_t n, unsigned* blocks) {
    int device = 0;
    int sms = 0;
    if (!check(cudaGetDevice(&device), "cudaGetDevice"))
      return false;
    if (!check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
               "cudaDeviceGetAttribute(MultiProcessorCount)"))
      return false;
    const uint64_t wanted = static_cast<uint64_t>(std::max(sms, 1)) * k_blocks_per_sm;
    const uint64_t needed = (n + k_block_threads - 1) / k_block_threads;
    *blocks = static_cast<unsigned>(std::max<uint64_t>(1, std::min(wanted, needed)));
    return true;
  }

  cudadiag_cub_result& result() { return *m_result; }

private:
  cudadiag_cub_result* m_result;
  cudaStream_t m_stream;
  std::vector<void*> m_allocations;
  std::vector<cudaEvent_t> m_events;
};

// Runs `prepare` (untimed) then `body` for warmup runs, then for each timed repetition with `body`
// alone between two events; fills median_ms and best_ms.
// Warm-up by time: after `warmup` runs, batches of runs (doubling in size) until `warmup_ms` of GPU
// time have passed since the first one, measured with two extra events.
template <typename Prepare, typename Body>
bool time_repetitions(Run& run, int32_t warmup, int32_t warmup_ms, int32_t repetitions, Prepare prepare,
                      Body body) {
  const auto reps = static_cast<size_t>(repetitions);
  if (!run.create_events(2 * reps + 2))
    return false;
  cudaEvent_t warm_start = run.event(2 * reps);
  cudaEvent_t warm_now = run.event(2 * reps + 1);
  if (!run.check(cudaEventRecord(warm_start, run.stream()), "cudaEventRecord (warm-up)"))
    return false;
  int32_t runs = 0;
  for (; runs < warmup; ++runs)
    if (!prepare() || !body())
      return false;
  float elapsed = 0;
  for (int32_t batch = 1; warmup_ms > 0; batch = batch < 4096 ? batch * 2 : batch) {
    if (!run.check(cudaEventRecord(warm_now, run.stream()), "cudaEventRecord (warm-up)") ||
        !run.check(cudaEventSynchronize(warm_now), "cudaEventSynchronize (warm-up)") ||
        !run.check(cudaEventElapsedTime(&elapsed, warm_start, warm_now), "cudaEventElapsedTime (warm-up)"))
      return false;
    if (elapsed >= static_cast<float>(warmup_ms))
      break;
    for (int32_t i = 0; i < batch; ++i, ++runs)
      if (!prepare() || !body())
        return false;
  }
  run.result().warmup_runs = runs;
  run.result().warmup_elapsed_ms = elapsed;
  for (size_t i = 0; i < reps; ++i) {
    if (!prepare())
      return false;
    if (!run.check(cudaEventRecord(run.event(2 * i), run.stream()), "cudaEventRecord"))
      return false;
    if (!body())
      return false;
    if (!run.check(cudaEventRecord(run.event(2 * i + 1), run.stream()), "cudaEventRecord"))
      return false;
  }
  if (!run.check(cudaEventSynchronize(run.event(2 * reps - 1)), "cudaEventSynchronize (timed repetitions)"))
    return false;
  std::vector<double> times;
  times.reserve(reps);
  for (size_t i = 0; i < reps; ++i) {
    float ms = 0;
    if (!run.check(cudaEventElapsedTime(&ms, run.event(2 * i), run.event(2 * i + 1)), "cudaEventElapsedTime"))
      return false;
    times.push_back(static_cast<double>(ms));
  }
  std::sort(times.begin(), times.end());
  run.result().best_ms = times.front();
  run.result().max_ms = times.back();
  run.result().median_ms = reps % 2 ? times[reps / 2] : (times[reps / 2 - 1] + times[reps / 2]) / 2;
  return true;
}

// Closed forms of the reduce inputs' sums.
double expected_sum_f32(uint64_t n) {
  const uint64_t full = n / 1024, rest = n % 1024;
  return static_cast<double>(full) * 511.5 +
         static_cast<double>(rest == 0 ? 0 : rest * (rest - 1) / 2) / 1024.0;
}
__int128 expected_sum_i32(uint64_t n) {
  const __int128 full = n / 1000, rest = n % 1000;
  return full * 500 + rest * (rest - 1) / 2 - 499 * rest;
}

std::string int128_text(__int128 value) {
  const bool negative = value < 0;
  unsigned __int128 magnitude = negative ? -static_cast<unsigned __int128>(value) : value;
  std::string digits;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(magnitude % 10)));
    magnitude /= 10;
  } while (magnitude);
  return negative ? "-" + digits : digits;
}

template <typename InT, typename OutT, typename NumItemsT>
void run_reduce(Run& run, const cudadiag_cub_params& params) {
  cudadiag_cub_result& result = run.result();
  const uint64_t n = params.count;
  const auto num_items = static_cast<NumItemsT>(n);
  result.bytes_per_run = static_cast<double>(n) * sizeof(InT);

  InT* input = nullptr;
  OutT* output = nullptr;
  void* temp = nullptr;
  size_t temp_bytes = 0;
  unsigned blocks = 0;
  if (!run.allocate(&input, n * sizeof(InT), "input") || !run.allocate(&output, sizeof(OutT), "output"))
    return;
  if (!run.check(cub::DeviceReduce::Sum(nullptr, temp_bytes, input, output, num_items, run.stream()),
                 "cub::DeviceReduce::Sum (temporary storage size)"))
    return;
  result.temp_storage_bytes = temp_bytes;
  if (!run.allocate(&temp, std::max<size_t>(temp_bytes, 1), "cub temporary storage"))
    return;
  if (!run.grid_for(n, &blocks))
    return;

  if constexpr (cuda::std::is_same_v<InT, float>)
    fill_reduce_f32<<<blocks, k_block_threads, 0, run.stream()>>>(input, n);
  else
    fill_reduce_i32<<<blocks, k_block_threads, 0, run.stream()>>>(input, n);
  if (!run.check_launch("fill kernel (reduce input)"))
    return;

  const auto nothing = [] { return true; };
  const auto reduce = [&] {
    size_t bytes = temp_bytes;
    return run.check(cub::DeviceReduce::Sum(temp, bytes, input, output, num_items, run.stream()),
                     "cub::DeviceReduce::Sum");
  };
  if (!time_repetitions(run, params.warmup, params.warmup_ms, params.repetitions, nothing, reduce))
    return;

  OutT got{};
  if (!run.check(cudaMemcpyAsync(&got, output, sizeof got, cudaMemcpyDeviceToHost, run.stream()),
                 "cudaMemcpyAsync (reduce result)") ||
      !run.check(cudaStreamSynchronize(run.stream()), "cudaStreamSynchronize (reduce result)"))
    return;

  if constexpr (cuda::std::is_same_v<InT, float>) {
    const double expected = expected_sum_f32(n);
    const double error = std::fabs(static_cast<double>(got) - expected) / std::max(std::fabs(expected), 1.0);
    if (error <= 1e-5)
      result.verified = 1;
    else
      std::snprintf(result.mismatch, sizeof result.mismatch,
                    "f32 sum of %llu items: got %.9g, expected %.9g (relative error %.3g > 1e-5)",
                    static_cast<unsigned long long>(n), static_cast<double>(got), expected, error);
  } else {
    const __int128 expected = expected_sum_i32(n);
    if (static_cast<__int128>(got) == expected)
      result.verified = 1;
    else
      std::snprintf(result.mismatch, sizeof result.mismatch, "i32 sum of %llu items: got %lld, expected %s",
                    static_cast<unsigned long long>(n), static_cast<long long>(got),
                    int128_text(expected).c_str());
  }
}

template <typename KeyT, typename NumItemsT> void run_sort(Run& run, const cudadiag_cub_params& params) {
  cudadiag_cub_result& result = run.result();
  const uint64_t n = params.count;
  const auto num_items = static_cast<NumItemsT>(n);
  constexpr int end_bit = static_cast<int>(sizeof(KeyT) * 8);
  result.keys_per_run = static_cast<double>(n);

  KeyT* keys = nullptr;
  KeyT* alternate = nullptr;
  KeyStats* stats = nullptr; // [0] input, [1] output
  void* temp = nullptr;
  size_t temp_bytes = 0;
  unsigned blocks = 0;
  if (!run.allocate(&keys, n * sizeof(KeyT), "keys") ||
      !run.allocate(&alternate, n * sizeof(KeyT), "alternate keys") ||
      !run.allocate(&stats, 2 * sizeof(KeyStats), "checksums"))
    return;
  {
    cub::DoubleBuffer<KeyT> buffers(keys, alternate);
    if (!run.check(
            cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, buffers, num_items, 0, end_bit, run.stream()),
            "cub::DeviceRadixSort::SortKeys (temporary storage size)"))
      return;
  }
  result.temp_storage_bytes = temp_bytes;
  if (!run.allocate(&temp, std::max<size_t>(temp_bytes, 1), "cub temporary storage"))
    return;
  if (!run.grid_for(n, &blocks))
    return;

  const auto generate = [&] {
    fill_sort_keys<KeyT><<<blocks, k_block_threads, 0, run.stream()>>>(keys, n);
    return run.check_launch("fill kernel (sort keys)");
  };
  const auto checksum = [&](const KeyT* data, KeyStats* out, const char* where) {
    key_stats<KeyT><<<blocks, k_block_threads, 0, run.stream()>>>(data, n, out);
    return run.check_launch(where);
  };
  if (!run.check(cudaMemsetAsync(stats, 0, 2 * sizeof(KeyStats), run.stream()),
                 "cudaMemsetAsync (checksums)") ||
      !generate() || !checksum(keys, &stats[0], "checksum kernel (input)"))
    return;

  const KeyT* sorted = nullptr;
  const auto sort = [&] {
    cub::DoubleBuffer<KeyT> buffers(keys, alternate);
    size_t bytes = temp_bytes;
    const bool ok =
        run.check(cub::DeviceRadixSort::SortKeys(temp, bytes, buffers, num_items, 0, end_bit, run.stream()),
                  "cub::DeviceRadixSort::SortKeys");
    sorted = buffers.Current();
    return ok;
  };
  if (!time_repetitions(run, params.warmup, params.warmup_ms, params.repetitions, generate, sort))
    return;
  if (!checksum(sorted, &stats[1], "checksum kernel (output)"))
    return;

  KeyStats host[2] = {};
  if (!run.check(cudaMemcpyAsync(host, stats, sizeof host, cudaMemcpyDeviceToHost, run.stream()),
                 "cudaMemcpyAsync (checksums)") ||
      !run.check(cudaStreamSynchronize(run.stream()), "cudaStreamSynchronize (checksums)"))
    return;
  if (host[1].inversions != 0)
    std::snprintf(result.mismatch, sizeof result.mismatch,
                  "u%d sort of %llu keys: %llu adjacent pairs out of order", end_bit,
                  static_cast<unsigned long long>(n), host[1].inversions);
  else if (host[0].hash_sum != host[1].hash_sum || host[0].key_xor != host[1].key_xor)
    std::snprintf(result.mismatch, sizeof result.mismatch,
                  "u%d sort of %llu keys: output is not a permutation of the input "
                  "(hash sum %016llx vs %016llx, xor %016llx vs %016llx)",
                  end_bit, static_cast<unsigned long long>(n), host[1].hash_sum, host[0].hash_sum,
                  host[1].key_xor, host[0].key_xor);
  else
    result.verified = 1;
}

// CUB picks 32-bit offsets for int counts and 64-bit offsets for int64 counts; the common sizes
// (<= INT_MAX) take exactly the path a plain CUB call with an int count takes.
template <template <typename> class Case> void dispatch_count(Run& run, const cudadiag_cub_params& params) {
  if (params.count <= static_cast<uint64_t>(INT_MAX))
    Case<int>::run(run, params);
  else
    Case<int64_t>::run(run, params);
}
template <typename N> struct ReduceF32 {
  static void run(Run& r, const cudadiag_cub_params& p) { run_reduce<float, float, N>(r, p); }
};
template <typename N> struct ReduceI32 {
  static void run(Run& r, const cudadiag_cub_params& p) { run_reduce<int32_t, int64_t, N>(r, p); }
};
template <typename N> struct SortU32 {
  static void run(Run& r, const cudadiag_cub_params& p) { run_sort<uint32_t, N>(r, p); }
};
template <typename N> struct SortU64 {
  static void run(Run& r, const cudadiag_cub_params& p) { run_sort<uint64_t, N>(r, p); }
};

void fail_parameters(cudadiag_cub_result* result, const char* where) {
  result->cuda_error = static_cast<int32_t>(cudaErrorInvalidValue);
  copy_text(result->error_name, cudaGetErrorName(cudaErrorInvalidValue));
  copy_text(result->error_where, where);
}

// The precondition "a context is current": without one cudart would create and bind the primary
// context itself, which the module must never do. Unknown (entry point unavailable) counts as met.
bool context_is_current(cudadiag_cub_result* result) {
  using GetCurrent = int (*)(void**);
  void* function = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t error =
      cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &function, 12000, cudaEnableDefault, &status);
  if (error != cudaSuccess) {
    result->cuda_error = static_cast<int32_t>(error);
    copy_text(result->error_name, cudaGetErrorName(error));
    copy_text(result->error_where, "cudaGetDriverEntryPointByVersion(cuCtxGetCurrent)");
    cudaGetLastError();
    return false;
  }
  if (status != cudaDriverEntryPointSuccess || function == nullptr)
    return true;
  void* context = nullptr;
  if (reinterpret_cast<GetCurrent>(function)(&context) == 0 && context == nullptr) {
    result->cuda_error = static_cast<int32_t>(cudaErrorDeviceUninitialized);
    copy_text(result->error_name, cudaGetErrorName(cudaErrorDeviceUninitialized));
    copy_text(result->error_where, "no current context (the caller must make one current)");
    return false;
  }
  return true;
}

} // namespace

CUDADIAG_MODULE_EXPORT int32_t cudadiag_cub_selftest_abi(void) {
  return CUDADIAG_CUB_SELFTEST_ABI;
}

CUDADIAG_MODULE_EXPORT int32_t cudadiag_cub_selftest_info(cudadiag_cub_module_info* info) {
  if (info == nullptr)
    return static_cast<int32_t>(cudaErrorInvalidValue);
  std::memset(info, 0, sizeof *info);
  info->abi = CUDADIAG_CUB_SELFTEST_ABI;
  info->cuda_version_built = CUDART_VERSION;
  info->cccl_version = CCCL_VERSION;
  copy_text(info->archs, CUDADIAG_MODULE_ARCHS);
  try {
    cudaError_t first = cudaRuntimeGetVersion(&info->runtime_version);
    cudaError_t driver = cudaDriverGetVersion(&info->driver_version);
    // cudart reports "no driver" as success with version 0; the ABI reports it as an error.
    if (driver == cudaSuccess && info->driver_version == 0)
      driver = cudaErrorInsufficientDriver;
    if (first == cudaSuccess)
      first = driver;
    cudaGetLastError();
    return static_cast<int32_t>(first);
  } catch (...) {
    return static_cast<int32_t>(cudaErrorUnknown);
  }
}

CUDADIAG_MODULE_EXPORT int32_t cudadiag_cub_selftest_run(const cudadiag_cub_params* params,
                                                         cudadiag_cub_result* result) {
  if (result == nullptr)
    return static_cast<int32_t>(cudaErrorInvalidValue);
  std::memset(result, 0, sizeof *result);
  if (params == nullptr) {
    fail_parameters(result, "parameters: NULL");
    return result->cuda_error;
  }
  if (params->which < CUDADIAG_CUB_REDUCE_F32 || params->which > CUDADIAG_CUB_SORT_U64) {
    fail_parameters(result, "parameters: unknown case");
    return result->cuda_error;
  }
  if (params->count < 1 || params->count > (static_cast<uint64_t>(1) << 40) || params->warmup < 0 ||
      params->repetitions < 1 || params->warmup_ms < 0 || params->warmup_ms > 10000) {
    fail_parameters(
        result,
        "parameters: need 1 <= count <= 2^40, warmup >= 0, repetitions >= 1, 0 <= warmup_ms <= 10000");
    return result->cuda_error;
  }
  try {
    cudaGetLastError(); // an error left by an earlier, unrelated runtime call is not ours
    if (!context_is_current(result))
      return result->cuda_error;
    Run run(result, static_cast<cudaStream_t>(params->stream));
    switch (params->which) {
    case CUDADIAG_CUB_REDUCE_F32: dispatch_count<ReduceF32>(run, *params); break;
    case CUDADIAG_CUB_REDUCE_I32: dispatch_count<ReduceI32>(run, *params); break;
    case CUDADIAG_CUB_SORT_U32: dispatch_count<SortU32>(run, *params); break;
    case CUDADIAG_CUB_SORT_U64: dispatch_count<SortU64>(run, *params); break;
    default: break;
    }
  } catch (const std::exception& e) {
    if (result->cuda_error == 0) {
      result->cuda_error = static_cast<int32_t>(cudaErrorUnknown);
      copy_text(result->error_name, cudaGetErrorName(cudaErrorUnknown));
      std::snprintf(result->error_where, sizeof result->error_where, "exception: %s", e.what());
    }
  } catch (...) {
    if (result->cuda_error == 0) {
      result->cuda_error = static_cast<int32_t>(cudaErrorUnknown);
      copy_text(result->error_name, cudaGetErrorName(cudaErrorUnknown));
      copy_text(result->error_where, "exception");
    }
  }
  if (result->cuda_error != 0) {
    result->verified = 0;
    result->mismatch[0] = '\0';
  }
  return result->cuda_error;
}
