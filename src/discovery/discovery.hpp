#pragma once
// Discovery: every candidate of every catalog component, and the two selections (what CUDA
// Python would load; what the native loader would load). Reads files only: no process is
// spawned (unless an explicit --python interpreter is named) and no library is loaded.

#include "core/environment.hpp"
#include "discovery/candidate.hpp"
#include "loader/ld_so_cache.hpp"
#include "loader/ld_so_conf.hpp"
#include "loader/object_store.hpp"
#include "probes/catalog.hpp"
#include "probes/search_strategies.hpp"
#include "python/framework_builds.hpp"
#include "python/framework_requirements.hpp"
#include "python/python_environments.hpp"
#include "python/record_integrity.hpp"
#include "versions/package_db.hpp"

#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cudadiag::discovery {

enum class ComponentStatus { found, not_found, error };
std::string_view to_string(ComponentStatus status); // "found", "not_found", "error"
// The status `text` names; nullopt for any other text.
std::optional<ComponentStatus> parse_component_status(std::string_view text);

struct ComponentResult {
  const probes::ComponentSpec* spec = nullptr;
  ComponentStatus status = ComponentStatus::not_found;
  std::vector<Candidate> candidates; // first sighting order
  std::optional<Choice> selected;    // cuda-pathfinder's priority; `fails` set when it cannot load
  std::optional<Choice> loader;      // dlopen(SONAME) for libraries; PATH lookup for binaries
  // CUDA Python's failed load when `selected` is null although a file was tried: the first file its
  // system search's dlopen(SONAME) reached and failed to load (outcome, fails and reason say why),
  // after which cuda-pathfinder found no other file and raised DynamicLibNotFoundError. The library
  // then does not load in CUDA Python (status error), whatever `loader` says. nullopt otherwise.
  std::optional<Choice> python_failed;
  // The first file at which dlopen of a declared SONAME stops with an error (whether or not an
  // older SONAME then resolves).
  std::optional<std::size_t> loader_blocked_by;
  std::vector<std::string> trace;

  [[nodiscard]] const Candidate* selected_candidate() const;
  [[nodiscard]] const Candidate* loader_candidate() const;
};

struct LdCacheStatus {
  std::string path;
  std::optional<std::string> error; // nullopt when parsed
  std::size_t entries = 0;
};

struct DiscoveryOptions {
  SystemLayout layout;
  std::optional<std::string> python_exe; // --python: run this interpreter to ask for its site dirs
  std::vector<std::string> only;         // component names to report; empty = whole catalog
  python::PythonSearchOptions python_search;
  // Read the primary environment's frameworks (torch, JAX…): their builds and CUDA pins. The
  // startup check leaves them out: importing torch or JAX is another process's question.
  bool frameworks = true;
  // With the frameworks: also compare every library file's SHA-256 with its dist-info RECORD
  // (--verify-record-hashes); sizes are always compared.
  bool verify_record_hashes = false;
};

struct DiscoveryResult {
  python::PythonDiscovery python;
  std::optional<std::string> python_error; // --python failed; the no-run discovery was used instead
  // The CUDA pins of the frameworks installed in the primary Python environment, each checked
  // against what is installed there (python/framework_requirements.hpp).
  std::vector<python::FrameworkRequirement> framework_requirements;
  // Their CUDA requirements that were not judged, and why (an extra nothing requests, a marker that
  // cannot be evaluated here).
  std::vector<python::UnjudgedRequirement> framework_requirements_not_judged;
  // The CUDA the frameworks in the primary environment were built for (python/framework_builds.hpp).
  std::vector<python::FrameworkBuild> frameworks;
  // The primary environment's CUDA distributions' library files against their RECORDs
  // (python/record_integrity.hpp); empty when the frameworks were not read.
  python::RecordCheck records;
  LdCacheStatus ld_cache;
  // The parsed loader cache; null when ld_cache.error is set. Shared: the frameworks' closures start
  // from it before the components are resolved (linkage::predict_frameworks_ahead).
  std::shared_ptr<const loader::LdSoCache> cache;
  loader::LdConf ld_so_conf; // which conf file lists which directory (for remedies)
  // The files the load model opened (follow_loads), for the closure stage to go on with.
  std::shared_ptr<loader::ObjectStore> files;
  std::vector<ComponentResult> components;
  // cuda-pathfinder's dependencies of `components` that were not asked for (`find NAME`): resolved
  // because CUDA Python loads them first (the python answer's closure preloads them), not reported.
  std::vector<ComponentResult> dependencies;
};

