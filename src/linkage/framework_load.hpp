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
//   Root: libtorch_cuda.so; before it, what torch/__init__.py loads by itself (torch_import.hpp):
//   libtorch_global_deps.so and, depending on the release and on how that load went, the CUDA
//   libraries its _preload_cuda_deps globs pick from sys.path.
// - JAX (jax-cudaNN-pjrt): the plugin's initialize() opens the NVIDIA wheels' libraries it lists
//   (jax_import.hpp), then jax_plugins/xla_cudaNN/xla_cuda_plugin.so; root: that file.
// Frameworks that load through cuda-pathfinder (CuPy, cuda.core, numba-cuda) need no model: their
// answer is the report's `selected`.

#include "core/environment.hpp"
#include "core/expected.hpp"
#include "discovery/discovery.hpp"
#include "linkage/torch_import.hpp"
#include "loader/closure.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::linkage {

struct FrameworkLoad {
  std::string framework; // the distribution ("torch", "jax-cuda13-pjrt")
  std::string version;
  std::string library;                         // the root: the framework's CUDA library
  std::vector<std::string> preloads;           // opened before the root, in order
  std::optional<FrameworkImport> import_model; // how the framework's own code came to those preloads
  loader::Closure closure;
  std::shared_ptr<loader::ObjectStore> files; // keeps closure.objects' files alive

  // Whether the framework's CUDA library loads, as predicted (and, for torch, `import torch` gets there).
  [[nodiscard]] bool loads() const { return framework_loads(closure, import_model); }
};

// The frameworks framework_load models, as a user names them ("torch", "jax").
std::vector<std::string_view> modelled_frameworks();

// The closure of `framework`'s CUDA library in `discovery`'s primary Python environment. An Error
// (a sentence) when the framework is not modelled, not installed there, or installed without its
// CUDA library.
Expected<FrameworkLoad> framework_load(const discovery::DiscoveryResult& discovery,
                                       std::string_view framework, const Environment& env,
                                       const SystemLayout& layout);
// The same with files shared with other closures of the run (`files` holds them).
Expected<FrameworkLoad> framework_load(const discovery::DiscoveryResult& discovery,
                                       std::string_view framework, const Environment& env,
                                       const SystemLayout& layout,
                                       std::shared_ptr<loader::ObjectStore> files);

// The frameworks of `discovery`'s primary Python environment that framework_load models and that
// are installed with their CUDA library ("torch", "jax"), in that order.
std::vector<std::string_view> installed_modelled_frameworks(const discovery::DiscoveryResult& discovery);

// Python's sys.path in the primary environment, as far as the files tell: PYTHONPATH's entries,
// the user site, the other site directories.
std::vector<std::string> modelled_sys_path(const discovery::DiscoveryResult& discovery,
                                           const Environment& env);

// The object of `closure` that was needed or opened under one of `names` (a component's SONAMEs);
// nullptr when none was.
const loader::LoadedObject* object_named(const loader::Closure& closure,
                                         const std::vector<std::string_view>& names);

} // namespace cudadiag::linkage
