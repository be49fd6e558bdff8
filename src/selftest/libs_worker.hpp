#pragma once
// The worker side of the `libs` self-test, shared by libs_test.cpp (loading, the test's entry point,
// cuBLASLt and cuBLAS) and libs_checks.cpp (cuFFT, cuRAND, cuSPARSE, cuSOLVER, cuDNN, NCCL). Each
// check receives its library's handle (loaded with its dependencies by the test), resolves its
// entry points through the typed mirrors of cuda_api/math_libs.hpp, makes its call(s) on the test's
// stream, compares with a host reference and writes what it saw into `record` (the library's entry
// in details.libraries). A library call that fails or a wrong answer throws LibraryFailure; a check
// that cannot apply here throws LibrarySkip. Driver failures are CudaFailure (gpu.hpp).

#include "cuda_api/library.hpp"
#include "selftest/test_context.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace cudadiag::selftest::libs {

class LibraryFailure : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};
class LibrarySkip : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// What every check needs: the test's context (device, sizes, NVML), the driver, the stream every
// library call is made on, and the result its figures go to.
struct LibsRun {
  const TestContext& context;
  const Gpu& gpu;
  const Stream& stream;
  TestResult& result;
};

// Throws LibraryFailure("CALL returned STATUS[ (TEXT)]") unless `status` is 0 (every library's success).
void expect_success(int status, const std::string& call, const std::string& text = {});
// Throws LibraryFailure naming every entry point `missing` holds.
void expect_symbols(const cuda_api::MissingSymbols& missing, const std::string& library);

inline void* device_pointer(const DeviceBuffer& buffer) {
  return reinterpret_cast<void*>(static_cast<std::uintptr_t>(buffer.get()));
}

// Copies `values` to `destination` on the run's stream (ordered before the library calls after it).
template <class T>
void upload(const LibsRun& run, const DeviceBuffer& destination, const std::vector<T>& values) {
  run.gpu.check(run.gpu.api().memcpy_htod_async(destination.get(), values.data(), values.size() * sizeof(T),
                                                run.stream.get()),
                "cuMemcpyHtoDAsync");
}
// `count` values from `source` after everything queued on the run's stream.
template <class T> std::vector<T> download(const LibsRun& run, cu::CUdeviceptr source, std::size_t count) {
  std::vector<T> values(count);
  run.gpu.check(run.gpu.api().memcpy_dtoh_async(values.data(), source, count * sizeof(T), run.stream.get()),
                "cuMemcpyDtoHAsync");
  run.stream.synchronize();
  return values;
}

// The checks, one per library (libs_test.cpp: cublasLt, cublas; libs_checks.cpp: the rest).
using Check = void (*)(const LibsRun& run, const cuda_api::DlHandle& library, Evidence& record);
void check_cublaslt(const LibsRun& run, const cuda_api::DlHandle& library, Evidence& record);
void check_cublas(const LibsRun& run, const cuda_api::DlHandle& library, Evidence& record);
void check_cufft(const LibsRun& run, const cuda_api::DlHandle& library, Evidence& record);
void check_curand(const LibsRun& run, const cuda_api::DlHandle& library, Evidence& record);
void check_cusparse(const LibsRun& run, const cuda_api::DlHandle& library, Evidence& record);
void check_cusolver(const LibsRun& run, const cuda_api::DlHandle& library, Evidence& record);
void check_cudnn(const LibsRun& run, const cuda_api::DlHandle& library, Evidence& record);
void check_nccl(const LibsRun& run, const cuda_api::DlHandle& library, Evidence& record);

// Calls `cleanup` when the scope ends (a library handle or descriptor destroyed whatever happens).
template <class F> class Defer {
public:
  explicit Defer(F cleanup) : m_cleanup(std::move(cleanup)) {}
  ~Defer() { m_cleanup(); }
  Defer(const Defer&) = delete;
  Defer& operator=(const Defer&) = delete;

private:
  F m_cleanup;
};

} // namespace cudadiag::selftest::libs
