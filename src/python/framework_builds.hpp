#pragma once
// Which CUDA the Python frameworks installed in an environment were built for, from plain files
// (nothing is imported): torch/version.py's `cuda`, TensorFlow's build_info.py `cuda_version`, the
// CUDA major in the names of JAX's plugins and CuPy's wheels, and the release of the ptxas Triton
// compiles with (its bundled triton/backends/nvidia/bin/ptxas and ptxas-blackwell, or the file
// TRITON_PTXAS_PATH / TRITON_PTXAS_BLACKWELL_PATH names instead, as Triton picks it), read from the
// binary's version string without running it. A framework built without CUDA (torch's
// `cuda = None`) or whose build is not written in a file is not listed.

#include "core/environment.hpp"
#include "python/distributions.hpp"

#include <string>
#include <vector>

namespace cudadiag::python {

struct FrameworkBuild {
  std::string framework; // the distribution ("torch", "jax-cuda13-plugin", "cupy-cuda12x")
  std::string version;   // its version
  std::string cuda;      // "13.0" or "13" (a major alone when only the name says it)
  std::string source;    // the file or the name it was read from
  std::string tool;      // the compiler this entry describes ("ptxas", "ptxas-blackwell" for Triton); "" else
};

// `env` supplies Triton's overrides (TRITON_PTXAS_PATH, TRITON_PTXAS_BLACKWELL_PATH).
std::vector<FrameworkBuild> framework_builds(const std::vector<std::string>& site_dirs,
                                             const std::vector<Distribution>& installed, const Environment& env);

// The value of `key` in a Python file's `KEY = 'VALUE'`, `KEY: Optional[str] = 'VALUE'` or
// `'KEY': 'VALUE'` (in a dict literal); nullopt when absent or not a string (None).
std::optional<std::string> python_string_assignment(std::string_view text, std::string_view key);

} // namespace cudadiag::python
