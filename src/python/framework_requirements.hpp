#pragma once
// The CUDA pins of the Python frameworks installed in an environment (torch, JAX and its CUDA
// plugins, CuPy, TensorFlow, Triton, vLLM, numba-cuda, CUDA Python, nvmath-python, the cuda-toolkit
// meta-distribution), checked against what is installed there: each framework's Requires-Dist on
// nvidia-*, cuda-*, triton, torch, jax* and cupy-* distributions whose marker holds in the
// environment — with the extras other requirements in the environment ask for (torch's
// cuda-toolkit[cublas,...]) — must be installed in a version its specifier allows.

#include "python/distributions.hpp"
#include "python/pep508.hpp"
#include "python/python_environments.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudadiag::python {

// One CUDA requirement of a framework, as checked in the environment.
struct FrameworkRequirement {
  std::string framework;                    // the distribution that asks ("torch")
  std::string framework_version;            // "2.11.0"
  std::string requirement;                  // the Requires-Dist text
  std::string dependency;                   // the distribution asked for ("nvidia-cudnn-cu13")
  std::string specifier;                    // "==9.19.0.56"; "" for any version
  std::optional<std::string> installed;     // its installed version; nullopt when not installed
  std::string installed_at;                 // its dist-info directory, when installed
  std::optional<std::string> through_extra; // the extra that asks for it, when one does
  bool met = false;                         // installed in a version the specifier allows
};

// Whether `canonical` (a PEP 503 name) is a framework whose requirements are checked.
bool is_framework(std::string_view canonical);

// The marker variables of `environment` on this machine (Linux; its CPU; CPython; the
// environment's Python version when known).
MarkerEnvironment marker_environment(const PythonEnvironment& environment);

// Every CUDA requirement of a framework in `installed`, met or not, in the order of the
// distributions and of their Requires-Dist lines. Requirements whose marker does not hold, or cannot
// be evaluated here (a variable the environment lacks), are not judged and not listed.
std::vector<FrameworkRequirement> checked_framework_requirements(const std::vector<Distribution>& installed,
                                                                 const MarkerEnvironment& markers);

// The requirements of checked_framework_requirements that are not met.
std::vector<FrameworkRequirement> unmet_framework_requirements(const std::vector<Distribution>& installed,
                                                               const MarkerEnvironment& markers);

} // namespace cudadiag::python
