// The libs self-test without a GPU: its mirrored math-library prototypes, enumerators and layouts
// (cuda_api/math_libs.hpp) against the real headers when they are present (checked at compile
// time), and its plan and host arithmetic (selftest/libs.hpp): load order from the catalog, the
// verdict, bf16, the references the GPU results are compared with, the BF16 peak table.

#include "cuda_api/library.hpp"
#include "cuda_api/math_libs.hpp"
#include "probes/catalog.hpp"
#include "selftest/libs.hpp"
#include "skip.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <numbers>
#include <string>
#include <vector>

namespace api = cudadiag::cuda_api;
namespace libs = cudadiag::selftest::libs;
using cudadiag::cuda_api::abi_compatible;

// --- The toolkit's math libraries: cuBLAS, cuBLASLt, cuFFT, cuRAND, cuSPARSE, cuSOLVER ---

#if __has_include(<cublas_v2.h>) && __has_include(<cublasLt.h>) && __has_include(<cufft.h>) && \
    __has_include(<curand.h>) && __has_include(<cusparse.h>) && __has_include(<cusolverDn.h>)
#include <cublasLt.h>
#include <cufft.h>
#include <curand.h>
#include <cusolverDn.h>
#include <cusparse.h>

#include <cublas_v2.h>
#define CUDADIAG_TEST_HAVE_MATH_HEADERS 1

