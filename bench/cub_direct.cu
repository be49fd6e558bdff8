// CUB called directly, the plainest way: the reference figures for the self-test's reduce and sort
// benchmarks, and cudaMemcpy device-to-device for the copy benchmark.
//
//   nvcc -O3 -std=c++17 -arch=native -o cub_direct bench/cub_direct.cu
//   ./cub_direct [--device N] [--reps N] [--warmup N] [--copy-bytes B]
//
// Same inputs, sizes and timing as the self-test module (kernels/cub_selftest.cu): data generated
// on the device, each repetition between two events on one stream, sort keys regenerated before
// each repetition outside the timed region, median over the repetitions after the warmup runs.
// Prints one JSON object on stdout. GB/s: reduce counts the bytes read (count x 4); memcpy counts
// bytes read + written (2 x size), the convention of bandwidth tests.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <vector>

#define CHECK(call)                                                                                          \
  do {                                                                                                       \
    cudaError_t error_ = (call);                                                                             \
    if (error_ != cudaSuccess) {                                                                             \
      std::fprintf(stderr, "cub_direct: %s failed: %s (%s:%d)\n", #call, cudaGetErrorString(error_),         \
                   __FILE__, __LINE__);                                                                      \
      std::exit(1);                                                                                          \
    }                                                                                                        \
  } while (0)

__host__ __device__ inline uint64_t splitmix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__global__ void fill_f32(float* out, uint64_t n) {
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += uint64_t(gridDim.x) * blockDim.x)
    out[i] = float(i % 1024) / 1024.0f;
}
template <typename KeyT> __global__ void fill_keys(KeyT* out, uint64_t n) {
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += uint64_t(gridDim.x) * blockDim.x)
    out[i] = sizeof(KeyT) == 4 ? KeyT(splitmix64(i) >> 32) : KeyT(splitmix64(i));
}

static int g_reps = 20;
static int g_warmup = 3;
static int g_blocks = 0;

// Median of the timed repetitions of `body`, each preceded by the untimed `prepare`.
template <typename Prepare, typename Body> double median_ms(cudaStream_t stream, Prepare prepare, Body body) {
  for (int i = 0; i < g_warmup; ++i) {
    prepare();
    body();
  }
  std::vector<cudaEvent_t> events(2 * g_reps);
  for (cudaEvent_t& event : events)
    CHECK(cudaEventCreate(&event));
  for (int i = 0; i < g_reps; ++i) {
    prepare();
    CHECK(cudaEventRecord(events[2 * i], stream));
    body();
    CHECK(cudaEventRecord(events[2 * i + 1], stream));
  }
  CHECK(cudaEventSynchronize(events.back()));
  std::vector<double> times;
  for (int i = 0; i < g_reps; ++i) {
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, events[2 * i], events[2 * i + 1]));
    times.push_back(ms);
  }
  for (cudaEvent_t event : events)
    CHECK(cudaEventDestroy(event));
  std::sort(times.begin(), times.end());
  return g_reps % 2 ? times[g_reps / 2] : (times[g_reps / 2 - 1] + times[g_reps / 2]) / 2;
}

static double reduce_f32_gbps(cudaStream_t stream, int n) {
  float* in = nullptr;
  float* out = nullptr;
  void* temp = nullptr;
  size_t temp_bytes = 0;
  CHECK(cudaMalloc(&in, size_t(n) * sizeof(float)));
  CHECK(cudaMalloc(&out, sizeof(float)));
  fill_f32<<<g_blocks, 256, 0, stream>>>(in, n);
  CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes, in, out, n, stream));
  CHECK(cudaMalloc(&temp, temp_bytes));
  const double ms = median_ms(
      stream, [] {}, [&] { CHECK(cub::DeviceReduce::Sum(temp, temp_bytes, in, out, n, stream)); });
  CHECK(cudaFree(temp));
  CHECK(cudaFree(out));
  CHECK(cudaFree(in));
  return double(n) * sizeof(float) / (ms * 1e6);
}

