#pragma once
// The `libs` self-test's plan and arithmetic, free of any driver or library call so that it is
// tested on CPU: which math libraries it calls (catalog names), the order in which a library and
// its dependencies are loaded, the host references the GPU results are checked against, bf16
// conversion, and the test's status from its libraries' outcomes. The worker side is libs_test.cpp.

#include "selftest/test_status.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::selftest::libs {

// The libraries the test calls, in the order it calls them (catalog names, cuda-pathfinder's).
inline constexpr std::array<std::string_view, 8> k_libraries{"cublasLt", "cublas",   "cufft", "curand",
                                                             "cusparse", "cusolver", "cudnn", "nccl"};

// What to dlopen for `library`, in order: its catalog `.dependencies` (each after its own, depth
// first, in the catalog's order, once) and then `library` itself. Optional dependencies are not
// loaded. Unknown names give just {library}.
std::vector<std::string> load_order(std::string_view library);
// Every name whose selected file the worker needs: the libraries and their dependencies.
std::vector<std::string> components_needed();

// How one library's check went: it ran and was right, it could not run, or it failed.
enum class LibraryStatus { ok, skip, fail };
// The name a library's record spells it with: "ok", "skip", "fail".
std::string_view to_string(LibraryStatus status);
// The status `text` names; nullopt for any other text.
std::optional<LibraryStatus> parse_library_status(std::string_view text);

// One library's outcome, and why (empty for ok).
struct Outcome {
  std::string library;
  LibraryStatus status = LibraryStatus::ok;
  std::string reason;
};
struct Verdict {
  TestStatus status = TestStatus::pass; // pass, fail or skip
  std::string reason;                   // empty for a pass
};
// fail when any library failed (the reason names each), pass when at least one ran and none
// failed, skip when none ran (the reason says why each did not).
Verdict verdict(const std::vector<Outcome>& outcomes);

// bf16: the upper half of an IEEE binary32, rounded to nearest even (NaN stays NaN).
std::uint16_t bf16_from_float(float value);
float float_from_bf16(std::uint16_t bits);

// Deterministic values in [-1, 1) (a 64-bit LCG): the same sequence for the same seed.
std::vector<float> uniform_values(std::size_t count, std::uint64_t seed);

// Column-major C (m x n) = A (m x k) x B (k x n), in double; `bound` (if not null) receives
// sum_k |a_ik| |b_kj| per element (the scale a rounding tolerance is relative to).
std::vector<double> gemm_reference(const std::vector<float>& a, const std::vector<float>& b, int m, int n,
                                   int k, std::vector<double>* bound = nullptr);
// The lower Cholesky factor of the column-major SPD matrix `a` (n x n), in double; empty when `a`
// is not positive definite. The upper triangle of the result is 0.
std::vector<double> cholesky_lower(const std::vector<double>& a, int n);
// The valid (no padding, stride 1) 2-D cross-correlation of an h x w image with an r x s filter
// (row-major; cuDNN's CUDNN_CROSS_CORRELATION): (h - r + 1) x (w - s + 1).
std::vector<double> cross_correlation(const std::vector<float>& image, int h, int w,
                                      const std::vector<float>& filter, int r, int s);
// Bin `k` of the forward DFT (exponent -2 pi i k n / N, cuFFT's CUFFT_FORWARD) of interleaved
// complex `data` (re, im, re, im, ...): {re, im}.
std::array<double, 2> dft_bin(const std::vector<float>& data, std::size_t k);

// The share of the peak (SMs x max SM clock x FLOP/clock/SM) a healthy GEMM reaches, measured on
// the H200 (see libs.cpp); the score and gpu.throttled hold a figure against peak x this share, as
// the pcie test holds copies against the link's rate x k_pcie_efficiency.
// H200 (132 SMs, 1980 MHz), nine runs on 2026-12-03: bf16 762.9 to 808.1 TFLOP/s of 1070.5 (0.713
// to 0.755); SGEMM 49.5 to 50.7 of 66.9 (0.740 to 0.758). The lowest share seen is the expectation.
inline constexpr double k_bf16_gemm_efficiency = 0.71; // cuBLASLt bf16 8192^3, FP32 accumulation
inline constexpr double k_sgemm_efficiency = 0.74;     // cuBLAS SGEMM 4096^3

// Dense BF16 tensor-core FLOP per clock per SM with FP32 accumulation, by compute capability:
// 2048 for A100 (8.0), 4096 for Hopper (9.0), 8192 for Blackwell datacenter (10.0); 0 for every
// other architecture (the consumer parts differ by product, so no expectation is made).
int bf16_dense_flops_per_clock_per_sm(int cc_major, int cc_minor);

} // namespace cudadiag::selftest::libs
