// The libs self-test's checks of cuFFT, cuRAND, cuSPARSE, cuSOLVER, cuDNN and NCCL: one small
// problem each, on the test's stream, against a host reference (contract: libs_worker.hpp).

#include "cuda_api/math_libs.hpp"
#include "selftest/libs.hpp"
#include "selftest/libs_worker.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace cudadiag::selftest::libs {

namespace api = cuda_api;

// --- cuFFT: C2C forward, then inverse ------------------------------------------------------------

void check_cufft(const LibsRun& run, const api::DlHandle& library, Evidence& record) {
  namespace fft = api::cufft;
  api::MissingSymbols missing;
  const api::SymbolResolver r(library, missing);
  const auto get_version = r.require<fft::GetVersionFn>("cufftGetVersion");
  const auto plan_1d = r.require<fft::Plan1dFn>("cufftPlan1d");
  const auto set_stream = r.require<fft::SetStreamFn>("cufftSetStream");
  const auto exec_c2c = r.require<fft::ExecC2CFn>("cufftExecC2C");
  const auto destroy = r.require<fft::DestroyFn>("cufftDestroy");
  expect_symbols(missing, "libcufft");
  int version = 0;
  expect_success(get_version(&version), "cufftGetVersion");
  record["version"] = version;
  record["version_call"] = "cufftGetVersion";

  constexpr int n = 1024;
  const auto input = uniform_values(2 * n, 5); // interleaved re, im
  const std::size_t bytes = input.size() * sizeof(float);
  const DeviceBuffer signal(run.gpu, bytes);
  const DeviceBuffer spectrum(run.gpu, bytes);
  const DeviceBuffer back(run.gpu, bytes);
  upload(run, signal, input);
  fft::Handle plan = 0;
  expect_success(plan_1d(&plan, n, fft::k_c2c, 1), "cufftPlan1d(1024, C2C)");
  const Defer destroy_plan([&] { destroy(plan); });
  expect_success(set_stream(plan, run.stream.get()), "cufftSetStream");
  auto* in = static_cast<fft::Complex*>(device_pointer(signal));
  auto* mid = static_cast<fft::Complex*>(device_pointer(spectrum));
  auto* out = static_cast<fft::Complex*>(device_pointer(back));
  expect_success(exec_c2c(plan, in, mid, fft::k_forward), "cufftExecC2C(FORWARD)");
  expect_success(exec_c2c(plan, mid, out, fft::k_inverse), "cufftExecC2C(INVERSE)");
  const auto forward = download<float>(run, spectrum.get(), input.size());
  const auto round_trip = download<float>(run, back.get(), input.size());

  // Forward: four bins against the host's DFT (double); inverse(forward(x)) / N = x.
  double magnitude = 0;
  for (const float value : input) {
    magnitude += std::fabs(static_cast<double>(value));
  }
  for (const std::size_t bin : {std::size_t{0}, std::size_t{1}, std::size_t{17}, std::size_t{n / 2}}) {
    const auto expected = dft_bin(input, bin);
    // The distance of two complex numbers whose parts are at most a few thousand: no overflow to
    // guard against, so not hypot() (whose current symbol version, GLIBC_2.35, would raise the
    // library's glibc floor).
    const double real_error = static_cast<double>(forward[2 * bin]) - expected[0];
    const double imaginary_error = static_cast<double>(forward[2 * bin + 1]) - expected[1];
    const double error = std::sqrt(real_error * real_error + imaginary_error * imaginary_error);
    if (!(error <= 1e-5 * magnitude + 1e-4)) {
      throw LibraryFailure("FFT of 1024 points: bin " + std::to_string(bin) + " is (" +
                           std::to_string(forward[2 * bin]) + ", " + std::to_string(forward[2 * bin + 1]) +
                           "), the host's DFT gives (" + std::to_string(expected[0]) + ", " +
                           std::to_string(expected[1]) + ")");
    }
  }
  double worst = 0;
  for (std::size_t i = 0; i < input.size(); ++i) {
    worst =
        std::max(worst, std::fabs(static_cast<double>(round_trip[i]) / n - static_cast<double>(input[i])));
  }
  record["round_trip_max_error"] = worst;
  if (!(worst <= 1e-4)) {
    throw LibraryFailure("FFT of 1024 points: inverse(forward(x)) / N differs from x by " +
                         std::to_string(worst));
  }
  record["checked"] = "C2C 1024: 4 forward bins against the host's DFT, inverse(forward(x)) / N = x";
}

