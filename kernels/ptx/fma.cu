// Source of fma.ptx (see kernels/README.md for how the PTX is produced). The FP32 throughput kernel
// of the `compute` self-test.
//
// cudadiag_fma_f32(out, rounds): every thread runs 16 independent chains x <- fma(x, a, b) for
// rounds x 64 steps (so 16 x 64 x rounds FMAs, 2 FLOP each) and writes the sum of its chains, in
// chain order, to the float out[global thread index]. Chain k of thread t starts at
// (t % 1024) / 1024 + k; a = 1 - 2^-12 and b = 2^-10 keep every value finite and normal. The host
// recomputes any thread's value exactly with fmaf (fma.rn.f32 is IEEE fused multiply-add).

#define CUDADIAG_FMA_CHAINS 16
#define CUDADIAG_FMA_STEPS 64

extern "C" __global__ void cudadiag_fma_f32(float* __restrict__ out, unsigned long long rounds) {
  const unsigned long long thread = static_cast<unsigned long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  const float a = 1.0f - 1.0f / 4096.0f;
  const float b = 1.0f / 1024.0f;
  float x[CUDADIAG_FMA_CHAINS];
#pragma unroll
  for (int k = 0; k < CUDADIAG_FMA_CHAINS; ++k)
    x[k] = static_cast<float>(thread % 1024) / 1024.0f + k;
  for (unsigned long long r = 0; r < rounds; ++r) {
#pragma unroll
    for (int s = 0; s < CUDADIAG_FMA_STEPS; ++s) {
#pragma unroll
      for (int k = 0; k < CUDADIAG_FMA_CHAINS; ++k)
        x[k] = __fmaf_rn(x[k], a, b);
    }
  }
  float sum = 0.0f;
#pragma unroll
  for (int k = 0; k < CUDADIAG_FMA_CHAINS; ++k)
    sum = __fadd_rn(sum, x[k]);
  out[thread] = sum;
}