namespace {
// clang-format off
static_assert(abi_compatible<api::cublas::CreateFn, decltype(&::cublasCreate_v2)>());
static_assert(abi_compatible<api::cublas::DestroyFn, decltype(&::cublasDestroy_v2)>());
static_assert(abi_compatible<api::cublas::GetVersionFn, decltype(&::cublasGetVersion_v2)>());
static_assert(abi_compatible<api::cublas::SetStreamFn, decltype(&::cublasSetStream_v2)>());
static_assert(abi_compatible<api::cublas::SgemmFn, decltype(&::cublasSgemm_v2)>());
static_assert(api::cublas::k_success == CUBLAS_STATUS_SUCCESS);
static_assert(api::cublas::k_op_n == CUBLAS_OP_N);
static_assert(api::cublas::k_op_t == CUBLAS_OP_T);
static_assert(api::cublas::k_fill_mode_lower == CUBLAS_FILL_MODE_LOWER);
static_assert(api::cublas::k_compute_32f == CUBLAS_COMPUTE_32F);
static_assert(api::data_type::k_r_32f == CUDA_R_32F);
static_assert(api::data_type::k_r_16bf == CUDA_R_16BF);

static_assert(abi_compatible<api::cublaslt::CreateFn, decltype(&::cublasLtCreate)>());
static_assert(abi_compatible<api::cublaslt::DestroyFn, decltype(&::cublasLtDestroy)>());
static_assert(abi_compatible<api::cublaslt::GetVersionFn, decltype(&::cublasLtGetVersion)>());
static_assert(abi_compatible<api::cublaslt::MatmulDescCreateFn, decltype(&::cublasLtMatmulDescCreate)>());
static_assert(abi_compatible<api::cublaslt::MatmulDescDestroyFn, decltype(&::cublasLtMatmulDescDestroy)>());
static_assert(abi_compatible<api::cublaslt::MatmulDescSetAttributeFn, decltype(&::cublasLtMatmulDescSetAttribute)>());
static_assert(abi_compatible<api::cublaslt::MatrixLayoutCreateFn, decltype(&::cublasLtMatrixLayoutCreate)>());
static_assert(abi_compatible<api::cublaslt::MatrixLayoutDestroyFn, decltype(&::cublasLtMatrixLayoutDestroy)>());
static_assert(abi_compatible<api::cublaslt::MatmulPreferenceCreateFn, decltype(&::cublasLtMatmulPreferenceCreate)>());
static_assert(abi_compatible<api::cublaslt::MatmulPreferenceDestroyFn, decltype(&::cublasLtMatmulPreferenceDestroy)>());
static_assert(abi_compatible<api::cublaslt::MatmulPreferenceSetAttributeFn, decltype(&::cublasLtMatmulPreferenceSetAttribute)>());
static_assert(abi_compatible<api::cublaslt::MatmulAlgoGetHeuristicFn, decltype(&::cublasLtMatmulAlgoGetHeuristic)>());
static_assert(abi_compatible<api::cublaslt::MatmulFn, decltype(&::cublasLtMatmul)>());
static_assert(sizeof(api::cublaslt::MatmulAlgo) == sizeof(::cublasLtMatmulAlgo_t));
static_assert(sizeof(api::cublaslt::MatmulHeuristicResult) == sizeof(::cublasLtMatmulHeuristicResult_t));
static_assert(offsetof(api::cublaslt::MatmulHeuristicResult, workspaceSize) == offsetof(::cublasLtMatmulHeuristicResult_t, workspaceSize));
static_assert(offsetof(api::cublaslt::MatmulHeuristicResult, state) == offsetof(::cublasLtMatmulHeuristicResult_t, state));
static_assert(offsetof(api::cublaslt::MatmulHeuristicResult, wavesCount) == offsetof(::cublasLtMatmulHeuristicResult_t, wavesCount));
static_assert(sizeof(api::cublaslt::MatmulDescOpaque) == sizeof(::cublasLtMatmulDescOpaque_t));
static_assert(sizeof(api::cublaslt::MatrixLayoutOpaque) == sizeof(::cublasLtMatrixLayoutOpaque_t));
static_assert(sizeof(api::cublaslt::MatmulPreferenceOpaque) == sizeof(::cublasLtMatmulPreferenceOpaque_t));
static_assert(api::cublaslt::k_matmul_desc_transa == CUBLASLT_MATMUL_DESC_TRANSA);
static_assert(api::cublaslt::k_matmul_desc_transb == CUBLASLT_MATMUL_DESC_TRANSB);
static_assert(api::cublaslt::k_matmul_pref_max_workspace_bytes == CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES);

static_assert(abi_compatible<api::cufft::Plan1dFn, decltype(&::cufftPlan1d)>());
static_assert(abi_compatible<api::cufft::ExecC2CFn, decltype(&::cufftExecC2C)>());
static_assert(abi_compatible<api::cufft::SetStreamFn, decltype(&::cufftSetStream)>());
static_assert(abi_compatible<api::cufft::DestroyFn, decltype(&::cufftDestroy)>());
static_assert(abi_compatible<api::cufft::GetVersionFn, decltype(&::cufftGetVersion)>());
static_assert(sizeof(api::cufft::Complex) == sizeof(::cufftComplex) && alignof(api::cufft::Complex) == alignof(::cufftComplex));
static_assert(api::cufft::k_success == CUFFT_SUCCESS);
static_assert(api::cufft::k_c2c == CUFFT_C2C);
static_assert(api::cufft::k_forward == CUFFT_FORWARD);
static_assert(api::cufft::k_inverse == CUFFT_INVERSE);

static_assert(abi_compatible<api::curand::CreateGeneratorFn, decltype(&::curandCreateGenerator)>());
static_assert(abi_compatible<api::curand::DestroyGeneratorFn, decltype(&::curandDestroyGenerator)>());
static_assert(abi_compatible<api::curand::SetStreamFn, decltype(&::curandSetStream)>());
static_assert(abi_compatible<api::curand::SetSeedFn, decltype(&::curandSetPseudoRandomGeneratorSeed)>());
static_assert(abi_compatible<api::curand::GenerateUniformFn, decltype(&::curandGenerateUniform)>());
static_assert(abi_compatible<api::curand::GetVersionFn, decltype(&::curandGetVersion)>());
static_assert(api::curand::k_success == CURAND_STATUS_SUCCESS);
static_assert(api::curand::k_rng_pseudo_philox4_32_10 == CURAND_RNG_PSEUDO_PHILOX4_32_10);

static_assert(abi_compatible<api::cusparse::CreateFn, decltype(&::cusparseCreate)>());
static_assert(abi_compatible<api::cusparse::DestroyFn, decltype(&::cusparseDestroy)>());
static_assert(abi_compatible<api::cusparse::GetVersionFn, decltype(&::cusparseGetVersion)>());
static_assert(abi_compatible<api::cusparse::SetStreamFn, decltype(&::cusparseSetStream)>());
static_assert(abi_compatible<api::cusparse::CreateCsrFn, decltype(&::cusparseCreateCsr)>());
static_assert(abi_compatible<api::cusparse::CreateDnVecFn, decltype(&::cusparseCreateDnVec)>());
static_assert(abi_compatible<api::cusparse::DestroySpMatFn, decltype(&::cusparseDestroySpMat)>());
static_assert(abi_compatible<api::cusparse::DestroyDnVecFn, decltype(&::cusparseDestroyDnVec)>());
static_assert(abi_compatible<api::cusparse::SpMVBufferSizeFn, decltype(&::cusparseSpMV_bufferSize)>());
static_assert(abi_compatible<api::cusparse::SpMVFn, decltype(&::cusparseSpMV)>());
static_assert(api::cusparse::k_success == CUSPARSE_STATUS_SUCCESS);
static_assert(api::cusparse::k_index_32i == CUSPARSE_INDEX_32I);
static_assert(api::cusparse::k_index_base_zero == CUSPARSE_INDEX_BASE_ZERO);
static_assert(api::cusparse::k_operation_non_transpose == CUSPARSE_OPERATION_NON_TRANSPOSE);
static_assert(api::cusparse::k_spmv_alg_default == CUSPARSE_SPMV_ALG_DEFAULT);

static_assert(abi_compatible<api::cusolver::DnCreateFn, decltype(&::cusolverDnCreate)>());
static_assert(abi_compatible<api::cusolver::DnDestroyFn, decltype(&::cusolverDnDestroy)>());
static_assert(abi_compatible<api::cusolver::DnSetStreamFn, decltype(&::cusolverDnSetStream)>());
static_assert(abi_compatible<api::cusolver::DnSpotrfBufferSizeFn, decltype(&::cusolverDnSpotrf_bufferSize)>());
static_assert(abi_compatible<api::cusolver::DnSpotrfFn, decltype(&::cusolverDnSpotrf)>());
static_assert(abi_compatible<api::cusolver::GetVersionFn, decltype(&::cusolverGetVersion)>());
static_assert(api::cusolver::k_success == CUSOLVER_STATUS_SUCCESS);
// clang-format on
} // namespace
#endif

