#include "linkage/linkage.hpp"

#include "core/parallel.hpp"
#include "core/timeline.hpp"
#include "core/worker_pool.hpp"

#include <array>
#include <chrono>
#include <future>
#include <map>
#include <optional>

namespace cudadiag::linkage {
namespace {

using discovery::ComponentResult;
using probes::ComponentKind;

// What discovery knows of a file, by real path.
struct KnownFile {
  const ComponentResult* component = nullptr;
  const probes::Candidate* candidate = nullptr;
  bool selected = false;
  bool loader = false;
};

// The loads of the modelled frameworks installed in `discovery`'s primary environment, each on a
// thread of its own (torch's and JAX's share few files), in installed_modelled_frameworks' order.
std::vector<FrameworkLoad> predict_frameworks(const discovery::DiscoveryResult& discovery,
                                              const Environment& env, const SystemLayout& layout,
                                              const std::shared_ptr<loader::ObjectStore>& store) {
  const auto frameworks = installed_modelled_frameworks(discovery);
  std::vector<std::optional<FrameworkLoad>> predicted(frameworks.size());
  parallel_for_each_index(frameworks.size(), frameworks.size(), [&](std::size_t i) {
    if (auto load = framework_load(discovery, frameworks[i], env, layout, store)) {
      predicted[i] = std::move(load.value());
    }
  });
  std::vector<FrameworkLoad> all;
  for (auto& load : predicted) {
    if (load) {
      all.push_back(std::move(*load));
    }
  }
  return all;
}

class Analysis {
public:
  // `ahead`: the frameworks' loads started early, whose store the libraries' closures then share.
  Analysis(const discovery::DiscoveryResult& discovery, const Environment& env, const SystemLayout& layout,
           const FrameworksAhead* ahead)
      : m_discovery(discovery), m_env(env), m_layout(layout),
        m_setting(loader::search_setting(env, layout, discovery.cache ? &*discovery.cache : nullptr)),
        m_real_loader_search(layout.ld_so_cache == SystemLayout{}.ld_so_cache &&
                             layout.default_lib_dirs == SystemLayout{}.default_lib_dirs) {
    for (const auto* list : {&discovery.components, &discovery.dependencies}) {
      for (const auto& component : *list) {
        m_components.push_back(&component);
      }
    }
    for (const auto* known_component : m_components) {
      const auto& component = *known_component;
      if (component.spec->kind != ComponentKind::dynamic_lib) {
        continue;
      }
      m_by_name.emplace(component.spec->name, &component);
      for (std::size_t i = 0; i < component.candidates.size(); ++i) {
        const auto& candidate = component.candidates[i];
        if (!candidate.realpath) {
          continue;
        }
        auto& known = m_known[*candidate.realpath];
        if (known.component == nullptr) {
          known = {&component, &candidate};
        }
        known.selected = known.selected || (component.selected && component.selected->candidate == i);
        known.loader = known.loader || (component.loader && component.loader->candidate == i);
      }
    }
    // The closures open most of the files discovery read: its ELF facts are not read again.
    auto known_elf = std::make_shared<loader::ObjectStore::KnownElf>();
    for (const auto& [realpath, known] : m_known) {
      if (known.candidate->elf) {
        known_elf->emplace(realpath, *known.candidate->elf);
      }
    }
    m_known_elf = std::move(known_elf);
    if (ahead != nullptr) {
      m_store = ahead->files;
      m_store->add_known(m_known_elf);
    } else if (discovery.files) {
      m_store = discovery.files;
      m_store->add_known(m_known_elf);
    } else {
      m_store = std::make_shared<loader::ObjectStore>(m_known_elf);
    }
  }

