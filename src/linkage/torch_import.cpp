#include "linkage/torch_import.hpp"

#include "core/filesystem.hpp"
#include "python/pep440.hpp"

#include <fnmatch.h>

#include <algorithm>

namespace cudadiag::linkage {
namespace {

// Which torch/__init__.py the model follows; each generation changed what is preloaded and when.
enum class Generation { torch_2_8, torch_2_9, torch_2_10, torch_2_11 };

Generation generation_of(std::string_view torch_version) {
  const auto version = python::parse_version(torch_version);
  if (!version) {
    return Generation::torch_2_11; // unknown: the newest behaviour
  }
  const auto& release = version->release;
  const auto major = release.front();
  const auto minor = release.size() > 1 ? release[1] : 0;
  if (major < 2 || (major == 2 && minor <= 8)) {
    return Generation::torch_2_8;
  }
  if (major == 2 && minor == 9) {
    return Generation::torch_2_9;
  }
  if (major == 2 && minor == 10) {
    return Generation::torch_2_10;
  }
  return Generation::torch_2_11;
}

std::string_view model_name(Generation generation) {
  switch (generation) {
  case Generation::torch_2_8: return "torch 2.8";
  case Generation::torch_2_9: return "torch 2.9";
  case Generation::torch_2_10: return "torch 2.10";
  case Generation::torch_2_11: return "torch 2.11";
  }
  return "torch";
}

struct Glob {
  std::string_view folder;
  std::string_view pattern;
  bool required = true;
};

// _preload_cuda_deps' list when global deps failed to load (and, from torch 2.10, also after it
// loaded), in its order.
std::vector<Glob> full_list(Generation generation, std::string_view cuda) {
  std::vector<Glob> globs;
  if (generation == Generation::torch_2_11) {
    globs.push_back({"cublas", "libcublasLt.so.*[0-9]"});
  }
  globs.insert(globs.end(), {{"cublas", "libcublas.so.*[0-9]"},
                             {"cudnn", "libcudnn.so.*[0-9]"},
                             {"cuda_nvrtc", "libnvrtc.so.*[0-9]"}});
  if (generation >= Generation::torch_2_10) {
    globs.push_back({"cuda_nvrtc", "libnvrtc-builtins.so.*[0-9]"});
  }
  globs.insert(globs.end(), {{"cuda_runtime", "libcudart.so.*[0-9]"},
                             {"cuda_cupti", "libcupti.so.*[0-9]"},
                             {"cufft", "libcufft.so.*[0-9]"},
                             {"curand", "libcurand.so.*[0-9]"},
                             {"nvjitlink", "libnvJitLink.so.*[0-9]"},
                             {"cusparse", "libcusparse.so.*[0-9]"},
                             {"cusparselt", "libcusparseLt.so.*[0-9]"},
                             {"cusolver", "libcusolver.so.*[0-9]"},
                             {"nccl", "libnccl.so.*[0-9]"}});
  if (generation >= Generation::torch_2_9) {
    globs.push_back({"nvshmem", "libnvshmem_host.so.*[0-9]"});
  }
  // torch 2.8 lists cuFile only for a CUDA 12+ build; later releases always.
  const bool cuda_11 = cuda.starts_with("11.") || cuda == "11";
  if (generation >= Generation::torch_2_9 || !cuda_11) {
    globs.push_back({"cufile", "libcufile.so.*[0-9]"});
  }
  if (generation >= Generation::torch_2_10) {
    globs.push_back({"nvtx", "libnvToolsExt.so.*[0-9]", false});
  }
  return globs;
}

// What is preloaded after global deps loaded with a cudart mapped.
std::vector<Glob> after_success_list(Generation generation, std::string_view cuda) {
  switch (generation) {
  case Generation::torch_2_8:
    return {{"cuda_nvrtc", "libnvrtc.so.*[0-9]"}, {"nvjitlink", "libnvJitLink.so.*[0-9]"}};
  case Generation::torch_2_9:
    return {{"cuda_nvrtc", "libnvrtc.so.*[0-9]"},
            {"cuda_nvrtc", "libnvrtc-builtins.so.*[0-9]"},
            {"nvjitlink", "libnvJitLink.so.*[0-9]"}};
  default: return full_list(generation, cuda);
  }
}

// The file one glob picks: the first sys.path entry with a match, its first match.
void pick(FrameworkPreload& preload, Generation generation, std::string_view cuda,
          const std::vector<std::string>& sys_path) {
  std::vector<std::string> directories_in_entry;
  for (const auto& entry : sys_path) {
    if (entry.empty()) {
      continue;
    }
    directories_in_entry = {fs::join(entry, "nvidia/" + preload.folder + "/lib")};
    if (generation >= Generation::torch_2_9 && !cuda.empty()) {
      directories_in_entry.push_back(
          fs::join(entry, "nvidia/cu" + std::string(cuda.substr(0, cuda.find('.'))) + "/lib"));
    }
    directories_in_entry.push_back(fs::join(entry, preload.folder + "/lib"));
    std::vector<std::string> matches;
    for (const auto& directory : directories_in_entry) {
      for (const auto& name : glob_in_directory_order(directory, preload.pattern)) {
        matches.push_back(fs::join(directory, name));
      }
    }
    if (!matches.empty()) {
      preload.path = matches.front();
      preload.passed_over.assign(matches.begin() + 1, matches.end());
      return;
    }
  }
}

class ImportModel {
public:
  ImportModel(std::string_view torch_version, std::string_view cuda, const std::vector<std::string>& sys_path,
              const loader::SearchSetting& setting, loader::ObjectStore& store)
      : m_generation(generation_of(torch_version)), m_cuda(cuda), m_sys_path(sys_path), m_setting(setting),
        m_store(store) {}