#if __has_include(<cudnn.h>)
#include <cudnn.h>
#define CUDADIAG_TEST_HAVE_CUDNN_H 1
namespace {
// clang-format off
static_assert(abi_compatible<api::cudnn::GetVersionFn, decltype(&::cudnnGetVersion)>());
static_assert(abi_compatible<api::cudnn::GetErrorStringFn, decltype(&::cudnnGetErrorString)>());
static_assert(abi_compatible<api::cudnn::CreateFn, decltype(&::cudnnCreate)>());
static_assert(abi_compatible<api::cudnn::DestroyFn, decltype(&::cudnnDestroy)>());
static_assert(abi_compatible<api::cudnn::SetStreamFn, decltype(&::cudnnSetStream)>());
static_assert(abi_compatible<api::cudnn::CreateTensorDescriptorFn, decltype(&::cudnnCreateTensorDescriptor)>());
static_assert(abi_compatible<api::cudnn::SetTensor4dDescriptorFn, decltype(&::cudnnSetTensor4dDescriptor)>());
static_assert(abi_compatible<api::cudnn::DestroyTensorDescriptorFn, decltype(&::cudnnDestroyTensorDescriptor)>());
static_assert(abi_compatible<api::cudnn::CreateFilterDescriptorFn, decltype(&::cudnnCreateFilterDescriptor)>());
static_assert(abi_compatible<api::cudnn::SetFilter4dDescriptorFn, decltype(&::cudnnSetFilter4dDescriptor)>());
static_assert(abi_compatible<api::cudnn::DestroyFilterDescriptorFn, decltype(&::cudnnDestroyFilterDescriptor)>());
static_assert(abi_compatible<api::cudnn::CreateConvolutionDescriptorFn, decltype(&::cudnnCreateConvolutionDescriptor)>());
static_assert(abi_compatible<api::cudnn::SetConvolution2dDescriptorFn, decltype(&::cudnnSetConvolution2dDescriptor)>());
static_assert(abi_compatible<api::cudnn::DestroyConvolutionDescriptorFn, decltype(&::cudnnDestroyConvolutionDescriptor)>());
static_assert(abi_compatible<api::cudnn::GetConvolutionForwardWorkspaceSizeFn, decltype(&::cudnnGetConvolutionForwardWorkspaceSize)>());
static_assert(abi_compatible<api::cudnn::ConvolutionForwardFn, decltype(&::cudnnConvolutionForward)>());
static_assert(api::cudnn::k_success == CUDNN_STATUS_SUCCESS);
static_assert(api::cudnn::k_tensor_nchw == CUDNN_TENSOR_NCHW);
static_assert(api::cudnn::k_data_float == CUDNN_DATA_FLOAT);
static_assert(api::cudnn::k_cross_correlation == CUDNN_CROSS_CORRELATION);
static_assert(api::cudnn::k_fwd_algo_implicit_gemm == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM);
// clang-format on
} // namespace
#endif

