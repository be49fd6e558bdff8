#include "linkage/jax_import.hpp"

#include "core/filesystem.hpp"

#include <array>
#include <string_view>

namespace cudadiag::linkage {
namespace {

struct Load {
  std::string_view module;
  std::string_view file;
};

// _load_nvidia_libraries of jax-cuda12-pjrt and jax-cuda13-pjrt 0.11.2 (the same list in both), in
// its order (each _load call's names in turn).
constexpr std::array<Load, 19> k_loads = {{
    {"cuda_runtime", "libcudart.so.12"},
    {"cu13", "libcudart.so.13"},
    {"cuda_nvrtc", "libnvrtc.so.12"},
    {"cu13", "libnvrtc.so.13"},
    {"cublas", "libcublas.so.12"},
    {"cublas", "libcublasLt.so.12"},
    {"cu13", "libcublas.so.13"},
    {"cu13", "libcublasLt.so.13"},
    {"nccl", "libnccl.so.2"},
    {"cuda_cupti", "libcupti.so.12"},
    {"cu13", "libcupti.so.13"},
    {"cusparse", "libcusparse.so.12"},
    {"cu13", "libcusparse.so.12"},
    {"cusolver", "libcusolver.so.11"},
    {"cu13", "libcusolver.so.12"},
    {"cufft", "libcufft.so.11"},
    {"cu13", "libcufft.so.12"},
    {"nvshmem", "libnvshmem_host.so.3"},
    {"cudnn", "libcudnn.so.9"},
}};

// <entry>/nvidia/<module> of the first sys.path entry that has it: nvidia.<module>.__path__[0].
std::string module_directory(std::string_view module, const std::vector<std::string>& sys_path) {
  for (const auto& entry : sys_path) {
    const auto directory = fs::join(entry, "nvidia/" + std::string(module));
    if (!entry.empty() && fs::is_directory(directory)) {
      return directory;
    }
  }
  return {};
}

} // namespace

FrameworkImport model_jax_import(const std::string& plugin_package, const std::vector<std::string>& sys_path,
                                 const loader::SearchSetting& setting, loader::ObjectStore& store) {
  FrameworkImport result;
  result.statement = "jax.devices()";
  result.model = "jax_plugins/" + fs::basename(plugin_package) + "/__init__.py of jax-cudaNN-pjrt 0.11.2";
  result.branch =
      "the plugin's initialize() opens each NVIDIA library it lists from the nvidia package's own "
      "directory, passing over what is missing or fails";
  loader::Closure loaded;
  for (const auto& load : k_loads) {
    FrameworkPreload preload;
    preload.folder = std::string(load.module);
    preload.pattern = std::string(load.file);
    preload.required = false;
    if (const auto directory = module_directory(load.module, sys_path); !directory.empty()) {
      const auto path = fs::join(directory, "lib/" + std::string(load.file));
      if (fs::exists(path)) {
        preload.path = path;
      }
    }
    try_preload(result, std::move(preload), loaded, setting, store);
  }
  return result;
}

} // namespace cudadiag::linkage
