#pragma once
// The closure stage: for every library discovery found, the dependency closure and symbol check of
// each way it is loaded (closure.hpp), predicted from the files, nothing loaded:
//  - "python": cuda-pathfinder's answer: its dependencies loaded first, each from its own selected
//    copy (its DIRECT_DEPENDENCIES, depth first), then the selected file by its path; with no
//    selected file, the file its system search failed on (ComponentResult::python_failed);
//  - "direct": the selected file loaded by its path with nothing loaded before, as a framework's
//    own library reaches it through its RUNPATH, or ctypes.CDLL(path) does; only computed for a
//    site-packages file whose component has cuda-pathfinder dependencies (else it equals "python",
//    and a toolkit's library is reached by SONAME: "loader");
//  - "loader": dlopen(SONAME) in a fresh process: the loader's answer, opened where it found it.
// Answers that load the same files with the same preloads share one closure.

#include "core/environment.hpp"
#include "discovery/discovery.hpp"
#include "linkage/framework_load.hpp"
#include "linkage/load_cache.hpp"
#include "loader/closure.hpp"
#include "worker/process.hpp"

#include <cstdint>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace cudadiag::linkage {

// What the report says of one object of a closure besides how it was found.
struct ObjectFacts {
  std::string component; // the catalog component whose SONAME it carries; "" for the system's libraries
  std::string version;   // the catalog candidate's version, else the real file name's numbers; "" unknown
  bool selected = false; // the file cuda-pathfinder's answer takes for that component
  bool loader = false;   // the file dlopen(SONAME) takes for that component
};

// Another copy that defines an unresolved symbol: a candidate discovery found for the component
// the symbol's version names (or, unversioned, for one of the needing object's DT_NEEDED names).
struct Provider {
  std::string path;
  std::string found_via;
  std::string version;
};

// The closure loaded for real in a worker and its link map compared with the prediction
// (load_check.hpp).
struct LoadCheck {
  // How the worker ended: ok (it answered; dlopen itself may have failed), crashed, timeout, error
  // (it could not start or broke the protocol); `detail` says more when it is not ok.
  worker::StepStatus status = worker::StepStatus::error;
  std::string detail;
  std::optional<std::string> error;     // dlerror() of the dlopen that failed
  std::optional<std::string> failed_at; // what that dlopen was given
  // Every way the prediction and the real load differ, one sentence each; empty: they agree.
  std::vector<std::string> differences;
  // Predicted objects the worker already had under that name (its own libstdc++, libc): "PATH (the
  // worker's NAME)". Any process brings its own; not a difference.
  std::vector<std::string> already_in_worker;
  // Objects in the link map that the closure does not hold (a library's own dlopen at load time).
  std::vector<std::string> also_loaded;
  double elapsed_ms = 0; // the worker's time; 0 when answered from the cache
  // Set when the worker's answer came from the cache of proven loads (load_cache.hpp) instead of a
  // load in this run: when that load was proven (Unix seconds) and how long it took then.
  std::optional<std::int64_t> proven_at;
  double proven_ms = 0;

  [[nodiscard]] bool loads() const { return status == worker::StepStatus::ok && !error; }
  [[nodiscard]] bool agrees() const { return status == worker::StepStatus::ok && differences.empty(); }
};

struct AnswerClosure {
  std::vector<std::string> answers; // "python", "direct", "loader": which answers load this way
  // What a process passes to dlopen for the root: its path, or for the loader answer the name the
  // loader searches for (its SONAME); the load check opens it as that. Under another ld.so.cache
  // or default directories than the system's (--ld-so-cache), the loader answer's path instead.
  std::string load_name;
  loader::Closure closure;
  std::vector<ObjectFacts> facts;               // one per closure.objects
  std::vector<std::vector<Provider>> providers; // one per closure.unresolved
  std::optional<LoadCheck> check;               // nullopt: not loaded (--no-load, or nothing to open)
};

// A Python framework's own CUDA library and what it loads (framework_load.hpp): the report's answer
// to "which cuDNN does torch use", beside CUDA Python's (`selected`).
struct FrameworkLinkage {
  std::string framework; // the distribution ("torch", "jax-cuda13-pjrt")
  std::string version;
  std::string library;                         // its CUDA library, the closure's root
  std::optional<FrameworkImport> import_model; // what the framework's own code opens first, and why
  AnswerClosure closure;                       // answers: {"framework"}; the preloads, then the library

  [[nodiscard]] bool loads() const { return framework_loads(closure.closure, import_model); }
};

struct ComponentLinkage {
  const probes::ComponentSpec* spec = nullptr;
  std::vector<AnswerClosure> closures;
};

struct Linkage {
  bool ran = false;
  std::vector<ComponentLinkage> components; // the found libraries, in the report's order
  std::vector<FrameworkLinkage> frameworks; // torch, JAX's plugin: those installed with their CUDA library
  std::size_t files_read = 0; // distinct files opened by the libraries' and the frameworks' closures
  // The files the closures' objects point into (loader::LoadedObject::file): kept alive with the result.
  std::shared_ptr<const loader::ObjectStore> files;
  double elapsed_ms = 0;
  // The load check (load_check.hpp): whether it ran, else why not, and how long it took.
  bool load_checked = false;
  std::string load_check_skipped; // "--no-load: ..." when it did not run
  // When it ran but left closures unloaded, why ("9 closures not loaded: the load check's bound of
  // 10 s (2 x --timeout) was reached"); "" when every closure was loaded (or judged without loading).
  std::string load_check_cut;
  double load_check_ms = 0;
  CacheUse load_cache; // how the load check used the cache of proven loads
};

// What analyze_linkage predicts besides the libraries discovery found.
enum class FrameworkClosures {
  predict, // torch's and JAX's own loads too (linkage.frameworks): a report of the whole catalog
  skip,    // a report narrowed to some components (`find NAME`): they would go unread
};

// torch's and JAX's own loads (framework_load.hpp), predicted from what discovery knows before it
// resolves a component (the primary environment, its frameworks, the loader cache), on a thread of
// their own while the components are resolved: libtorch_cpu.so's and libtorch_cuda.so's symbol
// tables alone take milliseconds to read. analyze_linkage takes them over; their store is the one
// the libraries' closures then use, so that a file both need is read once.
struct FrameworksAhead {
  std::shared_ptr<loader::ObjectStore> files;
  std::shared_future<std::vector<FrameworkLoad>> loads; // those installed with their CUDA library
  // The reads ahead of the frameworks' libraries into `files`: empty futures on a pool (which runs
  // them before it is gone), else threads of their own that the last copy waits for.
  std::vector<std::shared_future<void>> read_ahead;
};
// `env` and `layout` are copied; `context` may be consumed (finish_discovery) meanwhile. The libraries
// that start the closures (torch/lib/libtorch_cuda.so and the libraries beside it that it needs,
// JAX's plugin) are read into `files` at once, beside the caller. The work borrows the calling
// thread's active WorkerPool when it has one, which must then outlive the result.
FrameworksAhead predict_frameworks_ahead(const discovery::DiscoveryContext& context, const Environment& env,
                                         const SystemLayout& layout);

// `ahead`: the frameworks' loads started by predict_frameworks_ahead for this discovery; they are the
// report's whatever `frameworks` says. Null: predicted here when `frameworks` says so.
Linkage analyze_linkage(const discovery::DiscoveryResult& discovery, const Environment& env,
                        const SystemLayout& layout, FrameworkClosures frameworks = FrameworkClosures::predict,
                        const FrameworksAhead* ahead = nullptr);

} // namespace cudadiag::linkage
