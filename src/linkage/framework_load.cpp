#include "linkage/framework_load.hpp"

#include "core/filesystem.hpp"
#include "linkage/jax_import.hpp"
#include "python/pep508.hpp"

#include <algorithm>
#include <array>

namespace cudadiag::linkage {
namespace {

// The entry of discovery.frameworks that carries `framework`'s CUDA library (its gpu_code_source).
const python::FrameworkBuild* build_with_library(const discovery::DiscoveryResult& discovery,
                                                 std::string_view framework) {
  for (const auto& build : discovery.frameworks) {
    const auto name = python::canonical_name(build.framework);
    const bool named =
        framework == "torch" ? name == "torch" : name.starts_with("jax-cuda") && name.ends_with("-pjrt");
    if (named && build.gpu_code_source.ends_with(".so")) {
      return &build;
    }
  }
  return nullptr;
}

} // namespace

std::vector<std::string_view> modelled_frameworks() {
  return {"torch", "jax"};
}

std::vector<std::string_view> installed_modelled_frameworks(const discovery::DiscoveryResult& discovery) {
  std::vector<std::string_view> installed;
  for (const auto framework : modelled_frameworks()) {
    if (build_with_library(discovery, framework) != nullptr) {
      installed.push_back(framework);
    }
  }
  return installed;
}

std::vector<std::string> modelled_sys_path(const discovery::DiscoveryResult& discovery,
                                           const Environment& env) {
  std::vector<std::string> path;
  if (const auto python_path = env.non_empty("PYTHONPATH")) {
    for (auto& entry : split_search_path(*python_path)) {
      if (!entry.empty()) {
        path.push_back(std::move(entry));
      }
    }
  }
  for (const auto& environment : discovery.python.environments) {
    if (!environment.primary) {
      continue;
    }
    const auto& sites = environment.site_dirs;
    const bool user_site_listed = std::find(sites.begin(), sites.end(), environment.user_site) != sites.end();
    if (!environment.user_site.empty() && user_site_listed) {
      path.push_back(environment.user_site);
    }
    for (const auto& site : sites) {
      if (site != environment.user_site) {
        path.push_back(site);
      }
    }
  }
  return path;
}

Expected<FrameworkLoad> framework_load(const discovery::DiscoveryResult& discovery,
                                       std::string_view framework, const Environment& env,
                                       const SystemLayout& layout) {
  return framework_load(discovery, framework, env, layout, std::make_shared<loader::ObjectStore>());
}

Expected<FrameworkLoad> framework_load(const discovery::DiscoveryResult& discovery,
                                       std::string_view framework, const Environment& env,
                                       const SystemLayout& layout,
                                       std::shared_ptr<loader::ObjectStore> files) {
  const auto modelled = modelled_frameworks();
  if (std::find(modelled.begin(), modelled.end(), framework) == modelled.end()) {
    return Error{"--for knows torch and jax (CuPy, cuda.core and numba-cuda load through cuda-pathfinder: "
                 "plain `cudadiag find NAME` is their answer)"};
  }
  const auto* build = build_with_library(discovery, framework);
  if (build == nullptr) {
    return Error{std::string(framework) +
                 (framework == "torch"
                      ? " with CUDA (torch/version.py's cuda and torch/lib/libtorch_cuda.so)"
                      : "'s CUDA plugin (jax-cudaNN-pjrt with jax_plugins/xla_cudaNN/xla_cuda_plugin.so)") +
                 " is not installed in the primary Python environment"};
  }
  FrameworkLoad load;
  load.framework = build->framework;
  load.version = build->version;
  load.library = build->gpu_code_source;
  load.files = std::move(files);
  const auto setting = loader::search_setting(env, layout, discovery.cache ? &*discovery.cache : nullptr);
  if (framework == "torch") {
    const auto global_deps = fs::join(fs::parent(load.library), "libtorch_global_deps.so");
    if (fs::is_regular_file(global_deps)) {
      load.import_model = model_torch_import(global_deps, build->version, build->cuda,
                                             modelled_sys_path(discovery, env), setting, *load.files);
      load.preloads = load.import_model->load_order;
    }
  } else {
    load.import_model =
        model_jax_import(fs::parent(load.library), modelled_sys_path(discovery, env), setting, *load.files);
    load.preloads = load.import_model->load_order;
  }
  load.closure =
      loader::build_closure(load.library, loader::Route::root, fs::parent(load.library), load.preloads,
                            setting, *load.files, loader::SymbolCheck::check_in_parallel);
  return load;
}

const loader::LoadedObject* object_named(const loader::Closure& closure,
                                         const std::vector<std::string_view>& names) {
  for (const auto& object : closure.objects) {
    for (const auto& name : object.names) {
      const auto base = fs::basename(name);
      if (std::find(names.begin(), names.end(), base) != names.end()) {
        return &object;
      }
    }
  }
  return nullptr;
}

} // namespace cudadiag::linkage
