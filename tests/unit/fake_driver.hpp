#pragma once
// Shared by the worker and driver-probe tests: the environment in which the fake libcuda
// (tests/fixtures/fake_libcuda.c) behaves as asked.

#include "core/environment.hpp"

#include <string>
#include <utility>
#include <vector>

namespace cudadiag::testing {

// This process's environment with the fake driver's variables replaced by `variables`.
inline Environment fake_driver_env(const std::vector<std::pair<std::string, std::string>>& variables = {}) {
  auto env = Environment::capture();
  for (const char* name : {"CUDADIAG_FAKE_CUDA", "CUDADIAG_FAKE_CUDA_VERSION", "CUDADIAG_FAKE_CUDA_DEVICES",
                           "CUDADIAG_FAKE_CUDA_MISSING"}) {
    env.unset(name);
  }
  for (const auto& [name, value] : variables) {
    env.set(name, value);
  }
  return env;
}

} // namespace cudadiag::testing
