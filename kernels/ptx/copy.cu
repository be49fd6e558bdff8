// Source of copy.ptx (see kernels/README.md for how the PTX is produced). The copy kernel of the
// `ptx` self-test, timed against cuMemcpyDtoD on the same buffers.
//
// cudadiag_copy_u32x4(dst, src, count): copies `count` 16-byte elements from src to dst (both
// 16-byte aligned, not overlapping). Any grid; a grid-stride loop with 64-bit indices, four
// independent 16-byte loads in flight per thread per iteration, then a tail of single elements.

extern "C" __global__ void cudadiag_copy_u32x4(uint4* __restrict__ dst, const uint4* __restrict__ src,
                                               unsigned long long count) {
  const unsigned long long stride = static_cast<unsigned long long>(gridDim.x) * blockDim.x;
  unsigned long long i = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; i + 3 * stride < count; i += 4 * stride) {
    const uint4 a = src[i];
    const uint4 b = src[i + stride];
    const uint4 c = src[i + 2 * stride];
    const uint4 d = src[i + 3 * stride];
    dst[i] = a;
    dst[i + stride] = b;
    dst[i + 2 * stride] = c;
    dst[i + 3 * stride] = d;
  }
  for (; i < count; i += stride)
    dst[i] = src[i];
}
