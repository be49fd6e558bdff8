#pragma once
// What a Python framework opens by itself before its CUDA library, and how it went: the shared
// shape of the per-framework models (torch_import.hpp: torch/__init__.py's global deps and sys.path
// globs; jax_import.hpp: the CUDA plugin's _load_nvidia_libraries), and the trial load they share.

#include "loader/closure.hpp"

#include <optional>
#include <string>
#include <vector>

namespace cudadiag::linkage {

// One library the framework tries to open first, and what came of it.
struct FrameworkPreload {
  std::string folder;   // where it is looked for: torch's "cuda_runtime", JAX's nvidia module "cu13"
  std::string pattern;  // torch: the glob ("libcudart.so.*[0-9]"); JAX: the file name ("libcudart.so.13")
  bool required = true; // torch: a miss ends the preloads (nvToolsExt: false); JAX: misses are ignored
  std::string path;     // the file it opens; "" when none was found
  // torch: the other files the glob matched under the same sys.path entry, in the order glob lists them.
  std::vector<std::string> passed_over;
  // "loaded", "already loaded" (the same file is in the process), "not found", or "fails: <dlerror>".
  std::string outcome;
};

struct FrameworkImport {
  std::string statement; // what runs the code: "import torch", "jax.devices()" (the plugin's initialize())
  std::string model;     // whose code the prediction follows: "torch 2.11's torch/__init__.py", ...
  std::string branch;    // one sentence: which way that code goes here, and why
  std::vector<FrameworkPreload> preloads; // in the order tried
  // What the process holds before the framework's CUDA library is loaded, in load order (paths).
  std::vector<std::string> load_order;
  // The statement raises before the CUDA library is loaded: the error, as Python shows it.
  std::optional<std::string> import_error;
};

// Opens `preload.path` (when set) after `import_model.load_order`, as ctypes.CDLL would: appends the
// preload with its outcome and, when it opens, the path to load_order and its closure to `loaded`.
// Whether it opens is judged by its dependencies alone (the symbols are checked once, in the
// framework's closure). Returns whether it opened.
bool try_preload(FrameworkImport& import_model, FrameworkPreload preload, loader::Closure& loaded,
                 const loader::SearchSetting& setting, loader::ObjectStore& store);

// Whether the framework's CUDA library is loaded: its own code gets that far (no import error) and
// `closure` (the library's, after those preloads) loads.
inline bool framework_loads(const loader::Closure& closure,
                            const std::optional<FrameworkImport>& import_model) {
  return closure.loads() && !(import_model && import_model->import_error);
}

// glibc's dlerror() for the first thing that stops `closure` loading ("" when it loads).
std::string dlerror_text(const loader::Closure& closure);

// The outcome of the framework's load of its CUDA library, as every answer carries one: fails when
// its own code raises first (the library is never loaded), else the closure's (loads, fails,
// crashes: SIGBUS on a truncated file). `framework_failure` says why ("" when it loads): the import
// error, else glibc's words for the closure (loader::Closure::failure()).
loader::LoadOutcome framework_outcome(const loader::Closure& closure,
                                      const std::optional<FrameworkImport>& import_model);
std::string framework_failure(const loader::Closure& closure,
                              const std::optional<FrameworkImport>& import_model);

} // namespace cudadiag::linkage