#if __has_include(<nccl.h>)
#include <nccl.h>
#define CUDADIAG_TEST_HAVE_NCCL_H 1
namespace {
// clang-format off
static_assert(abi_compatible<api::nccl::GetVersionFn, decltype(&::ncclGetVersion)>());
static_assert(abi_compatible<api::nccl::GetErrorStringFn, decltype(&::ncclGetErrorString)>());
static_assert(abi_compatible<api::nccl::CommInitAllFn, decltype(&::ncclCommInitAll)>());
static_assert(abi_compatible<api::nccl::CommDestroyFn, decltype(&::ncclCommDestroy)>());
static_assert(abi_compatible<api::nccl::AllReduceFn, decltype(&::ncclAllReduce)>());
static_assert(api::nccl::k_success == ncclSuccess);
static_assert(api::nccl::k_float32 == ncclFloat32);
static_assert(api::nccl::k_sum == ncclSum);
// clang-format on
} // namespace
#endif

TEST_CASE("libs api: the toolkit math libraries' mirrors match their headers (checked at compile time)") {
#if defined(CUDADIAG_TEST_HAVE_MATH_HEADERS)
  CHECK(sizeof(api::cublaslt::MatmulHeuristicResult) == 96);
#else
  CUDADIAG_SKIP("cublas_v2.h, cublasLt.h, cufft.h, curand.h, cusparse.h or cusolverDn.h is not available");
#endif
}

TEST_CASE("libs api: the cuDNN mirror matches cudnn.h (checked at compile time)") {
#if defined(CUDADIAG_TEST_HAVE_CUDNN_H)
  CHECK(CUDNN_MAJOR >= 9);
#else
  CUDADIAG_SKIP("cudnn.h is not available: the cuDNN checks did not run");
#endif
}

TEST_CASE("libs api: the NCCL mirror matches nccl.h (checked at compile time)") {
#if defined(CUDADIAG_TEST_HAVE_NCCL_H)
  CHECK(NCCL_MAJOR >= 2);
#else
  CUDADIAG_SKIP("nccl.h is not available: the NCCL checks did not run");
#endif
}

TEST_CASE("libs plan: each library is loaded after its catalog dependencies, each once") {
  CHECK(libs::load_order("cublas") == std::vector<std::string>{"cublasLt", "cublas"});
  CHECK(libs::load_order("cusolver") ==
        std::vector<std::string>{"nvJitLink", "cusparse", "cublasLt", "cublas", "cusolver"});
  CHECK(libs::load_order("cudnn") == std::vector<std::string>{"cublasLt", "cudnn"}); // nvrtc is optional
  CHECK(libs::load_order("nccl") == std::vector<std::string>{"nccl"});
  CHECK(libs::load_order("no_such_library") == std::vector<std::string>{"no_such_library"});
  for (const auto library : libs::k_libraries) {
    CAPTURE(library);
    CHECK(cudadiag::probes::find_component(library, cudadiag::probes::ComponentKind::dynamic_lib) != nullptr);
  }
  const auto needed = libs::components_needed();
  CHECK(needed.size() == 9); // the eight and nvJitLink
  CHECK(std::find(needed.begin(), needed.end(), "nvJitLink") != needed.end());
}

TEST_CASE("libs verdict: a failure fails, one library that ran passes, none skips with every reason") {
  using libs::Outcome;
  const auto failed = libs::verdict({{"cublas", libs::LibraryStatus::ok, ""},
                                     {"cufft", libs::LibraryStatus::fail, "cufftPlan1d returned 5"}});
  CHECK(failed.status == cudadiag::selftest::TestStatus::fail);
  CHECK(failed.reason == "cufft: cufftPlan1d returned 5");
  const auto passed = libs::verdict(
      {{"cublas", libs::LibraryStatus::ok, ""}, {"cudnn", libs::LibraryStatus::skip, "not found"}});
  CHECK(passed.status == cudadiag::selftest::TestStatus::pass);
  CHECK(passed.reason.empty());
  const auto none = libs::verdict(
      {{"cudnn", libs::LibraryStatus::skip, "not found"}, {"nccl", libs::LibraryStatus::skip, "not found"}});
  CHECK(none.status == cudadiag::selftest::TestStatus::skip);
  CHECK(none.reason == "no math library ran (cudnn: not found; nccl: not found)");
}

TEST_CASE("libs arithmetic: bf16 rounds to nearest even and converts back exactly") {
  CHECK(libs::bf16_from_float(1.0F) == 0x3F80);
  CHECK(libs::bf16_from_float(-2.0F) == 0xC000);
  CHECK(libs::bf16_from_float(1.0F + 0x1p-8F) == 0x3F80);     // a tie: to the even 1.0
  CHECK(libs::bf16_from_float(1.0F + 3 * 0x1p-8F) == 0x3F82); // a tie: to the even 1 + 2^-6
  CHECK(libs::bf16_from_float(1.0F + 0x1p-8F + 0x1p-20F) == 0x3F81);
  CHECK(std::isnan(libs::float_from_bf16(libs::bf16_from_float(std::numeric_limits<float>::quiet_NaN()))));
  CHECK(libs::float_from_bf16(0x3F80) == 1.0F);
  CHECK(libs::float_from_bf16(0x3900) == 0x1p-13F);
}