  Linkage run(FrameworkClosures wanted, const FrameworksAhead* ahead) {
    const auto start = std::chrono::steady_clock::now();
    Linkage result;
    result.ran = true;
    // The frameworks' closures are predicted beside the libraries', over the same store: torch's and
    // JAX's load the wheels' cuBLAS, cuDNN, NCCL… whose symbol tables and clean checks the libraries'
    // closures need too, and each is read once. Started ahead (the store is theirs, see the
    // constructor), else here on a thread of their own.
    std::future<std::vector<FrameworkLinkage>> frameworks;
    if (ahead == nullptr && wanted == FrameworkClosures::predict &&
        !installed_modelled_frameworks(m_discovery).empty()) {
      frameworks = std::async(std::launch::async, [this] { return analyze_frameworks(); });
    }
    // Each library's closures are independent of the others' (the store is shared and thread-safe):
    // built in parallel, kept in discovery's order.
    std::vector<const ComponentResult*> libraries;
    for (const auto& component : m_discovery.components) {
      if (component.spec->kind == ComponentKind::dynamic_lib) {
        libraries.push_back(&component);
      }
    }
    std::vector<ComponentLinkage> analyzed(libraries.size());
    parallel_for_each_index(libraries.size(), parallel_threads(libraries.size()), [&](std::size_t i) {
      const timeline::Span span("closures", libraries[i]->spec->name);
      analyzed[i] = analyze(*libraries[i]);
    });
    for (auto& linkage : analyzed) {
      if (!linkage.closures.empty()) {
        result.components.push_back(std::move(linkage));
      }
    }
    if (ahead != nullptr) {
      for (const auto& load : ahead->loads.get()) {
        result.frameworks.push_back(linkage_of(load));
      }
    } else if (frameworks.valid()) {
      result.frameworks = frameworks.get();
    }
    result.files_read = m_store->files_read();
    // Every symbol check is done (the libraries' closures and the frameworks'): the result keeps
    // the files' facts, not their symbol tables.
    m_store->release_symbols();
    result.files = m_store;
    result.elapsed_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return result;
  }

private:
  // Each framework's closure on a thread of its own (torch's and JAX's share few files).
  std::vector<FrameworkLinkage> analyze_frameworks() const {
    std::vector<FrameworkLinkage> all;
    for (auto& load : predict_frameworks(m_discovery, m_env, m_layout, m_store)) {
      all.push_back(linkage_of(std::move(load)));
    }
    return all;
  }

  // A framework's predicted load as the report gives it: its closure annotated like the libraries'.
  FrameworkLinkage linkage_of(FrameworkLoad loaded) const {
    FrameworkLinkage linkage{
        loaded.framework, loaded.version, loaded.library, std::move(loaded.import_model), {}};
    linkage.closure.answers = {"framework"};
    linkage.closure.load_name = loaded.library;
    linkage.closure.closure = std::move(loaded.closure);
    annotate(linkage.closure, *m_store);
    return linkage;
  }