// --- cuRAND: uniform floats ------------------------------------------------------------------------

void check_curand(const LibsRun& run, const api::DlHandle& library, Evidence& record) {
  namespace rand = api::curand;
  api::MissingSymbols missing;
  const api::SymbolResolver r(library, missing);
  const auto get_version = r.require<rand::GetVersionFn>("curandGetVersion");
  const auto create = r.require<rand::CreateGeneratorFn>("curandCreateGenerator");
  const auto destroy = r.require<rand::DestroyGeneratorFn>("curandDestroyGenerator");
  const auto set_stream = r.require<rand::SetStreamFn>("curandSetStream");
  const auto set_seed = r.require<rand::SetSeedFn>("curandSetPseudoRandomGeneratorSeed");
  const auto generate = r.require<rand::GenerateUniformFn>("curandGenerateUniform");
  expect_symbols(missing, "libcurand");
  int version = 0;
  expect_success(get_version(&version), "curandGetVersion");
  record["version"] = version;
  record["version_call"] = "curandGetVersion";

  constexpr std::size_t count = std::size_t{1} << 20U;
  const DeviceBuffer values(run.gpu, count * sizeof(float));
  rand::Generator generator = nullptr;
  expect_success(create(&generator, rand::k_rng_pseudo_philox4_32_10),
                 "curandCreateGenerator(PHILOX4_32_10)");
  const Defer destroy_generator([&] { destroy(generator); });
  expect_success(set_stream(generator, run.stream.get()), "curandSetStream");
  expect_success(set_seed(generator, 20261202ULL), "curandSetPseudoRandomGeneratorSeed");
  expect_success(generate(generator, static_cast<float*>(device_pointer(values)), count),
                 "curandGenerateUniform");
  const auto got = download<float>(run, values.get(), count);

  // Uniform on (0, 1]: every value in range, mean 1/2 and variance 1/12 (both within far more than
  // 10 standard errors for 2^20 values).
  double sum = 0;
  double squares = 0;
  for (std::size_t i = 0; i < count; ++i) {
    if (!(got[i] > 0.0F && got[i] <= 1.0F)) {
      throw LibraryFailure("curandGenerateUniform: value " + std::to_string(i) + " is " +
                           std::to_string(got[i]) + ", outside (0, 1]");
    }
    const auto value = static_cast<double>(got[i]);
    sum += value;
    squares += value * value;
  }
  const double mean = sum / static_cast<double>(count);
  const double variance = squares / static_cast<double>(count) - mean * mean;
  record["mean"] = mean;
  record["variance"] = variance;
  if (std::fabs(mean - 0.5) > 0.01 || std::fabs(variance - 1.0 / 12.0) > 0.01) {
    throw LibraryFailure("curandGenerateUniform: 2^20 values have mean " + std::to_string(mean) +
                         " and variance " + std::to_string(variance) + " (uniform: 0.5 and 0.0833)");
  }
  record["checked"] = "2^20 uniform floats (Philox): all in (0, 1], mean and variance";
}

// --- cuSPARSE: CSR SpMV ----------------------------------------------------------------------------

