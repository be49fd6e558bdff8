// The libFuzzer entry point of one target: built once per target with
// -DCUDADIAG_FUZZ_TARGET=<function name in targets.hpp>.
#include "targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return cudadiag::fuzz::CUDADIAG_FUZZ_TARGET(data, size);
}