  FrameworkImport run(const std::string& global_deps) {
    m_import.statement = "import torch";
    m_import.model = model_name(m_generation);
    const auto first = loader::build_closure(global_deps, loader::Route::root, fs::parent(global_deps), {},
                                             m_setting, m_store);
    if (first.loads()) {
      m_import.load_order.push_back(global_deps);
      after_success(first);
      return std::move(m_import);
    }
    after_failure(global_deps, dlerror_text(first));
    return std::move(m_import);
  }

private:
  // Step 2: the preloads after global deps loaded, when /proc/self/maps names a cudart.
  void after_success(const loader::Closure& loaded) {
    const std::string_view marker =
        m_generation == Generation::torch_2_8 ? "nvidia/cuda_runtime/lib/libcudart.so" : "libcudart.so";
    bool mapped = false;
    for (const auto& object : loaded.objects) {
      mapped = mapped || object.file->realpath.find(marker) != std::string::npos;
    }
    if (!mapped) {
      m_import.branch = "libtorch_global_deps.so loaded and /proc/self/maps names no \"" +
                        std::string(marker) + "\": nothing is preloaded";
      return;
    }
    m_import.branch = "libtorch_global_deps.so loaded with a cudart (\"" + std::string(marker) +
                      "\" in /proc/self/maps): _preload_cuda_deps runs, its first failure ending it silently";
    m_state = loaded;
    for (const auto& glob : after_success_list(m_generation, m_cuda)) {
      if (!preload(glob) && glob.required) {
        return;
      }
    }
  }

  // Step 3: global deps failed; preload everything (a failure is `import torch`'s), then retry.
  void after_failure(const std::string& global_deps, const std::string& error) {
    const auto list = full_list(m_generation, m_cuda);
    const bool names_a_listed_library = std::any_of(list.begin(), list.end(), [&](const Glob& glob) {
      const auto pattern = glob.pattern.substr(0, glob.pattern.find('.'));
      return error.find(pattern) != std::string::npos;
    });
    if (!names_a_listed_library) {
      m_import.branch =
          "libtorch_global_deps.so fails to load, naming no library torch preloads: the error is raised";
      m_import.import_error = "OSError: " + error;
      return;
    }
    m_import.branch = "libtorch_global_deps.so fails to load (" + error +
                      "): torch preloads its CUDA libraries from sys.path, then loads it again";
    for (const auto& glob : list) {
      if (!preload(glob) && glob.required) {
        const auto& last = m_import.preloads.back();
        m_import.import_error = last.path.empty()
                                    ? "ValueError: " + last.pattern + " not found in the system path"
                                    : "OSError: " + last.outcome.substr(std::string_view("fails: ").size());
        return;
      }
    }
    m_import.load_order.push_back(global_deps);
    const auto retry = loader::build_closure(
        global_deps, loader::Route::preloaded, fs::parent(global_deps),
        std::vector<std::string>(m_import.load_order.begin(), m_import.load_order.end() - 1), m_setting,
        m_store);
    if (!retry.loads()) {
      m_import.import_error = "OSError: " + dlerror_text(retry);
    }
  }

  // One glob: pick the file, load it after what is loaded. False when nothing matched or it fails.
  bool preload(const Glob& glob) {
    FrameworkPreload preload;
    preload.folder = glob.folder;
    preload.pattern = glob.pattern;
    preload.required = glob.required;
    pick(preload, m_generation, m_cuda, m_sys_path);
    return try_preload(m_import, std::move(preload), m_state, m_setting, m_store);
  }

  Generation m_generation;
  std::string m_cuda;
  const std::vector<std::string>& m_sys_path;
  const loader::SearchSetting& m_setting;
  loader::ObjectStore& m_store;
  loader::Closure m_state; // what is loaded so far
  FrameworkImport m_import;
};

} // namespace

FrameworkImport model_torch_import(const std::string& global_deps, std::string_view torch_version,
                                   std::string_view cuda, const std::vector<std::string>& sys_path,
                                   const loader::SearchSetting& setting, loader::ObjectStore& store) {
  return ImportModel(torch_version, cuda, sys_path, setting, store).run(global_deps);
}

std::vector<std::string> glob_in_directory_order(const std::string& directory, std::string_view pattern) {
  std::vector<std::string> names;
  const std::string wanted(pattern);
  auto listed = fs::list_directory_in_order(directory);
  if (!listed) {
    return names; // no such directory (or unreadable): glob matches nothing there
  }
  for (auto& name : *listed) {
    if (!name.starts_with('.') && ::fnmatch(wanted.c_str(), name.c_str(), 0) == 0) {
      names.push_back(std::move(name));
    }
  }
  return names;
}

} // namespace cudadiag::linkage