void check_cusparse(const LibsRun& run, const api::DlHandle& library, Evidence& record) {
  namespace sp = api::cusparse;
  api::MissingSymbols missing;
  const api::SymbolResolver r(library, missing);
  const auto create = r.require<sp::CreateFn>("cusparseCreate");
  const auto destroy = r.require<sp::DestroyFn>("cusparseDestroy");
  const auto get_version = r.require<sp::GetVersionFn>("cusparseGetVersion");
  const auto set_stream = r.require<sp::SetStreamFn>("cusparseSetStream");
  const auto create_csr = r.require<sp::CreateCsrFn>("cusparseCreateCsr");
  const auto create_dn_vec = r.require<sp::CreateDnVecFn>("cusparseCreateDnVec");
  const auto destroy_sp_mat = r.require<sp::DestroySpMatFn>("cusparseDestroySpMat");
  const auto destroy_dn_vec = r.require<sp::DestroyDnVecFn>("cusparseDestroyDnVec");
  const auto buffer_size = r.require<sp::SpMVBufferSizeFn>("cusparseSpMV_bufferSize");
  const auto spmv = r.require<sp::SpMVFn>("cusparseSpMV");
  expect_symbols(missing, "libcusparse");
  sp::Handle handle = nullptr;
  expect_success(create(&handle), "cusparseCreate");
  const Defer destroy_handle([&] { destroy(handle); });
  int version = 0;
  expect_success(get_version(handle, &version), "cusparseGetVersion");
  record["version"] = version;
  record["version_call"] = "cusparseGetVersion";
  expect_success(set_stream(handle, run.stream.get()), "cusparseSetStream");

  // A 256 x 256 CSR matrix: the tridiagonal band and one scattered entry per row, sorted columns.
  constexpr int n = 256;
  std::vector<int> offsets{0};
  std::vector<int> columns;
  for (int row = 0; row < n; ++row) {
    std::vector<int> cols{(row + n - 1) % n, row, (row + 1) % n, (row * 37 + 11) % n};
    std::sort(cols.begin(), cols.end());
    cols.erase(std::unique(cols.begin(), cols.end()), cols.end());
    columns.insert(columns.end(), cols.begin(), cols.end());
    offsets.push_back(static_cast<int>(columns.size()));
  }
  const auto values = uniform_values(columns.size(), 6);
  const auto x = uniform_values(n, 7);
  const DeviceBuffer d_offsets(run.gpu, offsets.size() * sizeof(int));
  const DeviceBuffer d_columns(run.gpu, columns.size() * sizeof(int));
  const DeviceBuffer d_values(run.gpu, values.size() * sizeof(float));
  const DeviceBuffer d_x(run.gpu, x.size() * sizeof(float));
  const DeviceBuffer d_y(run.gpu, x.size() * sizeof(float));
  upload(run, d_offsets, offsets);
  upload(run, d_columns, columns);
  upload(run, d_values, values);
  upload(run, d_x, x);
  sp::SpMat matrix = nullptr;
  expect_success(create_csr(&matrix, n, n, static_cast<std::int64_t>(columns.size()),
                            device_pointer(d_offsets), device_pointer(d_columns), device_pointer(d_values),
                            sp::k_index_32i, sp::k_index_32i, sp::k_index_base_zero, api::data_type::k_r_32f),
                 "cusparseCreateCsr");
  const Defer destroy_matrix([&] { destroy_sp_mat(matrix); });
  sp::DnVec vec_x = nullptr;
  expect_success(create_dn_vec(&vec_x, n, device_pointer(d_x), api::data_type::k_r_32f),
                 "cusparseCreateDnVec(x)");
  const Defer destroy_x([&] { destroy_dn_vec(vec_x); });
  sp::DnVec vec_y = nullptr;
  expect_success(create_dn_vec(&vec_y, n, device_pointer(d_y), api::data_type::k_r_32f),
                 "cusparseCreateDnVec(y)");
  const Defer destroy_y([&] { destroy_dn_vec(vec_y); });
  const float alpha = 1.0F;
  const float beta = 0.0F;
  std::size_t workspace_bytes = 0;
  expect_success(buffer_size(handle, sp::k_operation_non_transpose, &alpha, matrix, vec_x, &beta, vec_y,
                             api::data_type::k_r_32f, sp::k_spmv_alg_default, &workspace_bytes),
                 "cusparseSpMV_bufferSize");
  record["workspace_bytes"] = workspace_bytes;
  const DeviceBuffer workspace(run.gpu, std::max<std::size_t>(workspace_bytes, 256));
  expect_success(spmv(handle, sp::k_operation_non_transpose, &alpha, matrix, vec_x, &beta, vec_y,
                      api::data_type::k_r_32f, sp::k_spmv_alg_default, device_pointer(workspace)),
                 "cusparseSpMV");
  const auto y = download<float>(run, d_y.get(), x.size());
  for (std::size_t row = 0; row < static_cast<std::size_t>(n); ++row) {
    double expected = 0;
    double bound = 0;
    for (auto e = static_cast<std::size_t>(offsets[row]); e < static_cast<std::size_t>(offsets[row + 1]);
         ++e) {
      const double term =
          static_cast<double>(values[e]) * static_cast<double>(x[static_cast<std::size_t>(columns[e])]);
      expected += term;
      bound += std::fabs(term);
    }
    if (!(std::fabs(static_cast<double>(y[row]) - expected) <= 1e-5 * bound + 1e-6)) {
      throw LibraryFailure("SpMV 256x256 CSR: y(" + std::to_string(row) + ") is " + std::to_string(y[row]) +
                           ", the host computes " + std::to_string(expected));
    }
  }
  record["checked"] = "SpMV of a 256x256 CSR matrix (" + std::to_string(columns.size()) +
                      " non-zeros) against the host, every element";
}

