// Source of smid.ptx (see kernels/README.md for how the PTX is produced). The SM probes of the
// green-context test.
//
// cudadiag_nsmid(out): writes %nsmid (an upper bound of %smid + 1; SM ids need not be contiguous)
// to the u32 at `out`. Launch with one thread (any extra threads do nothing).
//
// cudadiag_smid_probe(bitmap, spin_ns): thread 0 of every block sets bit (smid % 32) of the u32 word
// bitmap[smid / 32] (atomic OR; the caller zeroes ceil(nsmid / 32) words first), then keeps its
// block resident until %globaltimer has advanced spin_ns nanoseconds since the block started, so
// that the blocks of one launch spread over every SM they may use.

static __device__ __forceinline__ unsigned smid() {
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  return id;
}

static __device__ __forceinline__ unsigned nsmid() {
  unsigned count;
  asm volatile("mov.u32 %0, %%nsmid;" : "=r"(count));
  return count;
}

static __device__ __forceinline__ unsigned long long globaltimer() {
  unsigned long long ns;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(ns));
  return ns;
}

extern "C" __global__ void cudadiag_nsmid(unsigned* out) {
  if (blockIdx.x == 0 && threadIdx.x == 0)
    *out = nsmid();
}

extern "C" __global__ void cudadiag_smid_probe(unsigned* bitmap, unsigned long long spin_ns) {
  if (threadIdx.x != 0)
    return;
  const unsigned long long start = globaltimer();
  const unsigned id = smid();
  atomicOr(&bitmap[id / 32], 1u << (id % 32));
  while (globaltimer() - start < spin_ns) {
  }
}