TEST_CASE("libs arithmetic: the host references") {
  const auto values = libs::uniform_values(1000, 1);
  CHECK(values == libs::uniform_values(1000, 1));
  CHECK(values != libs::uniform_values(1000, 2));
  CHECK(std::all_of(values.begin(), values.end(), [](float v) { return v >= -1.0F && v < 1.0F; }));

  // [1 2; 3 4] x [5 6; 7 8] = [19 22; 43 50], column-major.
  std::vector<double> bound;
  const auto c = libs::gemm_reference({1, 3, 2, 4}, {5, 7, 6, 8}, 2, 2, 2, &bound);
  CHECK(c == std::vector<double>{19, 43, 22, 50});
  const auto negated = libs::gemm_reference({-1, 3, 2, 4}, {5, 7, 6, 8}, 2, 2, 2, &bound);
  CHECK(negated[0] == 9);
  CHECK(bound[0] == 19);

  // [4 2; 2 3] = L L^T with L = [2 0; 1 sqrt 2].
  const auto l = libs::cholesky_lower({4, 2, 2, 3}, 2);
  REQUIRE(l.size() == 4);
  CHECK(l[0] == doctest::Approx(2.0));
  CHECK(l[1] == doctest::Approx(1.0));
  CHECK(l[2] == 0.0);
  CHECK(l[3] == doctest::Approx(std::sqrt(2.0)));
  CHECK(libs::cholesky_lower({1, 2, 2, 1}, 2).empty()); // indefinite

  // A 3x3 image by a 2x2 filter: cross-correlation, not convolution (no flip).
  const auto y = libs::cross_correlation({1, 2, 3, 4, 5, 6, 7, 8, 9}, 3, 3, {1, 0, 0, 2}, 2, 2);
  CHECK(y == std::vector<double>{1 + 10, 2 + 12, 4 + 16, 5 + 18});

  // A delta's spectrum is flat; a constant's is N at bin 0 and 0 elsewhere.
  std::vector<float> delta(16, 0.0F);
  delta[0] = 1.0F;
  CHECK(libs::dft_bin(delta, 3)[0] == doctest::Approx(1.0));
  CHECK(libs::dft_bin(delta, 3)[1] == doctest::Approx(0.0));
  std::vector<float> constant(16);
  for (std::size_t i = 0; i < constant.size(); i += 2) {
    constant[i] = 1.0F;
  }
  CHECK(libs::dft_bin(constant, 0)[0] == doctest::Approx(8.0));
  CHECK(std::hypot(libs::dft_bin(constant, 1)[0], libs::dft_bin(constant, 1)[1]) < 1e-9);
  // e^{2 pi i t / N} is all in bin 1 under the forward sign (-).
  std::vector<float> wave;
  for (int t = 0; t < 8; ++t) {
    wave.push_back(static_cast<float>(std::cos(2 * std::numbers::pi * t / 8)));
    wave.push_back(static_cast<float>(std::sin(2 * std::numbers::pi * t / 8)));
  }
  CHECK(libs::dft_bin(wave, 1)[0] == doctest::Approx(8.0));
  CHECK(std::fabs(libs::dft_bin(wave, 7)[0]) < 1e-5);
}

TEST_CASE("libs peak: dense BF16 FLOP per clock per SM by architecture") {
  CHECK(libs::bf16_dense_flops_per_clock_per_sm(9, 0) == 4096);
  CHECK(libs::bf16_dense_flops_per_clock_per_sm(8, 0) == 2048);
  CHECK(libs::bf16_dense_flops_per_clock_per_sm(10, 0) == 8192);
  CHECK(libs::bf16_dense_flops_per_clock_per_sm(8, 6) == 0);
  CHECK(libs::bf16_dense_flops_per_clock_per_sm(7, 0) == 0);
  // The H200 datasheet's 989 TFLOP/s (dense) at 1830 MHz on 132 SMs; A100's 312 at 1410 MHz on 108.
  CHECK(132 * 1830e6 * libs::bf16_dense_flops_per_clock_per_sm(9, 0) / 1e12 ==
        doctest::Approx(989.4).epsilon(0.001));
  CHECK(108 * 1410e6 * libs::bf16_dense_flops_per_clock_per_sm(8, 0) / 1e12 ==
        doctest::Approx(311.9).epsilon(0.001));
}