// --- cuSOLVER: Cholesky ------------------------------------------------------------------------------

void check_cusolver(const LibsRun& run, const api::DlHandle& library, Evidence& record) {
  namespace so = api::cusolver;
  api::MissingSymbols missing;
  const api::SymbolResolver r(library, missing);
  const auto get_version = r.require<so::GetVersionFn>("cusolverGetVersion");
  const auto create = r.require<so::DnCreateFn>("cusolverDnCreate");
  const auto destroy = r.require<so::DnDestroyFn>("cusolverDnDestroy");
  const auto set_stream = r.require<so::DnSetStreamFn>("cusolverDnSetStream");
  const auto potrf_buffer_size = r.require<so::DnSpotrfBufferSizeFn>("cusolverDnSpotrf_bufferSize");
  const auto potrf = r.require<so::DnSpotrfFn>("cusolverDnSpotrf");
  expect_symbols(missing, "libcusolver");
  int version = 0;
  expect_success(get_version(&version), "cusolverGetVersion");
  record["version"] = version;
  record["version_call"] = "cusolverGetVersion";
  so::DnHandle handle = nullptr;
  expect_success(create(&handle), "cusolverDnCreate");
  const Defer destroy_handle([&] { destroy(handle); });
  expect_success(set_stream(handle, run.stream.get()), "cusolverDnSetStream");

  // A = M^T M + n I (32 x 32, column-major): symmetric positive definite.
  constexpr int n = 32;
  constexpr auto nn = static_cast<std::size_t>(n);
  const auto m = uniform_values(nn * nn, 8);
  std::vector<double> a(nn * nn, 0.0);
  for (std::size_t i = 0; i < nn; ++i) {
    for (std::size_t j = 0; j < nn; ++j) {
      double sum = i == j ? static_cast<double>(n) : 0.0;
      for (std::size_t p = 0; p < nn; ++p) {
        sum += static_cast<double>(m[p + i * nn]) * static_cast<double>(m[p + j * nn]);
      }
      a[i + j * nn] = sum;
    }
  }
  std::vector<float> host(a.size());
  std::transform(a.begin(), a.end(), host.begin(), [](double v) { return static_cast<float>(v); });
  std::vector<double> rounded(host.begin(), host.end()); // the matrix the GPU factors
  const auto expected = cholesky_lower(rounded, n);
  const DeviceBuffer matrix(run.gpu, host.size() * sizeof(float));
  const DeviceBuffer info(run.gpu, sizeof(int));
  upload(run, matrix, host);
  auto* pa = static_cast<float*>(device_pointer(matrix));
  int lwork = 0;
  expect_success(potrf_buffer_size(handle, api::cublas::k_fill_mode_lower, n, pa, n, &lwork),
                 "cusolverDnSpotrf_bufferSize");
  record["workspace_floats"] = lwork;
  const DeviceBuffer workspace(
      run.gpu, std::max<std::size_t>(static_cast<std::size_t>(std::max(lwork, 1)) * sizeof(float), 256));
  expect_success(potrf(handle, api::cublas::k_fill_mode_lower, n, pa, n,
                       static_cast<float*>(device_pointer(workspace)), lwork,
                       static_cast<int*>(device_pointer(info))),
                 "cusolverDnSpotrf");
  const auto factor = download<float>(run, matrix.get(), host.size());
  const auto status = download<int>(run, info.get(), 1);
  if (status[0] != 0 || expected.empty()) {
    throw LibraryFailure("cusolverDnSpotrf of a 32x32 SPD matrix set devInfo " + std::to_string(status[0]));
  }
  double largest = 0;
  for (const double v : expected) {
    largest = std::max(largest, std::fabs(v));
  }
  for (std::size_t j = 0; j < nn; ++j) {
    for (std::size_t i = j; i < nn; ++i) {
      if (!(std::fabs(static_cast<double>(factor[i + j * nn]) - expected[i + j * nn]) <= 1e-4 * largest)) {
        throw LibraryFailure("Cholesky 32x32: L(" + std::to_string(i) + ", " + std::to_string(j) + ") is " +
                             std::to_string(factor[i + j * nn]) + ", the host computes " +
                             std::to_string(expected[i + j * nn]));
      }
    }
  }
  record["checked"] = "Spotrf (lower) of a 32x32 SPD matrix against the host's Cholesky (double)";
}

