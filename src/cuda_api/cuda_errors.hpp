#pragma once
// Names and one-line descriptions of CUresult codes, for when the driver cannot decode its own
// errors (cuGetErrorName missing, or the library is a stub). Names are cuda.h's (CUDA 13.0); the one
// exception is 35, which only the runtime defines (cudaErrorInsufficientDriver) and which users meet
// in the same breath as driver errors.

#include <span>
#include <string_view>

namespace cudadiag::cuda_api {

struct CudaErrorInfo {
  int code;
  std::string_view name;        // e.g. "CUDA_ERROR_NO_DEVICE"
  std::string_view description; // one sentence for users, no trailing period
};

// Every code the table knows, in ascending order.
std::span<const CudaErrorInfo> cuda_error_table();

// The entry for `code`, or nullptr when the table does not know it.
const CudaErrorInfo* find_cuda_error(int code);

} // namespace cudadiag::cuda_api
