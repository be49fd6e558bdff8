#pragma once
// What a Python framework's own CUDA library loads: the dependency closure (closure.hpp) of the
// library the framework opens, with what it opens first, predicted from the files. It answers
// `cudadiag find --for torch cudnn`: the cuDNN torch binds, which may not be the copy CUDA Python
// (cuda-pathfinder) would pick.
//
// The model, per framework (the primary Python environment's installation):
// - torch: `import torch` opens torch/lib/libtorch_global_deps.so with RTLD_GLOBAL, then torch._C,
//   whose dependencies include torch/lib/libtorch_cuda.so; each reaches the CUDA libraries through
//   its DT_RUNPATH ($ORIGIN/../../nvidia/<component>/lib in the wheels) and the loader's search.
//   Root: libtorch_cuda.so; preload: libtorch_global_deps.so when it exists. (torch's fallback,
//   _preload_cuda_deps, runs only when that first load fails: the closure then shows what is missing.)
// - JAX (jax-cudaNN-pjrt): jax opens jax_plugins/xla_cudaNN/xla_cuda_plugin.so; root: that file.
// Frameworks that load through cuda-pathfinder (CuPy, cuda.core, numba-cuda) need no model: their
// answer is the report's `selected`.

#include "core/environment.hpp"
#include "core/expected.hpp"
#include "discovery/discovery.hpp"
#include "linkage/closure.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::linkage {

struct FrameworkLoad {
  std::string framework; // the distribution ("torch", "jax-cuda13-pjrt")
  std::string version;
  std::string library;   // the root: the framework's CUDA library
  std::vector<std::string> preloads;
  Closure closure;
  std::shared_ptr<ObjectStore> files; // keeps closure.objects' files alive
};

// The frameworks framework_load models, as a user names them ("torch", "jax").
std::vector<std::string_view> modelled_frameworks();

// The closure of `framework`'s CUDA library in `discovery`'s primary Python environment. An Error
// (a sentence) when the framework is not modelled, not installed there, or installed without its
// CUDA library.
Expected<FrameworkLoad> framework_load(const discovery::DiscoveryResult& discovery, std::string_view framework,
                                       const Environment& env, const SystemLayout& layout);

// The object of `closure` that was needed or opened under one of `names` (a component's SONAMEs);
// nullptr when none was.
const LoadedObject* object_named(const Closure& closure, const std::vector<std::string_view>& names);

} // namespace cudadiag::linkage