  ComponentLinkage analyze(const ComponentResult& component) const {
    ComponentLinkage linkage;
    linkage.spec = component.spec;
    const auto add = [&](const std::string& answer, const std::string& root, loader::Route route,
                         const std::string& dir, const std::vector<std::string>& preloads,
                         const std::string& load_name) {
      for (auto& existing : linkage.closures) {
        const auto& objects = existing.closure.objects;
        if (!objects.empty() && objects[existing.closure.root].path == root &&
            preloads_of(existing.closure) == preloads) {
          existing.answers.push_back(answer);
          if (answer == "loader") {
            existing.load_name = load_name; // by name: the load check then covers the loader's choice too
          }
          return;
        }
      }
      AnswerClosure closure;
      closure.answers.push_back(answer);
      closure.load_name = load_name;
      {
        const timeline::Span span("build_closure", root);
        closure.closure = loader::build_closure(root, route, dir, preloads, m_setting, *m_store);
      }
      const timeline::Span span("annotate", root);
      annotate(closure, *m_store);
      linkage.closures.push_back(std::move(closure));
    };
    // Every answer whose file opens is drawn, whether its load succeeds or not: the closure shows
    // where it stops. An answer failing on a dependency cuda-pathfinder loads first never opens.
    const auto opens = [&](const std::optional<probes::Choice>& choice) {
      return choice && component.candidates[choice->candidate].usable() && choice->failed_dependency.empty();
    };
    if (opens(component.selected)) {
      const auto& via = component.selected->via;
      std::vector<std::string> preloads;
      std::vector<const probes::ComponentSpec*> visiting;
      pathfinder_preloads(*component.spec, preloads, visiting);
      add("python", via.path, loader::Route::root, fs::parent(via.path), preloads, via.path);
      // A wheel's library is what a framework loads by its path (its own RUNPATH into nvidia/*/lib);
      // a toolkit's is reached by SONAME, which the loader answer covers.
      if (!preloads.empty() && via.pathfinder_step == probes::PathfinderStep::site_packages) {
        add("direct", via.path, loader::Route::root, fs::parent(via.path), {}, via.path);
      }
    }
    if (!component.selected && opens(component.python_failed)) {
      // CUDA Python's system search reached this file with its dependencies already loaded and
      // failed there (then raised "not found"): that closure shows why.
      const auto& via = component.python_failed->via;
      std::vector<std::string> preloads;
      std::vector<const probes::ComponentSpec*> visiting;
      pathfinder_preloads(*component.spec, preloads, visiting);
      add("python", via.path, loader_route(via), via.search_dir, preloads, via.path);
    }
    if (opens(component.loader)) {
      const auto& via = component.loader->via;
      // By name only where this process's loader searches what the prediction did: under
      // --ld-so-cache (a what-if) the real loader would still read the system's cache.
      const auto name = via.file_name.empty() ? fs::basename(via.path) : via.file_name;
      add("loader", via.path, loader_route(via), via.search_dir, {}, m_real_loader_search ? name : via.path);
    }
    return linkage;
  }

  static loader::Route loader_route(const probes::Sighting& via) {
    switch (via.loader_step) {
    case probes::LoaderStep::preloaded: return loader::Route::ld_preload;
    case probes::LoaderStep::ld_library_path: return loader::Route::ld_library_path;
    case probes::LoaderStep::ld_so_cache: return loader::Route::ld_so_cache;
    case probes::LoaderStep::default_dirs: return loader::Route::default_dirs;
    case probes::LoaderStep::none: break;
    }
    return loader::Route::root;
  }

  // The paths cuda-pathfinder has loaded before `spec`: its dependencies, each after its own, once.
  void pathfinder_preloads(const probes::ComponentSpec& spec, std::vector<std::string>& out,
                           std::vector<const probes::ComponentSpec*>& visiting) const {
    if (std::find(visiting.begin(), visiting.end(), &spec) != visiting.end()) {
      return; // a cycle in the table: cuda-pathfinder's cache ends it the same way
    }
    visiting.push_back(&spec);
    for (const auto& list : {spec.dependencies, spec.optional_dependencies}) {
      for (const auto name : list) {
        const auto found = m_by_name.find(name);
        if (found == m_by_name.end()) {
          continue;
        }
        const auto& dependency = *found->second;
        pathfinder_preloads(*dependency.spec, out, visiting);
        if (dependency.selected && dependency.selected->loads() &&
            std::find(out.begin(), out.end(), dependency.selected->via.path) == out.end()) {
          out.push_back(dependency.selected->via.path);
        }
      }
    }
  }

  static std::vector<std::string> preloads_of(const loader::Closure& closure) {
    std::vector<std::string> paths;
    for (const auto& object : closure.objects) {
      if (object.route == loader::Route::preloaded) {
        paths.push_back(object.path);
      }
    }
    return paths;
  }

  void annotate(AnswerClosure& answer, loader::ObjectStore& store) const {
    answer.facts = facts_of(answer.closure);
    for (const auto& unresolved : answer.closure.unresolved) {
      answer.providers.push_back(providers_of(answer.closure, unresolved, store));
    }
  }

  static std::string component_by_soname(const loader::LoadedObject& object) {
    const auto& soname = object.file->elf->soname;
    const auto name = soname ? *soname : fs::basename(object.path);
    for (const auto& spec : probes::catalog()) {
      if (spec.kind == ComponentKind::dynamic_lib &&
          std::find(spec.file_names.begin(), spec.file_names.end(), name) != spec.file_names.end()) {
        return std::string(spec.name);
      }
    }
    return {};
  }