// What discovery reads once per run, before any component is resolved: the snapshot, the Python
// environments (running options.python_exe at most once) and the loader cache (parsed once).
// Resolving components only reads it, so several threads may resolve from one context.
struct DiscoveryContext {
  Environment env;
  DiscoveryOptions options;
  python::PythonDiscovery python;
  std::optional<std::string> python_error; // options.python_exe failed; the no-run discovery is used
  LdCacheStatus ld_cache;
  std::shared_ptr<const loader::LdSoCache> cache; // null when ld_cache.error is set
  loader::LdConf ld_so_conf;                      // options.layout.ld_so_conf and its includes
  versions::PackageDatabase packages; // options.layout's dpkg and RPM databases, read on first use
  // Every directory the searches look in, listed once and shared by all components.
  std::shared_ptr<const probes::DirectoryCache> dirs = std::make_shared<probes::DirectoryCache>();
  // The read-aheads below run beside the rest (start_beside): on a helper of the run's WorkerPool,
  // which waits for them before it is gone (their futures are then empty), else on threads of
  // their own, whose futures wait for them when the context is destroyed.
  std::shared_future<void> packages_read_ahead; // the packages' .list files
  // The loader's default directories (every library's search lists them; /usr/lib/<triple> holds
  // thousands of entries), listed while the rest is prepared, when a library is among the
  // components to resolve.
  std::shared_future<void> default_dirs_read_ahead;
  // The absolute directories of LD_LIBRARY_PATH (when a library is to be resolved) and of PATH
  // (when a binary is), one read-ahead each, the first 16 of each variable:
  // every library's (every binary's) search lists them all, the first one asking while the others wait.
  std::vector<std::shared_future<void>> search_path_read_ahead;
  // Each Python environment's site directories and the catalog's wheel directories under them
  // (site-packages/nvidia/cu13/lib, ...), one read-ahead per site directory, started as soon as the
  // environments are known: a large site-packages takes a few tenths of a millisecond to list,
  // and every component with wheels needs its listing first.
  std::vector<std::shared_future<void>> site_dirs_read_ahead;
  // The primary Python environment's frameworks (their CUDA pins checked, the CUDA they were built
  // for), read on a thread of their own while the components are resolved: a torch + JAX venv's
  // metadata takes milliseconds to read.
  struct Frameworks {
    python::FrameworkPins requirements;
    std::vector<python::FrameworkBuild> builds;
    python::RecordCheck records;
  };
  std::shared_future<Frameworks> frameworks;
  // The files the closures open, each read once per run: the load model's (finish_discovery), the
  // frameworks' predicted ahead (linkage::predict_frameworks_ahead) and the closure stage's.
  std::shared_ptr<loader::ObjectStore> files = std::make_shared<loader::ObjectStore>();
};
// `specs`: the components that will be resolved from the context (what it reads ahead depends on them).
// When the calling thread has an active WorkerPool (a run's), the context's reads ahead and its
// frameworks' work borrow its helpers: the pool must outlive the context and every copy of its futures.
DiscoveryContext prepare_discovery(const Environment& env, const DiscoveryOptions& options,
                                   const std::vector<const probes::ComponentSpec*>& specs);

// `specs` resolved against `context`, in the order given. Components that derive a toolkit root
// from cudart (cuda-pathfinder's canary) take cudart from `resolved` when it is there; otherwise it
// is resolved once for all of them.
std::vector<ComponentResult> resolve_components(const DiscoveryContext& context,
                                                const std::vector<const probes::ComponentSpec*>& specs,
                                                const std::vector<ComponentResult>& resolved = {});

// The catalog components `options.only` names (all when empty), in catalog order.
std::vector<const probes::ComponentSpec*> wanted_components(const std::vector<std::string>& only);

// The result of a run: `context`'s Python environments and loader-cache status with `components`.
DiscoveryResult finish_discovery(DiscoveryContext&& context, std::vector<ComponentResult> components);

// prepare_discovery, resolve_components for options.only, finish_discovery.
DiscoveryResult discover(const Environment& env, const DiscoveryOptions& options);

} // namespace cudadiag::discovery
