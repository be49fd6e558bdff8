// Source of memtest.ptx (see kernels/README.md for how the PTX is produced). The pattern kernels of
// the `memory` self-test (walking ones, moving inversions, random with a seed), verified on the GPU.
//
// A pattern is (mode, arg); the 32-bit word at index i of a buffer holds
//   mode 0  arg                                   (a constant: moving inversions' P and ~P)
//   mode 1  1 << ((i + arg) % 32)                 (walking ones, rotated by address and by pass)
//   mode 2  hash(i, arg)                          (random, seeded by arg)
// and mode | 0x100 inverts that word. All kernels take 16-byte elements (`elements` of them, any grid,
// grid-stride loops with 64-bit indices) and only .u64 parameters.
//
// cudadiag_mem_fill(buffer, elements, mode, arg): writes the pattern.
// cudadiag_mem_check(buffer, elements, mode, arg, errors): compares every word with the pattern;
//   each mismatch increments errors[0] (u64), and the first 32 are recorded as errors[1 + 2j] = word
//   index, errors[2 + 2j] = expected | (found << 32).
// cudadiag_mem_check_write(buffer, elements, mode, arg, next_mode, next_arg, errors): as check, and
//   each word is then overwritten with the (next_mode, next_arg) pattern; next_mode | 0x200 walks each
//   thread's elements from the end of the buffer to its start (moving inversions' descending pass).
// cudadiag_mem_corrupt(buffer, elements, count): flips bit 0 of `count` words spread evenly over the
//   buffer (word j * (4 * elements / count) for j < count) - the fault injection behind
//   CUDADIAG_SELFTEST_INJECT_MEMORY_ERRORS, which proves that the check kernels catch a wrong word
//   (on a busy GPU too); never launched otherwise.

#define CUDADIAG_MEM_RECORDS 32

static __device__ __forceinline__ unsigned pattern_word(unsigned long long i, unsigned long long mode,
                                                        unsigned long long arg) {
  unsigned value;
  const unsigned kind = static_cast<unsigned>(mode & 0xffu);
  if (kind == 1) {
    value = 1u << static_cast<unsigned>((i + arg) & 31u);
  } else if (kind == 2) {
    unsigned long long x = i * 0x9E3779B97F4A7C15ull ^ (arg + 0xD1B54A32D192ED03ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    value = static_cast<unsigned>(x ^ (x >> 31));
  } else {
    value = static_cast<unsigned>(arg);
  }
  return (mode & 0x100u) != 0 ? ~value : value;
}

static __device__ __forceinline__ uint4 pattern_element(unsigned long long e, unsigned long long mode,
                                                        unsigned long long arg) {
  const unsigned long long w = e * 4;
  return make_uint4(pattern_word(w, mode, arg), pattern_word(w + 1, mode, arg),
                    pattern_word(w + 2, mode, arg), pattern_word(w + 3, mode, arg));
}

static __device__ __forceinline__ void record(unsigned long long* errors, unsigned long long word,
                                              unsigned expected, unsigned found) {
  const unsigned long long slot = atomicAdd(errors, 1ull);
  if (slot < CUDADIAG_MEM_RECORDS) {
    errors[1 + 2 * slot] = word;
    errors[2 + 2 * slot] =
        static_cast<unsigned long long>(expected) | (static_cast<unsigned long long>(found) << 32);
  }
}

static __device__ __forceinline__ void compare(unsigned long long e, uint4 got, uint4 want,
                                               unsigned long long* errors) {
  if (got.x != want.x)
    record(errors, e * 4, want.x, got.x);
  if (got.y != want.y)
    record(errors, e * 4 + 1, want.y, got.y);
  if (got.z != want.z)
    record(errors, e * 4 + 2, want.z, got.z);
  if (got.w != want.w)
    record(errors, e * 4 + 3, want.w, got.w);
}

extern "C" __global__ void cudadiag_mem_fill(uint4* buffer, unsigned long long elements,
                                             unsigned long long mode, unsigned long long arg) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long e = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
       e < elements; e += stride)
    buffer[e] = pattern_element(e, mode, arg);
}

extern "C" __global__ void cudadiag_mem_check(const uint4* buffer, unsigned long long elements,
                                              unsigned long long mode, unsigned long long arg,
                                              unsigned long long* errors) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  for (unsigned long long e = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
       e < elements; e += stride)
    compare(e, buffer[e], pattern_element(e, mode, arg), errors);
}

extern "C" __global__ void cudadiag_mem_check_write(uint4* buffer, unsigned long long elements,
                                                    unsigned long long mode, unsigned long long arg,
                                                    unsigned long long next_mode, unsigned long long next_arg,
                                                    unsigned long long* errors) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  const bool descending = (next_mode & 0x200u) != 0;
  for (unsigned long long n = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
       n < elements; n += stride) {
    const unsigned long long e = descending ? elements - 1 - n : n;
    compare(e, buffer[e], pattern_element(e, mode, arg), errors);
    buffer[e] = pattern_element(e, next_mode, next_arg);
  }
}

extern "C" __global__ void cudadiag_mem_corrupt(unsigned* buffer, unsigned long long elements,
                                                unsigned long long count) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  const unsigned long long spacing = count == 0 ? 0 : elements * 4 / count;
  for (unsigned long long j = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
       j < count && spacing > 0; j += stride)
    buffer[j * spacing] ^= 1u;
}