  std::vector<ObjectFacts> facts_of(const loader::Closure& closure) const {
    std::vector<ObjectFacts> all;
    for (const auto& object : closure.objects) {
      ObjectFacts facts;
      if (const auto known = m_known.find(object.file->realpath); known != m_known.end()) {
        facts.component = std::string(known->second.component->spec->name);
        facts.selected = known->second.selected;
        facts.loader = known->second.loader;
        if (known->second.candidate->version) {
          facts.version = known->second.candidate->version->version;
        }
      }
      if (facts.component
              .empty()) { // a copy discovery did not list (outside its search): known by its SONAME
        facts.component = component_by_soname(object);
      }
      if (facts.version.empty()) {
        facts.version = version_from_name(object);
      }
      all.push_back(std::move(facts));
    }
    return all;
  }

  // libnvJitLink.so.12.4.127 with SONAME libnvJitLink.so.12 -> "12.4.127".
  static std::string version_from_name(const loader::LoadedObject& object) {
    const auto name = fs::basename(object.file->realpath);
    const auto& soname = object.file->elf->soname;
    if (!soname) {
      return "";
    }
    const auto stem = soname->substr(0, soname->find(".so") + 3);
    if (name == *soname || name.rfind(stem + ".", 0) != 0 || name.size() == stem.size() + 1) {
      return ""; // the file is named as its SONAME: its major says nothing the SONAME does not
    }
    return name.substr(stem.size() + 1);
  }

  std::vector<Provider> providers_of(const loader::Closure& closure,
                                     const loader::UnresolvedSymbol& unresolved,
                                     loader::ObjectStore& store) const {
    std::vector<std::string> names;
    if (!unresolved.version_file.empty()) {
      names.push_back(unresolved.version_file);
    } else {
      names = closure.objects[unresolved.needed_by].file->elf->needed;
    }
    elf::SymbolReference reference{unresolved.symbol, unresolved.version, unresolved.version_file, false};
    const auto* bound = unresolved.bound ? closure.objects[*unresolved.bound].file : nullptr;
    std::vector<Provider> providers;
    for (const auto* known : m_components) {
      const auto& component = *known;
      if (component.spec->kind != ComponentKind::dynamic_lib ||
          std::none_of(component.spec->file_names.begin(), component.spec->file_names.end(),
                       [&](auto file_name) {
                         return std::find(names.begin(), names.end(), file_name) != names.end();
                       })) {
        continue;
      }
      for (const auto& candidate : component.candidates) {
        if (!candidate.usable() || !candidate.realpath) {
          continue;
        }
        const auto* file = store.open(candidate.first.path);
        if (file == nullptr || file == bound || file->skipped_because || file->fails_because) {
          continue;
        }
        const auto& symbols = store.symbols(*file);
        if (symbols && symbols->defines(reference)) {
          providers.push_back({candidate.first.path, candidate.first.found_via,
                               candidate.version ? candidate.version->version : std::string()});
        }
      }
    }
    return providers;
  }