template <typename KeyT> static double sort_gkeys(cudaStream_t stream, int n) {
  KeyT* keys = nullptr;
  KeyT* alternate = nullptr;
  void* temp = nullptr;
  size_t temp_bytes = 0;
  CHECK(cudaMalloc(&keys, size_t(n) * sizeof(KeyT)));
  CHECK(cudaMalloc(&alternate, size_t(n) * sizeof(KeyT)));
  cub::DoubleBuffer<KeyT> buffers(keys, alternate);
  CHECK(cub::DeviceRadixSort::SortKeys(nullptr, temp_bytes, buffers, n, 0, int(sizeof(KeyT) * 8), stream));
  CHECK(cudaMalloc(&temp, temp_bytes));
  const double ms = median_ms(
      stream,
      [&] {
        fill_keys<KeyT><<<g_blocks, 256, 0, stream>>>(keys, n);
        buffers = cub::DoubleBuffer<KeyT>(keys, alternate);
      },
      [&] {
        CHECK(cub::DeviceRadixSort::SortKeys(temp, temp_bytes, buffers, n, 0, int(sizeof(KeyT) * 8), stream));
      });
  CHECK(cudaFree(temp));
  CHECK(cudaFree(alternate));
  CHECK(cudaFree(keys));
  return double(n) / (ms * 1e6);
}

static double memcpy_dtod_gbps(cudaStream_t stream, size_t bytes) {
  void* src = nullptr;
  void* dst = nullptr;
  CHECK(cudaMalloc(&src, bytes));
  CHECK(cudaMalloc(&dst, bytes));
  CHECK(cudaMemsetAsync(src, 1, bytes, stream));
  const double ms = median_ms(
      stream, [] {}, [&] { CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream)); });
  CHECK(cudaFree(dst));
  CHECK(cudaFree(src));
  return 2.0 * double(bytes) / (ms * 1e6);
}

int main(int argc, char** argv) {
  size_t copy_bytes = size_t(1) << 30;
  int device = 0;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--reps"))
      g_reps = std::max(1, std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--warmup"))
      g_warmup = std::max(0, std::atoi(argv[i + 1]));
    else if (!std::strcmp(argv[i], "--copy-bytes"))
      copy_bytes = std::strtoull(argv[i + 1], nullptr, 0);
    else if (!std::strcmp(argv[i], "--device"))
      device = std::atoi(argv[i + 1]);
    else {
      std::fprintf(stderr, "usage: %s [--device N] [--reps N] [--warmup N] [--copy-bytes B]\n", argv[0]);
      return 2;
    }
  }
  cudaDeviceProp prop{};
  CHECK(cudaSetDevice(device));
  CHECK(cudaGetDeviceProperties(&prop, device));
  g_blocks = prop.multiProcessorCount * 8;
  cudaStream_t stream = nullptr;
  CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));

  const int reduce_n = 1 << 30, sort_n = 1 << 28;
  const double reduce = reduce_f32_gbps(stream, reduce_n);
  const double sort32 = sort_gkeys<uint32_t>(stream, sort_n);
  const double sort64 = sort_gkeys<uint64_t>(stream, sort_n);
  const double copy = memcpy_dtod_gbps(stream, copy_bytes);
  CHECK(cudaStreamDestroy(stream));

  int runtime = 0, driver = 0;
  CHECK(cudaRuntimeGetVersion(&runtime));
  CHECK(cudaDriverGetVersion(&driver));
  std::printf(
      "{\"device\": \"%s\", \"sm_count\": %d, \"runtime_version\": %d, \"driver_version\": %d, "
      "\"cccl_version\": %d, \"reps\": %d, \"warmup\": %d,\n"
      " \"reduce_f32_items\": %d, \"reduce_f32_gbps\": %.1f,\n"
      " \"sort_items\": %d, \"sort_u32_gkeys_per_s\": %.2f, \"sort_u64_gkeys_per_s\": %.2f,\n"
      " \"memcpy_dtod_bytes\": %zu, \"memcpy_dtod_gbps\": %.1f, \"memcpy_dtod_counts\": \"read+write\"}\n",
      prop.name, prop.multiProcessorCount, runtime, driver, CCCL_VERSION, g_reps, g_warmup, reduce_n, reduce,
      sort_n, sort32, sort64, copy_bytes, copy);
  return 0;
}
