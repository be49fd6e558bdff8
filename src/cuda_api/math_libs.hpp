#pragma once
// The slices of the CUDA math libraries that the `libs` self-test calls (one verified call each),
// mirrored from the CUDA 13.0 toolkit's headers (cuBLAS 13.1, cuFFT 12.0, cuRAND 10.4, cuSPARSE
// 12.6, cuSOLVER 12.0), cuDNN 9.19 and NCCL 2.28, so that nothing needs them at build time. Every
// prototype, enumerator and struct layout here is checked against the real headers by
// tests/unit/test_selftest_libs.cpp when they are available. A library's stream parameter
// (cudaStream_t) is the driver's CUstream: both are `struct CUstream_st*`.
//
// Symbol names are the exported ones: cublas_v2.h #defines cublasCreate to cublasCreate_v2 and so
// on. cuDNN 9's libcudnn.so.9 exports the whole legacy API (it forwards to libcudnn_graph, _ops
// and _cnn, which it loads from its own directory); the filter and convolution descriptors are
// deprecated in cuDNN 9 but still exported.

#include "cuda_api/driver.hpp"

#include <cstddef>
#include <cstdint>

namespace cudadiag::cuda_api {

// cudaDataType_t (library_types.h): the values the test uses.
namespace data_type {
constexpr int k_r_32f = 0;   // CUDA_R_32F
constexpr int k_r_16bf = 14; // CUDA_R_16BF
} // namespace data_type

namespace cublas {
using Status = int;                  // cublasStatus_t
constexpr Status k_success = 0;      // CUBLAS_STATUS_SUCCESS
struct ContextOpaque;                // struct cublasContext
using Handle = ContextOpaque*;       // cublasHandle_t
constexpr int k_op_n = 0;            // CUBLAS_OP_N (cublasOperation_t)
constexpr int k_op_t = 1;            // CUBLAS_OP_T
constexpr int k_fill_mode_lower = 0; // CUBLAS_FILL_MODE_LOWER (cublasFillMode_t; cuSOLVER's uplo)
constexpr int k_compute_32f = 68;    // CUBLAS_COMPUTE_32F (cublasComputeType_t)

using CreateFn = Status (*)(Handle*);                 // cublasCreate_v2
using DestroyFn = Status (*)(Handle);                 // cublasDestroy_v2
using GetVersionFn = Status (*)(Handle, int*);        // cublasGetVersion_v2
using SetStreamFn = Status (*)(Handle, cu::CUstream); // cublasSetStream_v2
using SgemmFn = Status (*)(Handle, int, int, int, int, int, const float*, const float*, int, const float*,
                           int, const float*, float*, int); // cublasSgemm_v2
} // namespace cublas

namespace cublaslt {
using Status = cublas::Status;
struct ContextOpaque; // struct cublasLtContext
using Handle = ContextOpaque*;
// The descriptors are pointers to complete (semi-opaque) structs in cublasLt.h.
struct MatrixLayoutOpaque {
  std::uint64_t data[8];
};
struct MatmulDescOpaque {
  std::uint64_t data[32];
};
struct MatmulPreferenceOpaque {
  std::uint64_t data[8];
};
using MatrixLayout = MatrixLayoutOpaque*;         // cublasLtMatrixLayout_t
using MatmulDesc = MatmulDescOpaque*;             // cublasLtMatmulDesc_t
using MatmulPreference = MatmulPreferenceOpaque*; // cublasLtMatmulPreference_t
struct MatmulAlgo {                               // cublasLtMatmulAlgo_t
  std::uint64_t data[8];
};
struct MatmulHeuristicResult { // cublasLtMatmulHeuristicResult_t
  MatmulAlgo algo;
  std::size_t workspaceSize;
  Status state;
  float wavesCount;
  int reserved[4];
};
constexpr int k_matmul_desc_transa = 3;              // CUBLASLT_MATMUL_DESC_TRANSA
constexpr int k_matmul_desc_transb = 4;              // CUBLASLT_MATMUL_DESC_TRANSB
constexpr int k_matmul_pref_max_workspace_bytes = 1; // CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES

using CreateFn = Status (*)(Handle*);                         // cublasLtCreate
using DestroyFn = Status (*)(Handle);                         // cublasLtDestroy
using GetVersionFn = std::size_t (*)();                       // cublasLtGetVersion
using MatmulDescCreateFn = Status (*)(MatmulDesc*, int, int); // cublasLtMatmulDescCreate
using MatmulDescDestroyFn = Status (*)(MatmulDesc);           // cublasLtMatmulDescDestroy
using MatmulDescSetAttributeFn = Status (*)(MatmulDesc, int, const void*,
                                            std::size_t); // cublasLtMatmulDescSetAttribute
using MatrixLayoutCreateFn = Status (*)(MatrixLayout*, int, std::uint64_t, std::uint64_t,
                                        std::int64_t);          // cublasLtMatrixLayoutCreate
using MatrixLayoutDestroyFn = Status (*)(MatrixLayout);         // cublasLtMatrixLayoutDestroy
using MatmulPreferenceCreateFn = Status (*)(MatmulPreference*); // cublasLtMatmulPreferenceCreate
using MatmulPreferenceDestroyFn = Status (*)(MatmulPreference); // cublasLtMatmulPreferenceDestroy
using MatmulPreferenceSetAttributeFn = Status (*)(MatmulPreference, int, const void*,
                                                  std::size_t); // cublasLtMatmulPreferenceSetAttribute
using MatmulAlgoGetHeuristicFn = Status (*)(Handle, MatmulDesc, MatrixLayout, MatrixLayout, MatrixLayout,
                                            MatrixLayout, MatmulPreference, int, MatmulHeuristicResult*,
                                            int*); // cublasLtMatmulAlgoGetHeuristic
using MatmulFn = Status (*)(Handle, MatmulDesc, const void*, const void*, MatrixLayout, const void*,
                            MatrixLayout, const void*, const void*, MatrixLayout, void*, MatrixLayout,
                            const MatmulAlgo*, void*, std::size_t, cu::CUstream); // cublasLtMatmul
} // namespace cublaslt

namespace cufft {
using Result = int;             // cufftResult
constexpr Result k_success = 0; // CUFFT_SUCCESS
using Handle = int;             // cufftHandle
constexpr int k_c2c = 0x29;     // CUFFT_C2C (cufftType)
constexpr int k_forward = -1;   // CUFFT_FORWARD
constexpr int k_inverse = 1;    // CUFFT_INVERSE
struct alignas(8) Complex {     // cufftComplex (cuComplex, float2)
  float x;
  float y;
};
using Plan1dFn = Result (*)(Handle*, int, int, int);           // cufftPlan1d
using ExecC2CFn = Result (*)(Handle, Complex*, Complex*, int); // cufftExecC2C
using SetStreamFn = Result (*)(Handle, cu::CUstream);          // cufftSetStream
using DestroyFn = Result (*)(Handle);                          // cufftDestroy
using GetVersionFn = Result (*)(int*);                         // cufftGetVersion
} // namespace cufft

namespace curand {
using Status = int;                                      // curandStatus_t
constexpr Status k_success = 0;                          // CURAND_STATUS_SUCCESS
struct GeneratorOpaque;                                  // struct curandGenerator_st
using Generator = GeneratorOpaque*;                      // curandGenerator_t
constexpr int k_rng_pseudo_philox4_32_10 = 161;          // CURAND_RNG_PSEUDO_PHILOX4_32_10 (curandRngType_t)
using CreateGeneratorFn = Status (*)(Generator*, int);   // curandCreateGenerator
using DestroyGeneratorFn = Status (*)(Generator);        // curandDestroyGenerator
using SetStreamFn = Status (*)(Generator, cu::CUstream); // curandSetStream
using SetSeedFn = Status (*)(Generator, unsigned long long);          // curandSetPseudoRandomGeneratorSeed
using GenerateUniformFn = Status (*)(Generator, float*, std::size_t); // curandGenerateUniform
using GetVersionFn = Status (*)(int*);                                // curandGetVersion
} // namespace curand

namespace cusparse {
using Status = int;                                   // cusparseStatus_t
constexpr Status k_success = 0;                       // CUSPARSE_STATUS_SUCCESS
struct ContextOpaque;                                 // struct cusparseContext
using Handle = ContextOpaque*;                        // cusparseHandle_t
struct SpMatOpaque;                                   // struct cusparseSpMatDescr
struct DnVecOpaque;                                   // struct cusparseDnVecDescr
using SpMat = SpMatOpaque*;                           // cusparseSpMatDescr_t
using ConstSpMat = const SpMatOpaque*;                // cusparseConstSpMatDescr_t
using DnVec = DnVecOpaque*;                           // cusparseDnVecDescr_t
using ConstDnVec = const DnVecOpaque*;                // cusparseConstDnVecDescr_t
constexpr int k_index_32i = 2;                        // CUSPARSE_INDEX_32I (cusparseIndexType_t)
constexpr int k_index_base_zero = 0;                  // CUSPARSE_INDEX_BASE_ZERO
constexpr int k_operation_non_transpose = 0;          // CUSPARSE_OPERATION_NON_TRANSPOSE
constexpr int k_spmv_alg_default = 0;                 // CUSPARSE_SPMV_ALG_DEFAULT
using CreateFn = Status (*)(Handle*);                 // cusparseCreate
using DestroyFn = Status (*)(Handle);                 // cusparseDestroy
using GetVersionFn = Status (*)(Handle, int*);        // cusparseGetVersion
using SetStreamFn = Status (*)(Handle, cu::CUstream); // cusparseSetStream
using CreateCsrFn = Status (*)(SpMat*, std::int64_t, std::int64_t, std::int64_t, void*, void*, void*, int,
                               int, int,
                               int);                                // cusparseCreateCsr
using CreateDnVecFn = Status (*)(DnVec*, std::int64_t, void*, int); // cusparseCreateDnVec
using DestroySpMatFn = Status (*)(ConstSpMat);                      // cusparseDestroySpMat
using DestroyDnVecFn = Status (*)(ConstDnVec);                      // cusparseDestroyDnVec
using SpMVBufferSizeFn = Status (*)(Handle, int, const void*, ConstSpMat, ConstDnVec, const void*, DnVec, int,
                                    int,
                                    std::size_t*); // cusparseSpMV_bufferSize
using SpMVFn = Status (*)(Handle, int, const void*, ConstSpMat, ConstDnVec, const void*, DnVec, int, int,
                          void*); // cusparseSpMV
} // namespace cusparse

namespace cusolver {
using Status = int;                                                             // cusolverStatus_t
constexpr Status k_success = 0;                                                 // CUSOLVER_STATUS_SUCCESS
struct DnContextOpaque;                                                         // struct cusolverDnContext
using DnHandle = DnContextOpaque*;                                              // cusolverDnHandle_t
using DnCreateFn = Status (*)(DnHandle*);                                       // cusolverDnCreate
using DnDestroyFn = Status (*)(DnHandle);                                       // cusolverDnDestroy
using DnSetStreamFn = Status (*)(DnHandle, cu::CUstream);                       // cusolverDnSetStream
using DnSpotrfBufferSizeFn = Status (*)(DnHandle, int, int, float*, int, int*); // cusolverDnSpotrf_bufferSize
using DnSpotrfFn = Status (*)(DnHandle, int, int, float*, int, float*, int, int*); // cusolverDnSpotrf
using GetVersionFn = Status (*)(int*);                                             // cusolverGetVersion
} // namespace cusolver

namespace cudnn {
using Status = int;                                   // cudnnStatus_t
constexpr Status k_success = 0;                       // CUDNN_STATUS_SUCCESS
struct ContextOpaque;                                 // struct cudnnContext
using Handle = ContextOpaque*;                        // cudnnHandle_t
struct TensorOpaque;                                  // struct cudnnTensorStruct
using TensorDescriptor = TensorOpaque*;               // cudnnTensorDescriptor_t
struct FilterOpaque;                                  // struct cudnnFilterStruct
using FilterDescriptor = FilterOpaque*;               // cudnnFilterDescriptor_t
struct ConvolutionOpaque;                             // struct cudnnConvolutionStruct
using ConvolutionDescriptor = ConvolutionOpaque*;     // cudnnConvolutionDescriptor_t
constexpr int k_tensor_nchw = 0;                      // CUDNN_TENSOR_NCHW (cudnnTensorFormat_t)
constexpr int k_data_float = 0;                       // CUDNN_DATA_FLOAT (cudnnDataType_t)
constexpr int k_cross_correlation = 1;                // CUDNN_CROSS_CORRELATION (cudnnConvolutionMode_t)
constexpr int k_fwd_algo_implicit_gemm = 0;           // CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM
using GetVersionFn = std::size_t (*)();               // cudnnGetVersion
using GetErrorStringFn = const char* (*)(Status);     // cudnnGetErrorString
using CreateFn = Status (*)(Handle*);                 // cudnnCreate
using DestroyFn = Status (*)(Handle);                 // cudnnDestroy
using SetStreamFn = Status (*)(Handle, cu::CUstream); // cudnnSetStream
using CreateTensorDescriptorFn = Status (*)(TensorDescriptor*); // cudnnCreateTensorDescriptor
using SetTensor4dDescriptorFn = Status (*)(TensorDescriptor, int, int, int, int, int,
                                           int);                // cudnnSetTensor4dDescriptor
using DestroyTensorDescriptorFn = Status (*)(TensorDescriptor); // cudnnDestroyTensorDescriptor
using CreateFilterDescriptorFn = Status (*)(FilterDescriptor*); // cudnnCreateFilterDescriptor
using SetFilter4dDescriptorFn = Status (*)(FilterDescriptor, int, int, int, int, int,
                                           int);                          // cudnnSetFilter4dDescriptor
using DestroyFilterDescriptorFn = Status (*)(FilterDescriptor);           // cudnnDestroyFilterDescriptor
using CreateConvolutionDescriptorFn = Status (*)(ConvolutionDescriptor*); // cudnnCreateConvolutionDescriptor
using SetConvolution2dDescriptorFn = Status (*)(ConvolutionDescriptor, int, int, int, int, int, int, int,
                                                int);                     // cudnnSetConvolution2dDescriptor
using DestroyConvolutionDescriptorFn = Status (*)(ConvolutionDescriptor); // cudnnDestroyConvolutionDescriptor
using GetConvolutionForwardWorkspaceSizeFn =
    Status (*)(Handle, TensorDescriptor, FilterDescriptor, ConvolutionDescriptor, TensorDescriptor, int,
               std::size_t*); // cudnnGetConvolutionForwardWorkspaceSize
using ConvolutionForwardFn = Status (*)(Handle, const void*, TensorDescriptor, const void*, FilterDescriptor,
                                        const void*, ConvolutionDescriptor, int, void*, std::size_t,
                                        const void*, TensorDescriptor, void*); // cudnnConvolutionForward
} // namespace cudnn

namespace nccl {
using Result = int;                                       // ncclResult_t
constexpr Result k_success = 0;                           // ncclSuccess
struct CommOpaque;                                        // struct ncclComm
using Comm = CommOpaque*;                                 // ncclComm_t
constexpr int k_float32 = 7;                              // ncclFloat32 (ncclDataType_t)
constexpr int k_sum = 0;                                  // ncclSum (ncclRedOp_t)
using GetVersionFn = Result (*)(int*);                    // ncclGetVersion
using GetErrorStringFn = const char* (*)(Result);         // ncclGetErrorString
using CommInitAllFn = Result (*)(Comm*, int, const int*); // ncclCommInitAll
using CommDestroyFn = Result (*)(Comm);                   // ncclCommDestroy
using AllReduceFn = Result (*)(const void*, void*, std::size_t, int, int, Comm,
                               cu::CUstream); // ncclAllReduce
} // namespace nccl

} // namespace cudadiag::cuda_api