  const discovery::DiscoveryResult& m_discovery;
  const Environment& m_env;
  const SystemLayout& m_layout;
  std::vector<const ComponentResult*> m_components; // reported, then dependencies resolved for them only
  loader::SearchSetting m_setting;
  bool m_real_loader_search; // the loader's cache and default dirs are this machine's
  std::shared_ptr<const loader::ObjectStore::KnownElf> m_known_elf; // discovery's ELF facts, by real path
  std::shared_ptr<loader::ObjectStore> m_store;
  std::map<std::string, KnownFile, std::less<>> m_known;
  std::map<std::string_view, const ComponentResult*> m_by_name;
};

// The libraries that start the frameworks' closures (torch's libtorch_cuda.so, JAX's PJRT plugin),
// relative to a site directory; the first site directory of the primary environment that holds one
// is the one its framework is imported from.
constexpr std::array<std::string_view, 3> k_framework_roots = {"torch/lib/libtorch_cuda.so",
                                                               "jax_plugins/xla_cuda13/xla_cuda_plugin.so",
                                                               "jax_plugins/xla_cuda12/xla_cuda_plugin.so"};

// Reads into `files`, beside the caller, the symbol tables of each framework root in `site_dirs` and
// of its DT_NEEDED entries that lie beside it (torch/lib/libtorch_cpu.so: 76,000 symbols and 5 MB of
// names), one file per job: the longest reads of the frameworks' closures, begun the moment the
// primary environment is known instead of once the frameworks' builds are read. A file read here
// that the closure does not open (a framework whose build has no CUDA) costs time, never a wrong
// answer: the store is only a cache of the files' contents.
// The futures are those of start_beside: empty on a pool (which runs the jobs before it is gone).
std::vector<std::shared_future<void>>
read_framework_libraries_ahead(const std::vector<std::string>& site_dirs,
                               const std::shared_ptr<loader::ObjectStore>& files) {
  std::vector<std::shared_future<void>> jobs;
  for (const auto root : k_framework_roots) {
    for (const auto& site_dir : site_dirs) {
      auto path = fs::join(site_dir, root);
      if (!fs::is_regular_file(path)) {
        continue;
      }
      jobs.push_back(start_beside([files, path = std::move(path)] {
        const timeline::Span span("framework_read_ahead", path);
        const auto* root_file = files->open(path);
        if (root_file == nullptr || !root_file->elf) {
          return;
        }
        const auto dir = fs::parent(path);
        std::vector<std::shared_future<void>> beside_jobs; // waited for when this job ends
        for (const auto& needed : root_file->elf->needed) {
          auto beside = fs::join(dir, needed);
          if (needed.find('/') == std::string::npos && fs::is_regular_file(beside)) {
            beside_jobs.push_back(start_beside([files, beside = std::move(beside)] {
              const timeline::Span needed_span("framework_read_ahead", beside);
              if (const auto* file = files->open(beside); file != nullptr && file->elf) {
                static_cast<void>(files->symbols(*file));
              }
            }));
          }
        }
        static_cast<void>(files->symbols(*root_file));
      }));
      break;
    }
  }
  return jobs;
}

} // namespace

FrameworksAhead predict_frameworks_ahead(const discovery::DiscoveryContext& context, const Environment& env,
                                         const SystemLayout& layout) {
  FrameworksAhead ahead;
  ahead.files = context.files ? context.files : std::make_shared<loader::ObjectStore>();
  if (!context.frameworks.valid()) { // no primary Python environment: no framework
    std::promise<std::vector<FrameworkLoad>> none;
    none.set_value({});
    ahead.loads = none.get_future().share();
    return ahead;
  }
  for (const auto& environment : context.python.environments) {
    if (environment.primary) {
      ahead.read_ahead = read_framework_libraries_ahead(environment.site_dirs, ahead.files);
    }
  }
  // What framework_load reads of discovery: the environments, the frameworks, the loader cache.
  discovery::DiscoveryResult known;
  known.python = context.python;
  known.cache = context.cache;
  // The caller's pool lends its helpers to the closures' parallel parts too: it outlives this
  // thread's work, which ends before `ahead.loads` (whose last copy waits for it) is destroyed.
  ahead.loads =
      std::async(std::launch::async, [known = std::move(known), frameworks = context.frameworks, env, layout,
                                      files = ahead.files, pool = WorkerPool::active()]() mutable {
        std::optional<WorkerPool::Use> use_pool;
        if (pool != nullptr) {
          use_pool.emplace(*pool);
        }
        known.frameworks = frameworks.get().builds;
        return predict_frameworks(known, env, layout, files);
      }).share();
  return ahead;
}

Linkage analyze_linkage(const discovery::DiscoveryResult& discovery, const Environment& env,
                        const SystemLayout& layout, FrameworkClosures frameworks,
                        const FrameworksAhead* ahead) {
  return Analysis(discovery, env, layout, ahead).run(frameworks, ahead);
}

} // namespace cudadiag::linkage
