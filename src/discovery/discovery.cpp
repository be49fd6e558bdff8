#include "discovery/discovery.hpp"

#include "core/filesystem.hpp"
#include "discovery/candidate_inspection.hpp"
#include "discovery/selection.hpp"
#include "loader/ld_so_cache.hpp"
#include "probes/search_strategies.hpp"

#include <algorithm>

namespace cudadiag::discovery {

std::string_view to_string(ComponentStatus status) {
  switch (status) {
  case ComponentStatus::found: return "found";
  case ComponentStatus::not_found: return "not_found";
  case ComponentStatus::error: return "error";
  }
  return "error";
}

const Candidate* ComponentResult::selected_candidate() const {
  return selected ? &candidates[selected->candidate] : nullptr;
}

const Candidate* ComponentResult::loader_candidate() const {
  return loader ? &candidates[loader->candidate] : nullptr;
}

namespace {

using probes::ComponentSpec;

struct Searcher {
  const probes::SearchInputs& inputs;
  const std::vector<std::unique_ptr<probes::SearchStrategy>>& strategies;

  [[nodiscard]] probes::SearchOutput run_strategies(const ComponentSpec& spec) const {
    probes::SearchOutput out;
    for (const auto& strategy : strategies) {
      if (strategy->applies_to(spec)) {
        strategy->search(spec, inputs, out);
      }
    }
    return out;
  }

  [[nodiscard]] ComponentResult resolve(const ComponentSpec& spec, const std::optional<std::string>& canary_root) const {
    auto out = run_strategies(spec);
    if (spec.uses_ctk_root_canary && canary_root) {
      out.trace.push_back("system-ctk-root: toolkit root " + *canary_root + " derived from where cudart is found");
      probes::search_toolkit_root(spec, inputs, *canary_root, "system-ctk-root", PathfinderStep::ctk_root, out);
    }
    ComponentResult result;
    result.spec = &spec;
    result.candidates = build_candidates(spec, out.sightings, inputs.layout);
    result.trace = std::move(out.trace);
    select(result);
    return result;
  }
};

// cuda-pathfinder's CTK-root canary: the toolkit root above the cudart that a plain dlopen finds,
// as dlinfo reports it (the directory resolved, the SONAME kept).
std::optional<std::string> canary_root(const ComponentResult& cudart) {
  if (!cudart.loader) {
    return std::nullopt;
  }
  const auto& path = cudart.loader->via.path;
  auto dir = fs::real_path(fs::parent(path));
  const auto origin_path = dir ? fs::join(*dir, fs::basename(path)) : path;
  return probes::derive_toolkit_root(origin_path);
}

LdCacheStatus load_ld_cache(const SystemLayout& layout, std::optional<loader::LdSoCache>& cache) {
  LdCacheStatus status;
  status.path = layout.ld_so_cache;
  auto parsed = loader::read_ld_so_cache(layout.ld_so_cache);
  if (!parsed) {
    status.error = parsed.error().message;
    return status;
  }
  status.entries = parsed->entries().size();
  cache = std::move(*parsed);
  return status;
}

bool wanted(const DiscoveryOptions& options, const ComponentSpec& spec) {
  return options.only.empty() ||
         std::find(options.only.begin(), options.only.end(), std::string(spec.name)) != options.only.end();
}

} // namespace

DiscoveryResult discover(const Environment& env, const DiscoveryOptions& options) {
  DiscoveryResult result;
  if (options.python_exe) {
    auto explicit_discovery = python::discover_python_environments_with(env, *options.python_exe, std::chrono::seconds{5}, options.python_search);
    if (explicit_discovery) {
      result.python = std::move(*explicit_discovery);
    } else {
      result.python_error = explicit_discovery.error().message;
      result.python = python::discover_python_environments(env, options.python_search);
    }
  } else {
    result.python = python::discover_python_environments(env, options.python_search);
  }

  std::optional<loader::LdSoCache> cache;
  result.ld_cache = load_ld_cache(options.layout, cache);

  const probes::SearchInputs inputs{env, options.layout, result.python, cache ? &*cache : nullptr};
  const auto strategies = probes::all_strategies();
  const Searcher searcher{inputs, strategies};

  // cudart is resolved at most once: for its own row and for the canary's toolkit root.
  const auto* cudart_spec = probes::find_component("cudart", probes::ComponentKind::dynamic_lib);
  std::optional<ComponentResult> cudart;
  std::optional<std::optional<std::string>> canary; // computed on first need
  for (const auto& spec : probes::catalog()) {
    if (!wanted(options, spec)) {
      continue;
    }
    if ((&spec == cudart_spec || spec.uses_ctk_root_canary) && !cudart) {
      cudart = searcher.resolve(*cudart_spec, std::nullopt);
    }
    if (spec.uses_ctk_root_canary && !canary) {
      canary = canary_root(*cudart);
    }
    result.components.push_back(&spec == cudart_spec ? *cudart
                                                     : searcher.resolve(spec, spec.uses_ctk_root_canary ? *canary
                                                                                                         : std::nullopt));
  }
  return result;
}

} // namespace cudadiag::discovery
