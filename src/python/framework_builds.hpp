#pragma once
// Which CUDA the Python frameworks installed in an environment were built for, from plain files
// (nothing is imported): torch/version.py's `cuda`, TensorFlow's build_info.py `cuda_version`, the
// CUDA major in the names of JAX's plugins and CuPy's wheels, and the release of the ptxas Triton
// compiles with (its bundled triton/backends/nvidia/bin/ptxas and ptxas-blackwell, or the file
// TRITON_PTXAS_PATH / TRITON_PTXAS_BLACKWELL_PATH names instead, as Triton picks it), read from the
// binary's version string without running it. A framework built without CUDA (torch's
// `cuda = None`) or whose build is not written in a file is not listed.
// The GPU code a framework carries: TensorFlow's build_info.py `cuda_compute_capabilities` (read
// here); the fatbinaries of torch's torch/lib/libtorch_cuda.so and of JAX's PJRT plugin
// (jax_plugins/xla_cudaNN/xla_cuda_plugin.so), named here and read by read_framework_gpu_code only
// when a GPU is known (on the H200 host: 1.1 ms warm, 465 ms cold for torch 2.11's 456 MB library).

#include "core/environment.hpp"
#include "elf/gpu_code.hpp"
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
  // The GPU code its kernels were built as (sm_80, compute_90, ...); nullopt when unknown or not
  // read yet. gpu_code_source names the file it comes (or will come) from; gpu_code_problem why
  // that file could not be read, or what part of it was unreadable.
  std::optional<std::vector<elf::GpuCode>> gpu_code = std::nullopt;
  std::string gpu_code_source = {};
  std::string gpu_code_problem = {};
};

// Reads the fatbinaries each framework's gpu_code_source names (torch's libtorch_cuda.so) into
// gpu_code; frameworks whose code is already known (TensorFlow's list) or who name no library are
// left as they are.
void read_framework_gpu_code(std::vector<FrameworkBuild>& frameworks);

// The code a name like "sm_90a", "compute_90" or "sm_100f" denotes; nullopt for anything else.
std::optional<elf::GpuCode> gpu_code_from_name(std::string_view name);

// `env` supplies Triton's overrides (TRITON_PTXAS_PATH, TRITON_PTXAS_BLACKWELL_PATH).
std::vector<FrameworkBuild> framework_builds(const std::vector<std::string>& site_dirs,
                                             const std::vector<Distribution>& installed,
                                             const Environment& env);

// The value of `key` in a Python file's `KEY = 'VALUE'`, `KEY: Optional[str] = 'VALUE'`,
// `'KEY': 'VALUE'` (in a dict literal) or `('KEY', 'VALUE')` (a pair, as TensorFlow's OrderedDict);
// nullopt when absent or not a string (None).
std::optional<std::string> python_string_assignment(std::string_view text, std::string_view key);

// The same for a list of string literals (`'KEY': ['sm_60', 'compute_90']`); nullopt when absent or
// not a list of strings.
std::optional<std::vector<std::string>> python_string_list_assignment(std::string_view text,
                                                                      std::string_view key);

} // namespace cudadiag::python
