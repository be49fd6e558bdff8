#include "cuda_api/cuda_errors.hpp"

#include <algorithm>

namespace cudadiag::cuda_api {
namespace {

// Sorted by code; the names are checked against cuda.h by tests/unit/test_verify_driver_probe.cpp.
// clang-format off
constexpr CudaErrorInfo k_cuda_errors[] = {
    {0,   "CUDA_SUCCESS",                              "no error"},
    {1,   "CUDA_ERROR_INVALID_VALUE",                  "an argument was out of range"},
    {2,   "CUDA_ERROR_OUT_OF_MEMORY",                  "the driver could not allocate enough memory"},
    {3,   "CUDA_ERROR_NOT_INITIALIZED",                "the driver has not been initialized with cuInit, or cuInit failed"},
    {4,   "CUDA_ERROR_DEINITIALIZED",                  "the driver is shutting down"},
    {34,  "CUDA_ERROR_STUB_LIBRARY",                   "the loaded libcuda is the toolkit's link-time stub, not a real driver"},
    {35,  "cudaErrorInsufficientDriver",               "(runtime code) the installed driver is older than the CUDA runtime needs"},
    {36,  "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER",     "the call needs a newer driver than the one installed"},
    {46,  "CUDA_ERROR_DEVICE_UNAVAILABLE",             "the device is unavailable now, often because of an exclusive or prohibited compute mode"},
    {100, "CUDA_ERROR_NO_DEVICE",                      "the driver found no CUDA-capable device"},
    {101, "CUDA_ERROR_INVALID_DEVICE",                 "the device ordinal does not name a valid device"},
    {102, "CUDA_ERROR_DEVICE_NOT_LICENSED",            "the device does not have a valid Grid license"},
    {200, "CUDA_ERROR_INVALID_IMAGE",                  "the kernel image is invalid"},
    {201, "CUDA_ERROR_INVALID_CONTEXT",                "no context is bound, or the context is invalid"},
    {209, "CUDA_ERROR_NO_BINARY_FOR_GPU",              "the module has no kernel image built for this GPU's architecture"},
    {214, "CUDA_ERROR_ECC_UNCORRECTABLE",              "an uncorrectable ECC error was detected"},
    {218, "CUDA_ERROR_INVALID_PTX",                    "the PTX JIT compilation failed"},
    {221, "CUDA_ERROR_JIT_COMPILER_NOT_FOUND",         "the PTX JIT compiler library was not found"},
    {222, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",        "the PTX was produced by a newer toolchain than this driver supports"},
    {223, "CUDA_ERROR_JIT_COMPILATION_DISABLED",       "PTX JIT compilation is disabled"},
    {300, "CUDA_ERROR_INVALID_SOURCE",                 "the device kernel source is invalid"},
    {301, "CUDA_ERROR_FILE_NOT_FOUND",                 "a file was not found"},
    {302, "CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND", "a shared object symbol could not be resolved"},
    {303, "CUDA_ERROR_SHARED_OBJECT_INIT_FAILED",      "a shared object failed to initialize"},
    {304, "CUDA_ERROR_OPERATING_SYSTEM",               "an operating-system call failed (device nodes, permissions, sandbox)"},
    {400, "CUDA_ERROR_INVALID_HANDLE",                 "a resource handle was invalid"},
    {401, "CUDA_ERROR_ILLEGAL_STATE",                  "a resource is not in a valid state for the operation"},
    {500, "CUDA_ERROR_NOT_FOUND",                      "a named symbol was not found"},
    {600, "CUDA_ERROR_NOT_READY",                      "asynchronous work has not completed yet"},
    {700, "CUDA_ERROR_ILLEGAL_ADDRESS",                "a kernel accessed an invalid memory address"},
    {701, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",        "the launch asked for more resources than the device has"},
    {702, "CUDA_ERROR_LAUNCH_TIMEOUT",                 "a kernel ran past the watchdog time limit"},
    {719, "CUDA_ERROR_LAUNCH_FAILED",                  "a kernel failed while running"},
    {800, "CUDA_ERROR_NOT_PERMITTED",                  "the operation is not permitted"},
    {801, "CUDA_ERROR_NOT_SUPPORTED",                  "the operation is not supported on this system or device"},
    {802, "CUDA_ERROR_SYSTEM_NOT_READY",               "the system is not ready (for example, fabric manager not running)"},
    {803, "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",         "the user-mode driver (libcuda) and the kernel driver versions differ"},
    {804, "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", "forward-compatibility libraries are in use but this GPU does not support them"},
    {805, "CUDA_ERROR_MPS_CONNECTION_FAILED",          "the MPS client could not connect to the MPS control daemon or server"},
    {806, "CUDA_ERROR_MPS_RPC_FAILURE",                "the remote procedure call between the MPS server and client failed"},
    {807, "CUDA_ERROR_MPS_SERVER_NOT_READY",           "the MPS server is not ready to accept clients"},
    {808, "CUDA_ERROR_MPS_MAX_CLIENTS_REACHED",        "the MPS server has reached its maximum number of clients"},
    {909, "CUDA_ERROR_TIMEOUT",                        "a wait operation timed out"},
    {914, "CUDA_ERROR_INVALID_RESOURCE_TYPE",          "the device resource type is invalid"},
    {915, "CUDA_ERROR_INVALID_RESOURCE_CONFIGURATION", "the device resources cannot be combined in this configuration"},
    {999, "CUDA_ERROR_UNKNOWN",                        "an unknown internal error occurred"},
};
// clang-format on

static_assert(std::ranges::is_sorted(k_cuda_errors, {}, &CudaErrorInfo::code));

} // namespace

std::span<const CudaErrorInfo> cuda_error_table() {
  return k_cuda_errors;
}

const CudaErrorInfo* find_cuda_error(int code) {
  const auto* it = std::ranges::lower_bound(k_cuda_errors, code, {}, &CudaErrorInfo::code);
  return it != std::end(k_cuda_errors) && it->code == code ? it : nullptr;
}

} // namespace cudadiag::cuda_api
