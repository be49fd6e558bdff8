#include "linkage/framework_import.hpp"

#include "core/filesystem.hpp"

#include <algorithm>

namespace cudadiag::linkage {

bool try_preload(FrameworkImport& import_model, FrameworkPreload preload, loader::Closure& loaded,
                 const loader::SearchSetting& setting, loader::ObjectStore& store) {
  bool opened = false;
  if (preload.path.empty()) {
    preload.outcome = "not found";
  } else {
    const auto* file = store.open(preload.path);
    const bool already = file != nullptr &&
                         std::any_of(loaded.objects.begin(), loaded.objects.end(),
                                     [&](const loader::LoadedObject& object) { return object.file == file; });
    auto trial = loader::build_closure(preload.path, loader::Route::preloaded, fs::parent(preload.path),
                                       import_model.load_order, setting, store, loader::SymbolCheck::skip);
    if (trial.loads()) {
      preload.outcome = already ? "already loaded" : "loaded";
      import_model.load_order.push_back(preload.path);
      loaded = std::move(trial);
      opened = true;
    } else {
      preload.outcome = "fails: " + dlerror_text(trial);
    }
  }
  import_model.preloads.push_back(std::move(preload));
  return opened;
}

std::string dlerror_text(const loader::Closure& closure) {
  if (closure.root_error) {
    return *closure.root_error;
  }
  if (!closure.missing.empty()) {
    return closure.missing.front().name + ": cannot open shared object file: No such file or directory";
  }
  if (!closure.broken.empty()) {
    return closure.broken.front().path + ": " + closure.broken.front().error;
  }
  if (!closure.missing_versions.empty()) {
    const auto& missing = closure.missing_versions.front();
    return closure.objects[missing.bound].path + ": version `" + missing.version +
           "' not found (required by " + closure.objects[missing.needed_by].path + ")";
  }
  if (!closure.unresolved.empty()) {
    const auto& symbol = closure.unresolved.front();
    return closure.objects[symbol.needed_by].path + ": undefined symbol: " + symbol.symbol +
           (symbol.version.empty() ? "" : ", version " + symbol.version);
  }
  return {};
}

loader::LoadOutcome framework_outcome(const loader::Closure& closure,
                                      const std::optional<FrameworkImport>& import_model) {
  return import_model && import_model->import_error ? loader::LoadOutcome::fails : closure.outcome();
}

std::string framework_failure(const loader::Closure& closure,
                              const std::optional<FrameworkImport>& import_model) {
  if (import_model && import_model->import_error) {
    return import_model->statement + " raises before the library is loaded: " + *import_model->import_error;
  }
  return closure.failure();
}

} // namespace cudadiag::linkage