// --- cuDNN: a small convolution forward ---------------------------------------------------------

void check_cudnn(const LibsRun& run, const api::DlHandle& library, Evidence& record) {
  namespace dnn = api::cudnn;
  api::MissingSymbols missing;
  const api::SymbolResolver r(library, missing);
  const auto get_version = r.require<dnn::GetVersionFn>("cudnnGetVersion");
  const auto error_string = r.require<dnn::GetErrorStringFn>("cudnnGetErrorString");
  const auto create = r.require<dnn::CreateFn>("cudnnCreate");
  const auto destroy = r.require<dnn::DestroyFn>("cudnnDestroy");
  const auto set_stream = r.require<dnn::SetStreamFn>("cudnnSetStream");
  const auto create_tensor = r.require<dnn::CreateTensorDescriptorFn>("cudnnCreateTensorDescriptor");
  const auto set_tensor = r.require<dnn::SetTensor4dDescriptorFn>("cudnnSetTensor4dDescriptor");
  const auto destroy_tensor = r.require<dnn::DestroyTensorDescriptorFn>("cudnnDestroyTensorDescriptor");
  const auto create_filter = r.require<dnn::CreateFilterDescriptorFn>("cudnnCreateFilterDescriptor");
  const auto set_filter = r.require<dnn::SetFilter4dDescriptorFn>("cudnnSetFilter4dDescriptor");
  const auto destroy_filter = r.require<dnn::DestroyFilterDescriptorFn>("cudnnDestroyFilterDescriptor");
  const auto create_conv = r.require<dnn::CreateConvolutionDescriptorFn>("cudnnCreateConvolutionDescriptor");
  const auto set_conv = r.require<dnn::SetConvolution2dDescriptorFn>("cudnnSetConvolution2dDescriptor");
  const auto destroy_conv =
      r.require<dnn::DestroyConvolutionDescriptorFn>("cudnnDestroyConvolutionDescriptor");
  const auto workspace_size =
      r.require<dnn::GetConvolutionForwardWorkspaceSizeFn>("cudnnGetConvolutionForwardWorkspaceSize");
  const auto forward = r.require<dnn::ConvolutionForwardFn>("cudnnConvolutionForward");
  expect_symbols(missing, "libcudnn");
  const auto check = [&](dnn::Status status, const std::string& call) {
    const char* text = status != dnn::k_success ? error_string(status) : nullptr;
    expect_success(status, call, text != nullptr ? text : "");
  };
  record["version"] = get_version();
  record["version_call"] = "cudnnGetVersion";
  dnn::Handle handle = nullptr;
  check(create(&handle), "cudnnCreate");
  const Defer destroy_handle([&] { destroy(handle); });
  check(set_stream(handle, run.stream.get()), "cudnnSetStream");

  // x: 1x1x8x8, w: 1x1x3x3, no padding, stride 1: y 1x1x6x6 (cross-correlation, as frameworks use).
  constexpr int h = 8;
  constexpr int w = 8;
  constexpr int fr = 3;
  constexpr int fs = 3;
  constexpr int oh = h - fr + 1;
  constexpr int ow = w - fs + 1;
  dnn::TensorDescriptor x_desc = nullptr;
  dnn::TensorDescriptor y_desc = nullptr;
  dnn::FilterDescriptor w_desc = nullptr;
  dnn::ConvolutionDescriptor conv_desc = nullptr;
  check(create_tensor(&x_desc), "cudnnCreateTensorDescriptor");
  const Defer destroy_x([&] { destroy_tensor(x_desc); });
  check(create_tensor(&y_desc), "cudnnCreateTensorDescriptor");
  const Defer destroy_y([&] { destroy_tensor(y_desc); });
  check(create_filter(&w_desc), "cudnnCreateFilterDescriptor");
  const Defer destroy_w([&] { destroy_filter(w_desc); });
  check(create_conv(&conv_desc), "cudnnCreateConvolutionDescriptor");
  const Defer destroy_c([&] { destroy_conv(conv_desc); });
  check(set_tensor(x_desc, dnn::k_tensor_nchw, dnn::k_data_float, 1, 1, h, w),
        "cudnnSetTensor4dDescriptor(x)");
  check(set_tensor(y_desc, dnn::k_tensor_nchw, dnn::k_data_float, 1, 1, oh, ow),
        "cudnnSetTensor4dDescriptor(y)");
  check(set_filter(w_desc, dnn::k_data_float, dnn::k_tensor_nchw, 1, 1, fr, fs),
        "cudnnSetFilter4dDescriptor");
  check(set_conv(conv_desc, 0, 0, 1, 1, 1, 1, dnn::k_cross_correlation, dnn::k_data_float),
        "cudnnSetConvolution2dDescriptor");
  std::size_t workspace_bytes = 0;
  check(workspace_size(handle, x_desc, w_desc, conv_desc, y_desc, dnn::k_fwd_algo_implicit_gemm,
                       &workspace_bytes),
        "cudnnGetConvolutionForwardWorkspaceSize(IMPLICIT_GEMM)");
  record["workspace_bytes"] = workspace_bytes;

  const auto image = uniform_values(std::size_t{h} * w, 9);
  const auto filter = uniform_values(std::size_t{fr} * fs, 10);
  const DeviceBuffer d_x(run.gpu, image.size() * sizeof(float));
  const DeviceBuffer d_w(run.gpu, filter.size() * sizeof(float));
  const DeviceBuffer d_y(run.gpu, std::size_t{oh} * ow * sizeof(float));
  const DeviceBuffer workspace(run.gpu, std::max<std::size_t>(workspace_bytes, 256));
  upload(run, d_x, image);
  upload(run, d_w, filter);
  const float alpha = 1.0F;
  const float beta = 0.0F;
  check(forward(handle, &alpha, x_desc, device_pointer(d_x), w_desc, device_pointer(d_w), conv_desc,
                dnn::k_fwd_algo_implicit_gemm, device_pointer(workspace), workspace_bytes, &beta, y_desc,
                device_pointer(d_y)),
        "cudnnConvolutionForward(IMPLICIT_GEMM)");
  const auto y = download<float>(run, d_y.get(), std::size_t{oh} * ow);
  // FP32 convolutions may run as TF32 on tensor cores (cuDNN's default math): 2e-3 of sum |x||w|.
  const auto expected = cross_correlation(image, h, w, filter, fr, fs);
  const auto magnitude = [](std::vector<float> v) {
    std::transform(v.begin(), v.end(), v.begin(), [](float e) { return std::fabs(e); });
    return v;
  };
  const auto bound = cross_correlation(magnitude(image), h, w, magnitude(filter), fr, fs);
  for (std::size_t i = 0; i < y.size(); ++i) {
    if (!(std::fabs(static_cast<double>(y[i]) - expected[i]) <= 2e-3 * bound[i] + 1e-6)) {
      throw LibraryFailure("convolution 8x8 by 3x3: y(" + std::to_string(i / ow) + ", " +
                           std::to_string(i % ow) + ") is " + std::to_string(y[i]) + ", the host computes " +
                           std::to_string(expected[i]));
    }
  }
  record["checked"] =
      "convolution forward (1x1x8x8 by 1x1x3x3, implicit GEMM) against the host, every element";
}

