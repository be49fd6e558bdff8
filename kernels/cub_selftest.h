/* The self-test module's C ABI: the contract between the cudadiag worker (which dlopens the module)
 * and kernels/cub_selftest.cu (built by nvcc, linking cudart statically, into
 * libcudadiag_cub_selftest.so). Plain C, no CUDA types: the worker is built without a toolkit.
 *
 * Preconditions for every run function: the caller has loaded the driver it wants used (cudart's
 * own dlopen("libcuda.so.1") then resolves to it), initialised it, and made a context current on
 * the calling thread (the device's primary context); the module runs in that context and never
 * changes the current context. Functions never throw, never exit, never print.
 *
 * Bump CUDADIAG_CUB_SELFTEST_ABI on any change to these declarations; the worker refuses a module
 * whose cudadiag_cub_selftest_abi() differs. */
#ifndef CUDADIAG_KERNELS_CUB_SELFTEST_H
#define CUDADIAG_KERNELS_CUB_SELFTEST_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CUDADIAG_CUB_SELFTEST_ABI 2

/* What a run does: cub::DeviceReduce::Sum or cub::DeviceRadixSort::SortKeys (DoubleBuffer). */
typedef enum cudadiag_cub_case {
  CUDADIAG_CUB_REDUCE_F32 = 1, /* float in, float out; data i -> (i % 1024) / 1024.0f          */
  CUDADIAG_CUB_REDUCE_I32 = 2, /* int32 in, int64 out (exact); data i -> (int32)(i % 1000) - 499 */
  CUDADIAG_CUB_SORT_U32 = 3,   /* uint32 keys, all 32 bits, from a 64-bit hash of the index      */
  CUDADIAG_CUB_SORT_U64 = 4,   /* uint64 keys, all 64 bits, from a 64-bit hash of the index      */
} cudadiag_cub_case;

typedef struct cudadiag_cub_params {
  int32_t which;       /* a cudadiag_cub_case */
  uint64_t count;      /* elements (reduce) or keys (sort); >= 1 */
  int32_t warmup;      /* untimed runs before the timed ones; >= 0 */
  int32_t repetitions; /* timed runs, each between two events on the stream; >= 1 */
  void* stream;        /* a CUstream / cudaStream_t of the current context; NULL = legacy default */
  int32_t warmup_ms;   /* after `warmup` runs, more untimed runs until this much GPU time has passed
                          (clocks reach steady state); 0..10000 */
} cudadiag_cub_params;

typedef struct cudadiag_cub_result {
  int32_t cuda_error;          /* 0 = every CUDA call succeeded; else the first failing cudaError_t */
  char error_name[64];         /* cudaGetErrorName of cuda_error, "" when 0 */
  char error_where[128];       /* which call failed ("cudaMalloc keys (2147483648 bytes)", ...) */
  int32_t verified;            /* 1: the result is correct; 0: wrong (see mismatch) or not checked */
  char mismatch[256];          /* what was wrong, "" when verified or when a CUDA error stopped the run */
  double median_ms;            /* median of the timed repetitions (CUDA events) */
  double best_ms;              /* fastest timed repetition */
  double max_ms;               /* slowest timed repetition (spread = (max_ms - best_ms) / median_ms) */
  int32_t warmup_runs;         /* untimed runs made (warmup plus those warmup_ms asked for) */
  double warmup_elapsed_ms;    /* GPU time the untimed runs took */
  double bytes_per_run;        /* reduce: count * sizeof(input); sort: 0 */
  double keys_per_run;         /* sort: count; reduce: 0 */
  uint64_t device_bytes;       /* device memory the run allocated (buffers + temporary storage) */
  uint64_t temp_storage_bytes; /* CUB's temporary storage */
} cudadiag_cub_result;

typedef struct cudadiag_cub_module_info {
  int32_t abi;                /* CUDADIAG_CUB_SELFTEST_ABI */
  int32_t cuda_version_built; /* CUDART_VERSION the module was compiled with, e.g. 13000 */
  int32_t cccl_version;       /* CCCL_VERSION (MMMmmmppp) of the headers it was compiled with */
  int32_t runtime_version;    /* cudaRuntimeGetVersion at call time (the static cudart) */
  int32_t driver_version;     /* cudaDriverGetVersion at call time (the driver cudart loaded) */
  char archs[128];            /* the code it carries, e.g. "sm_80 sm_90 sm_100 sm_120 compute_120" */
} cudadiag_cub_module_info;

/* Returns CUDADIAG_CUB_SELFTEST_ABI. Safe to call before anything else. */
int32_t cudadiag_cub_selftest_abi(void);

/* Fills *info (never NULL). Returns 0, or the cudaError_t of a failing version query. */
int32_t cudadiag_cub_selftest_info(cudadiag_cub_module_info* info);

/* Allocates what the case needs (cudaMallocAsync is not used; cudaMalloc/cudaFree), generates the
 * input on the device, runs warmup + repetitions, verifies the last result (reduce: the exact
 * closed-form sum for I32, relative error <= 1e-5 for F32; sort: non-decreasing order and equal
 * multiset checksums of input and output, computed by the module's own kernels), frees everything,
 * and fills *result (never NULL). Returns result->cuda_error. An out-of-memory is
 * cudaErrorMemoryAllocation (2) with error_where naming the allocation. */
int32_t cudadiag_cub_selftest_run(const cudadiag_cub_params* params, cudadiag_cub_result* result);

#ifdef __cplusplus
}
#endif

#endif /* CUDADIAG_KERNELS_CUB_SELFTEST_H */
