#include "discovery/discovery.hpp"

#include "core/filesystem.hpp"
#include "core/once_flag.hpp"
#include "core/parallel.hpp"
#include "core/text.hpp"
#include "core/timeline.hpp"
#include "discovery/candidate_inspection.hpp"
#include "discovery/load_model.hpp"
#include "discovery/selection.hpp"
#include "loader/ld_so_cache.hpp"
#include "probes/search_strategies.hpp"

#include <algorithm>
#include <future>
#include <mutex>

namespace cudadiag::discovery {

std::string_view to_string(ComponentStatus status) {
  switch (status) {
  case ComponentStatus::found: return "found";
  case ComponentStatus::not_found: return "not_found";
  case ComponentStatus::error: return "error";
  }
  return "error";
}

std::optional<ComponentStatus> parse_component_status(std::string_view text) {
  for (const auto status : {ComponentStatus::found, ComponentStatus::not_found, ComponentStatus::error}) {
    if (to_string(status) == text) {
      return status;
    }
  }
  return std::nullopt;
}

const Candidate* ComponentResult::selected_candidate() const {
  return selected ? &candidates[selected->candidate] : nullptr;
}

const Candidate* ComponentResult::loader_candidate() const {
  return loader ? &candidates[loader->candidate] : nullptr;
}

namespace {

using probes::ComponentSpec;

// The searched names of `spec`'s CUDA Python declares, for the trace: "libcudart.so.13, libcudart.so.12".
std::string declared_names(const ComponentSpec& spec) {
  std::string names;
  for (const auto name : spec.file_names) {
    if (probes::cuda_python_declares(spec, name)) {
      names += (names.empty() ? "" : ", ") + std::string(name);
    }
  }
  return names;
}

// A library file seen under a name CUDA Python does not declare (an older SONAME, or a library it
// does not know) is no step of cuda-pathfinder's: its sightings leave every CUDA Python step, and
// the trace says once per name that only the loader and the frameworks take it.
void mark_not_supported_by_cuda_python(const ComponentSpec& spec, probes::SearchOutput& out) {
  if (spec.kind != probes::ComponentKind::dynamic_lib) {
    return;
  }
  std::vector<std::string> said;
  for (auto& sighting : out.sightings) {
    const auto name = sighting.file_name.empty() ? fs::basename(sighting.path) : sighting.file_name;
    if (probes::cuda_python_declares(spec, name)) {
      continue;
    }
    sighting.pathfinder_step = probes::PathfinderStep::none;
    if (std::find(said.begin(), said.end(), name) == said.end()) {
      said.push_back(name);
      out.trace.push_back(
          name + ": not supported by CUDA Python (" +
          (spec.cuda_python
               ? "cuda-pathfinder 1.9.1 declares " + declared_names(spec) + " for " + std::string(spec.name)
               : "cuda-pathfinder 1.9.1 does not know " + std::string(spec.name)) +
          "): only the native loader and the frameworks load it");
    }
  }
}

struct Searcher {
  const probes::SearchInputs& inputs;
  const std::vector<std::unique_ptr<probes::SearchStrategy>>& strategies;

  [[nodiscard]] probes::SearchOutput run_strategies(const ComponentSpec& spec) const {
    probes::SearchOutput out;
    for (const auto& strategy : strategies) {
      if (strategy->applies_to(spec)) {
        const timeline::Span span("strategy", strategy->name());
        strategy->search(spec, inputs, out);
      } else {
        if (spec.packaging == probes::Packaging::driver) {
          out.trace.push_back(
              concat(strategy->name(), ": not searched: a driver library is found only through the loader"));
        } else {
          out.trace.push_back(concat(strategy->name(), ": not searched: this step does not apply to a ",
                                     probes::to_string(spec.kind)));
        }
      }
    }
    return out;
  }