// --- NCCL: all-reduce on one GPU ---------------------------------------------------------------------

void check_nccl(const LibsRun& run, const api::DlHandle& library, Evidence& record) {
  namespace nc = api::nccl;
  api::MissingSymbols missing;
  const api::SymbolResolver r(library, missing);
  const auto get_version = r.require<nc::GetVersionFn>("ncclGetVersion");
  const auto error_string = r.require<nc::GetErrorStringFn>("ncclGetErrorString");
  const auto init_all = r.require<nc::CommInitAllFn>("ncclCommInitAll");
  const auto destroy = r.require<nc::CommDestroyFn>("ncclCommDestroy");
  const auto all_reduce = r.require<nc::AllReduceFn>("ncclAllReduce");
  expect_symbols(missing, "libnccl");
  const auto check = [&](nc::Result status, const std::string& call) {
    const char* text = status != nc::k_success ? error_string(status) : nullptr;
    expect_success(status, call, text != nullptr ? text : "");
  };
  int version = 0;
  check(get_version(&version), "ncclGetVersion");
  record["version"] = version;
  record["version_call"] = "ncclGetVersion";

  // One communicator of one rank on this device: the sum over ranks is the input, bit for bit.
  const int ordinal = run.context.device->ordinal;
  nc::Comm comm = nullptr;
  check(init_all(&comm, 1, &ordinal), "ncclCommInitAll(1 device)");
  const Defer destroy_comm([&] { destroy(comm); });
  constexpr std::size_t count = 4096;
  const auto input = uniform_values(count, 11);
  const DeviceBuffer send(run.gpu, count * sizeof(float));
  const DeviceBuffer receive(run.gpu, count * sizeof(float));
  upload(run, send, input);
  check(all_reduce(device_pointer(send), device_pointer(receive), count, nc::k_float32, nc::k_sum, comm,
                   run.stream.get()),
        "ncclAllReduce(float32, sum)");
  const auto got = download<float>(run, receive.get(), count);
  if (std::memcmp(got.data(), input.data(), count * sizeof(float)) != 0) {
    const auto mismatch = std::mismatch(got.begin(), got.end(), input.begin());
    const auto at = static_cast<std::size_t>(mismatch.first - got.begin());
    throw LibraryFailure("all-reduce (sum) on one rank: element " + std::to_string(at) + " is " +
                         std::to_string(got[at]) + ", the input was " + std::to_string(input[at]));
  }
  record["checked"] = "ncclAllReduce (sum) of 4096 floats on a one-rank communicator equals its input";
}

} // namespace cudadiag::selftest::libs