  // `spec` resolved; `canary_root()` is asked for the toolkit root derived from cudart only after the
  // other searches, and only when `spec` uses it.
  template <class CanaryRoot>
  [[nodiscard]] ComponentResult resolve(const ComponentSpec& spec, const CanaryRoot& canary_root) const {
    std::optional<timeline::Span> search_span(std::in_place, "search", spec.name);
    auto out = run_strategies(spec);
    search_span.reset();
    if (spec.uses_ctk_root_canary) {
      std::optional<timeline::Span> canary_span(std::in_place, "canary_wait", spec.name);
      const std::optional<std::string>& root = canary_root();
      canary_span.reset();
      if (root) {
        out.trace.push_back("system-ctk-root: toolkit root " + *root + " derived from where cudart is found");
        probes::search_toolkit_root(spec, inputs, *root, "system-ctk-root", PathfinderStep::ctk_root, out);
      }
    }
    mark_not_supported_by_cuda_python(spec, out);
    ComponentResult result;
    result.spec = &spec;
    {
      const timeline::Span span("candidates", spec.name);
      // The package database, read beside the searches, is asked once they are all done
      // (resolve_components): a file it may know is marked, and no search waits for the read.
      result.candidates =
          build_candidates(spec, out.sightings, inputs.layout, inputs.packages, inputs.dirs, true);
    }
    result.trace = std::move(out.trace);
    select(result);
    return result;
  }
};

// A loader answer under a name CUDA Python does not declare says so in its reason: the library is
// found, for native programs and frameworks, but `selected` (CUDA Python's answer) never takes it.
void say_when_not_supported_by_cuda_python(ComponentResult& result) {
  if (!result.loader || result.spec->kind != probes::ComponentKind::dynamic_lib) {
    return;
  }
  const auto name = result.loader->via.file_name.empty() ? fs::basename(result.loader->via.path)
                                                         : result.loader->via.file_name;
  if (!probes::cuda_python_declares(*result.spec, name)) {
    result.loader->reason += "; " + name + " is not supported by CUDA Python";
  }
}

// cuda-pathfinder's CTK-root canary: the toolkit root above the cudart that a plain dlopen finds,
// as dlinfo reports it (the directory resolved, the SONAME kept).
std::optional<std::string> canary_root(const ComponentResult& cudart) {
  if (!cudart.loader || cudart.loader->fails ||
      !probes::cuda_python_declares(*cudart.spec, cudart.loader->via.file_name.empty()
                                                      ? fs::basename(cudart.loader->via.path)
                                                      : cudart.loader->via.file_name)) {
    return std::nullopt;
  }
  const auto& path = cudart.loader->via.path;
  auto dir = fs::real_path(fs::parent(path));
  const auto origin_path = dir ? fs::join(*dir, fs::basename(path)) : path;
  return probes::derive_toolkit_root(origin_path);
}

// Directories read ahead per search-path variable: a hostile PATH of thousands of entries is then
// listed by the searches as before, not by thousands of jobs.
constexpr std::size_t k_search_path_read_ahead = 16;

// The first k_search_path_read_ahead distinct absolute entries of `variable` (a relative or empty
// entry is resolved by the search itself, against the working directory).
std::vector<std::string> absolute_search_path_dirs(const Environment& env, const char* variable) {
  std::vector<std::string> dirs;
  const auto value = env.get(variable);
  if (!value) {
    return dirs;
  }
  for (auto& entry : split_search_path(*value)) {
    if (dirs.size() == k_search_path_read_ahead) {
      break;
    }
    if (!entry.empty() && entry.front() == '/' && std::find(dirs.begin(), dirs.end(), entry) == dirs.end()) {
      dirs.push_back(std::move(entry));
    }
  }
  return dirs;
}

LdCacheStatus load_ld_cache(const SystemLayout& layout, std::shared_ptr<const loader::LdSoCache>& cache) {
  LdCacheStatus status;
  status.path = layout.ld_so_cache;
  auto parsed = loader::read_ld_so_cache(layout.ld_so_cache);
  if (!parsed) {
    status.error = parsed.error().message;
    return status;
  }
  status.entries = parsed->entries().size();
  cache = std::make_shared<const loader::LdSoCache>(std::move(*parsed));
  return status;
}

} // namespace

DiscoveryContext prepare_discovery(const Environment& env, const DiscoveryOptions& options,
                                   const std::vector<const ComponentSpec*>& specs) {
  DiscoveryContext context{env, options, {},
                           {},  {},      {},
                           {},  {},      std::make_shared<probes::DirectoryCache>(),
                           {},  {},      {},
                           {},  {},      std::make_shared<loader::ObjectStore>()};
  // The caller's pool, taken here: inside the parallel section below, the active pool may be one
  // made for that section alone (when the caller has none), gone once the section ends.
  WorkerPool* const callers_pool = WorkerPool::active();
  // The package database's .list files (tens of thousands of lines on a toolkit installed from
  // packages) are read beside the Python and loader reads below, not by the first component that
  // asks while the others wait for it.
  context.packages = versions::PackageDatabase({options.layout.dpkg_dir, options.layout.rpm_db});
  context.packages_read_ahead = start_beside([packages = context.packages] {
    const timeline::Span span("packages_read_ahead");
    packages.read_ahead();
  });
  const bool finds_libraries = std::any_of(specs.begin(), specs.end(), [](const ComponentSpec* spec) {
    return spec->kind == probes::ComponentKind::dynamic_lib;
  });
  if (finds_libraries) {
    context.default_dirs_read_ahead =
        start_beside([dirs = context.dirs, lib_dirs = options.layout.default_lib_dirs] {
          const timeline::Span span("default_dirs_read_ahead");
          for (const auto& dir : lib_dirs) {
            static_cast<void>(dirs->listing(dir));
          }
        });
  }
  const bool finds_binaries = std::any_of(specs.begin(), specs.end(), [](const ComponentSpec* spec) {
    return spec->kind == probes::ComponentKind::binary;
  });
  for (const auto& [variable, wanted] :
       {std::pair{"LD_LIBRARY_PATH", finds_libraries}, std::pair{"PATH", finds_binaries}}) {
    if (!wanted) {
      continue;
    }
    for (auto& dir : absolute_search_path_dirs(env, variable)) {
      context.search_path_read_ahead.push_back(start_beside([dirs = context.dirs, dir = std::move(dir)] {
        const timeline::Span span("search_path_read_ahead", dir);
        static_cast<void>(dirs->listing(dir));
      }));
    }
  }
  // The Python environments (then the read-aheads of their site directories), the loader's cache
  // and its configuration are independent reads: side by side.
  const auto read_python = [&] {
    if (options.python_exe) {
      auto explicit_discovery = python::discover_python_environments_with(
          env, *options.python_exe, std::chrono::seconds{5}, options.python_search);
      if (explicit_discovery) {
        context.python = std::move(*explicit_discovery);
      } else {
        context.python_error = explicit_discovery.error().message;
        context.python = python::discover_python_environments(env, options.python_search);
      }
    } else {
      const timeline::Span span("python_environments");
      context.python = python::discover_python_environments(env, options.python_search);
    }
    std::vector<std::string_view> wheel_dirs;
    for (const auto* spec : specs) {
      wheel_dirs.insert(wheel_dirs.end(), spec->wheel_dirs.begin(), spec->wheel_dirs.end());
    }
    std::sort(wheel_dirs.begin(), wheel_dirs.end());
    wheel_dirs.erase(std::unique(wheel_dirs.begin(), wheel_dirs.end()), wheel_dirs.end());
    if (!wheel_dirs.empty()) {
      for (const auto& environment : context.python.environments) {
        for (const auto& site_dir : environment.site_dirs) {
          context.site_dirs_read_ahead.push_back(start_beside([dirs = context.dirs, site_dir, wheel_dirs] {
            const timeline::Span span("site_dir_read_ahead", site_dir);
            // In the order the search asks (SitePackagesSearch): the site directory, its top-level
            // package directories, then the wheel directories. Those under a top-level directory
            // the site directory lacks are not asked about (the search knows them missing from its
            // listing), nor are those under a missing deeper parent opened (known from the listings).
            if (!dirs->listing(site_dir).is_directory) {
              return;
            }
            std::vector<std::string_view> present;
            for (const auto rel_dir : wheel_dirs) {
              if (!dirs->wheel_dir_known_missing(site_dir, rel_dir)) {
                present.push_back(rel_dir);
              }
            }
            for (const auto rel_dir : present) {
              static_cast<void>(dirs->listing(fs::join(site_dir, rel_dir.substr(0, rel_dir.find('/')))));
            }
            for (const auto rel_dir : present) {
              static_cast<void>(dirs->listing(fs::join(site_dir, rel_dir)));
            }
          }));
        }
      }
    }
    const auto primary = std::find_if(context.python.environments.begin(), context.python.environments.end(),
                                      [](const auto& environment) { return environment.primary; });
    // The interpreter CUDA Python (and `import torch`) runs in: its frameworks, when asked for.
    if (options.frameworks && primary != context.python.environments.end()) {
      // On the caller's pool when it has one (a run's): it outlives this work, which the context's
      // last copy of the future waits for.
      context.frameworks =
          std::async(std::launch::async, [environment = *primary, env, pool = callers_pool,
                                          hashes = options.verify_record_hashes] {
            std::optional<WorkerPool::Use> use_pool;
            if (pool != nullptr) {
              use_pool.emplace(*pool);
            }
            const timeline::Span span("frameworks");
            const auto installed = [&] {
              const timeline::Span installed_span("installed_distributions");
              return python::installed_distributions(environment.site_dirs, python::is_framework);
            }();
            // The builds (which the frameworks' closures wait for) beside the pins and the RECORDs.
            DiscoveryContext::Frameworks frameworks;
            parallel_for_each_index(3, 3, [&](std::size_t part) {
              if (part == 0) {
                const timeline::Span builds_span("framework_builds");
                frameworks.builds = python::framework_builds(environment.site_dirs, installed, env);
              } else if (part == 2) {
                const timeline::Span records_span("record_integrity");
                frameworks.records = python::check_records(installed, hashes);
              } else {
                const timeline::Span requirements_span("framework_requirements");
                frameworks.requirements =
                    python::judge_framework_requirements(installed, python::marker_environment(environment));
              }
            });
            return frameworks;
          }).share();
    }
  };
  parallel_for_each_index(3, parallel_threads(3), [&](std::size_t part) {
    if (part == 0) {
      read_python();
    } else if (part == 1) {
      const timeline::Span span("ld_so_cache");
      context.ld_cache = load_ld_cache(options.layout, context.cache);
    } else {
      const timeline::Span span("ld_so_conf");
      context.ld_so_conf = loader::read_ld_so_conf(options.layout.ld_so_conf);
    }
  });
  return context;
}

std::vector<ComponentResult> resolve_components(const DiscoveryContext& context,
                                                const std::vector<const ComponentSpec*>& specs,
                                                const std::vector<ComponentResult>& resolved) {
  const probes::SearchInputs inputs{context.env,       context.options.layout,
                                    context.python,    context.cache ? &*context.cache : nullptr,
                                    &context.packages, context.dirs.get()};
  const auto strategies = probes::all_strategies();
  const Searcher searcher{inputs, strategies};

  // cudart is resolved at most once: for its own row and for the canary's toolkit root.
  const auto* cudart_spec = probes::find_component("cudart", probes::ComponentKind::dynamic_lib);
  std::optional<ComponentResult> cudart;
  for (const auto& known : resolved) {
    if (known.spec == cudart_spec) {
      cudart = known;
    }
  }
  const bool needs_canary = std::any_of(specs.begin(), specs.end(),
                                        [](const ComponentSpec* spec) { return spec->uses_ctk_root_canary; });
  // cudart is the first task; the components that take the canary's root run their other searches,
  // then wait for it (they are handed out last, so that the rest run meanwhile). Nothing waits for a
  // component that does not need it.
  OnceFlag cudart_once;
  std::optional<std::string> canary;
  const auto cudart_and_canary = [&]() -> const std::optional<std::string>& {
    cudart_once.call([&] {
      if (!cudart) {
        cudart = searcher.resolve(*cudart_spec, [] { return std::optional<std::string>(); });
      }
      if (needs_canary) {
        canary = canary_root(*cudart);
      }
    });
    return canary;
  };
  // A task of its own unless it is known already (then the first canary user derives the root).
  const bool cudart_task =
      std::find(specs.begin(), specs.end(), cudart_spec) != specs.end() || (needs_canary && !cudart);
  std::vector<std::optional<std::size_t>> tasks; // indices into specs; nullopt: cudart alone, not asked for
  if (cudart_task) {
    const auto at = std::find(specs.begin(), specs.end(), cudart_spec);
    tasks.push_back(at != specs.end() ? std::optional(static_cast<std::size_t>(at - specs.begin()))
                                      : std::nullopt);
  }
  for (const bool canary_users : {false, true}) {
    for (std::size_t i = 0; i < specs.size(); ++i) {
      if (specs[i] != cudart_spec && specs[i]->uses_ctk_root_canary == canary_users) {
        tasks.push_back(i);
      }
    }
  }
  // Independent otherwise: resolved in parallel, each stored at its own index.
  std::vector<ComponentResult> out(specs.size());
  parallel_for_each_index(tasks.size(), parallel_threads(tasks.size()), [&](std::size_t task) {
    const auto index = tasks[task];
    if (!index || specs[*index] == cudart_spec) {
      const timeline::Span span("component", "cudart");
      cudart_and_canary();
      if (index) {
        out[*index] = *cudart;
      }
      return;
    }
    const timeline::Span span("component", specs[*index]->name);
    out[*index] = searcher.resolve(*specs[*index], cudart_and_canary);
  });
  // The versions left to the package database, now that every search is done (its read had all
  // that time), spread over threads as the components were.
  std::vector<std::size_t> awaiting;
  for (std::size_t i = 0; i < out.size(); ++i) {
    if (std::any_of(out[i].candidates.begin(), out[i].candidates.end(),
                    [](const Candidate& candidate) { return candidate.version_awaits_packages; })) {
      awaiting.push_back(i);
    }
  }
  parallel_for_each_index(awaiting.size(), parallel_threads(awaiting.size()), [&](std::size_t task) {
    auto& component = out[awaiting[task]];
    const timeline::Span span("versions_from_packages", component.spec->name);
    complete_versions(*component.spec, component.candidates, inputs.layout, inputs.packages, inputs.dirs);
  });
  return out;
}

std::vector<const ComponentSpec*> wanted_components(const std::vector<std::string>& only) {
  std::vector<const ComponentSpec*> specs;
  for (const auto& spec : probes::catalog()) {
    if (only.empty() || std::find(only.begin(), only.end(), std::string(spec.name)) != only.end()) {
      specs.push_back(&spec);
    }
  }
  return specs;
}

std::vector<ComponentResult> follow_loads_from(const DiscoveryContext& context,
                                               std::vector<ComponentResult>& components) {
  // cuda-pathfinder loads a library's dependencies first: resolve those not reported (find NAME),
  // then let a failing (or missing required) dependency fail its dependents.
  std::vector<const ComponentSpec*> missing;
  for (const auto& row : pathfinder_dependencies()) {
    const auto* dependent = probes::find_component(row.name, probes::ComponentKind::dynamic_lib);
    const bool reported = std::any_of(components.begin(), components.end(),
                                      [dependent](const ComponentResult& c) { return c.spec == dependent; });
    if (dependent == nullptr || !reported) {
      continue;
    }
    for (const auto& list : {row.required, row.optional}) {
      for (const auto name : list) {
        const auto* spec = probes::find_component(name, probes::ComponentKind::dynamic_lib);
        const bool known = std::any_of(components.begin(), components.end(),
                                       [spec](const ComponentResult& c) { return c.spec == spec; }) ||
                           std::find(missing.begin(), missing.end(), spec) != missing.end();
        if (spec != nullptr && !known) {
          missing.push_back(spec);
        }
      }
    }
  }
  auto extra =
      missing.empty() ? std::vector<ComponentResult>{} : resolve_components(context, missing, components);
  const timeline::Span span("follow_loads");
  const auto setting = loader::search_setting(context.env, context.options.layout, context.cache.get());
  follow_loads(components, extra, setting, *context.files);
  for (auto& component : components) {
    say_when_not_supported_by_cuda_python(component);
  }
  return extra;
}

DiscoveryResult finish_discovery(DiscoveryContext&& context, std::vector<ComponentResult> components) {
  auto extra = follow_loads_from(context, components);

  DiscoveryResult result;
  if (context.frameworks.valid()) {
    const auto& frameworks = context.frameworks.get();
    result.framework_requirements = frameworks.requirements.checked;
    result.framework_requirements_not_judged = frameworks.requirements.not_judged;
    result.frameworks = frameworks.builds;
    result.records = frameworks.records;
  }
  result.ld_so_conf = std::move(context.ld_so_conf);
  result.python = std::move(context.python);
  result.python_error = std::move(context.python_error);
  result.ld_cache = std::move(context.ld_cache);
  result.cache = std::move(context.cache);
  result.files = std::move(context.files);
  result.components = std::move(components);
  result.dependencies = std::move(extra);
  // What only the searches used (every directory listing, the package lists and their indexes:
  // tens of thousands of strings and a few mappings) is freed beside the rest of the run.
  static_cast<void>(
      start_beside([dirs = std::move(context.dirs), packages = std::move(context.packages)] {}));
  return result;
}

DiscoveryResult discover(const Environment& env, const DiscoveryOptions& options) {
  const auto specs = wanted_components(options.only);
  auto context = prepare_discovery(env, options, specs);
  auto components = resolve_components(context, specs);
  return finish_discovery(std::move(context), std::move(components));
}

} // namespace cudadiag::discovery
