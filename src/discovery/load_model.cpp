#include "discovery/load_model.hpp"

#include "core/parallel.hpp"
#include "discovery/selection.hpp"

#include <algorithm>
#include <array>
#include <map>

namespace cudadiag::discovery {
namespace {

using probes::ComponentKind;

loader::Route route_of(const Sighting& via) {
  switch (via.loader_step) {
  case LoaderStep::preloaded: return loader::Route::ld_preload;
  case LoaderStep::ld_library_path: return loader::Route::ld_library_path;
  case LoaderStep::ld_so_cache: return loader::Route::ld_so_cache;
  case LoaderStep::default_dirs: return loader::Route::default_dirs;
  case LoaderStep::none: break;
  }
  return loader::Route::root;
}

std::string searched(const Sighting& sighting) {
  return sighting.file_name.empty() ? fs::basename(sighting.path) : sighting.file_name;
}

class LoadModel {
public:
  LoadModel(std::vector<ComponentResult>& components, std::vector<ComponentResult>& dependencies,
            const loader::SearchSetting& setting, loader::ObjectStore& store)
      : m_setting(setting), m_store(store) {
    for (auto* list : {&components, &dependencies}) {
      for (auto& component : *list) {
        if (component.spec->kind == ComponentKind::dynamic_lib) {
          m_libraries.push_back(&component);
          m_by_name.emplace(component.spec->name, &component);
          m_preloads[&component]; // every entry made here: the threads then only read the map
        }
      }
    }
  }

  void run() {
    // The loader's answers are independent of each other; CUDA Python's need their dependencies'
    // first (and cudart's loader answer, for the canary): resolved level by level.
    parallel_for_each_index(m_libraries.size(), parallel_threads(m_libraries.size()),
                            [&](std::size_t i) { follow_loader(*m_libraries[i]); });
    std::map<const ComponentResult*, int> levels;
    int deepest = 0;
    for (auto* library : m_libraries) {
      deepest = std::max(deepest, level_of(*library, levels, 0));
    }
    for (int level = 0; level <= deepest; ++level) {
      std::vector<ComponentResult*> now;
      for (auto* library : m_libraries) {
        if (levels[library] == level) {
          now.push_back(library);
        }
      }
      parallel_for_each_index(now.size(), parallel_threads(now.size()),
                              [&](std::size_t i) { follow_python(*now[i]); });
    }
    for (auto* library : m_libraries) {
      library->status = status_of(*library);
    }
  }

private:
  struct Outcome {
    LoadOutcome outcome = LoadOutcome::loads;
    std::string why;
  };

  Outcome load(const Choice& choice, loader::Route route, const std::vector<std::string>& preloads) const {
    const auto closure = loader::build_closure(choice.via.path, route,
                                               route == loader::Route::root ? fs::parent(choice.via.path)
                                                                            : choice.via.search_dir,
                                               preloads, m_setting, m_store);
    return {closure.outcome(), closure.failure()};
  }

  // The depth of `library` in cuda-pathfinder's dependency table (0: no dependency among the known).
  int level_of(const ComponentResult& library, std::map<const ComponentResult*, int>& levels,
               int depth) const {
    if (const auto known = levels.find(&library); known != levels.end()) {
      return known->second;
    }
    int level = 0;
    if (depth < 16) { // a cycle in the table ends here, as cuda-pathfinder's cache ends it
      for (const auto& list : {library.spec->dependencies, library.spec->optional_dependencies}) {
        for (const auto name : list) {
          if (const auto found = m_by_name.find(name);
              found != m_by_name.end() && found->second != &library) {
            level = std::max(level, 1 + level_of(*found->second, levels, depth + 1));
          }
        }
      }
    }
    levels[&library] = level;
    return level;
  }

  // What dlopen(`soname`) reaches (the file it loads, or the file it stops at) after `preloads`,
  // with the outcome of that load; nullopt when no file of that name is reached. `load_failed` is
  // set when the file itself is usable and its load (a dependency, a symbol) is what fails.
  std::optional<Choice> attempt_for(const ComponentResult& result, const std::string& soname,
                                    const std::vector<std::string>& preloads, bool& load_failed) const {
    load_failed = false;
    auto met = resolve_name(result, soname);
    std::optional<Choice> attempt = met.found ? std::move(met.found) : std::move(met.blocked);
    if (attempt && attempt->loads()) {
      const auto outcome = load(*attempt, route_of(attempt->via), preloads);
      attempt->set_outcome(outcome.outcome, outcome.why);
      load_failed = !attempt->loads();
    }
    return attempt;
  }

  // dlopen(SONAME) in a plain process, declared SONAMEs newest first.
  void follow_loader(ComponentResult& result) {
    std::optional<Choice> first_failure;
    for (const auto file_name : result.spec->file_names) {
      const std::string soname(file_name);
      bool load_failed = false;
      auto attempt = attempt_for(result, soname, {}, load_failed);
      if (!attempt) {
        continue;
      }
      if (load_failed) {
        attempt->reason = "dlopen(\"" + soname + "\") finds it through " + attempt->via.found_via + " and " +
                          (attempt->outcome == LoadOutcome::crashes ? "the process dies" : "the load fails");
        result.trace.push_back("load: dlopen(\"" + soname + "\") " +
                               std::string(probes::to_string(attempt->outcome)) + ": " +
                               attempt->fails.value_or(""));
      }
      if (attempt->loads() || attempt->outcome == LoadOutcome::crashes) {
        if (attempt->loads() && first_failure) {
          attempt->reason += " (dlopen(\"" + searched(first_failure->via) + "\") fails first at " +
                             first_failure->via.path + ")";
        }
        result.loader = std::move(attempt);
        return;
      }
      if (!first_failure) {
        first_failure = std::move(attempt);
      }
    }
    result.loader = std::move(first_failure);
  }

  // The first file cuda-pathfinder's file-system step `step` takes (os.path.isfile), unopened.
  static std::optional<Choice> first_file_at(const ComponentResult& result, probes::PathfinderStep step) {
    for (std::size_t i = 0; i < result.candidates.size(); ++i) {
      const auto& candidate = result.candidates[i];
      if (candidate.pathfinder_skips) {
        continue;
      }
      for (const auto* sighting : sightings_of(candidate)) {
        if (sighting->pathfinder_step != step) {
          continue;
        }
        Choice choice{i, *sighting,
                      "first file in cuda-pathfinder's order: " + sighting->found_via + " (" +
                          sighting->search_dir + ")"};
        if (!candidate.usable()) {
          choice.set_outcome(candidate.crashes ? LoadOutcome::crashes : LoadOutcome::fails,
                             *candidate.rejected);
        }
        return choice;
      }
    }
    return std::nullopt;
  }

  static std::vector<const Sighting*> sightings_of(const Candidate& candidate) {
    std::vector<const Sighting*> all{&candidate.first};
    for (const auto& other : candidate.also_found_as) {
      all.push_back(&other);
    }
    return all;
  }

  // Loads `choice` by its path after `preloads`; a failure is final (cuda-pathfinder raises).
  Choice by_path(Choice choice, const std::vector<std::string>& preloads) const {
    if (choice.loads()) {
      const auto outcome = load(choice, loader::Route::root, preloads);
      choice.set_outcome(outcome.outcome, outcome.why);
    }
    if (choice.outcome == LoadOutcome::fails) {
      choice.reason += "; cuda-pathfinder loads it by its path and raises RuntimeError (Failed to dlopen " +
                       choice.via.path + "), no fallback";
    } else if (choice.outcome == LoadOutcome::crashes) {
      choice.reason += "; cuda-pathfinder loads it by its path and the process dies";
    }
    return choice;
  }

  void follow_python(ComponentResult& result) {
    const auto file_level = result.selected; // select()'s answer, each file alone
    result.python_failed.reset();
    // 1. The early steps.
    std::optional<Choice> early = first_file_at(result, probes::PathfinderStep::site_packages);
    if (!early) {
      early = first_file_at(result, probes::PathfinderStep::conda);
    }
    // 0. Already in the process (a preload): dlopen(SONAME, RTLD_NOLOAD) finds it; answered after
    // the dependencies are loaded, whatever the early steps found.
    std::optional<Choice> already = first_file_at(result, probes::PathfinderStep::already_loaded);
    if (already && !already->loads()) {
      already.reset(); // glibc ignored the preload: nothing is loaded
    }
    // 2. The dependencies, each loaded with its own full search.
    std::vector<std::string>& preloads = m_preloads.at(&result);
    for (const bool required : {true, false}) {
      for (const auto name : required ? result.spec->dependencies : result.spec->optional_dependencies) {
        const auto found = m_by_name.find(name);
        if (found == m_by_name.end() || found->second == &result) {
          continue;
        }
        const auto& dependency = *found->second;
        const auto& answer = dependency.selected;
        if ((!answer && required) || (answer && !answer->loads())) {
          auto failing = early ? early : file_level;
          const std::string why =
              answer ? "cuda-pathfinder loads its dependency " + std::string(name) + " first (" +
                           answer->via.path + "), which " +
                           (answer->outcome == LoadOutcome::crashes ? "crashes: " : "fails: ") +
                           answer->fails.value_or("")
                     : "cuda-pathfinder loads its dependency " + std::string(name) +
                           " first and does not find it (DynamicLibNotFoundError)";
          result.trace.push_back("load: " + why);
          if (!answer) {
            // The dependency's DynamicLibNotFoundError propagates: to the caller this library is
            // not found (the trace says why), whatever file it would have taken.
            result.selected.reset();
            return;
          }
          if (failing) {
            failing->set_outcome(answer ? answer->outcome : LoadOutcome::fails, why);
            failing->failed_dependency = std::string(name);
          }
          result.selected = std::move(failing);
          return;
        }
        if (!answer) {
          continue; // an optional dependency not found: ignored
        }
        for (const auto& path : m_preloads.at(&dependency)) {
          if (std::find(preloads.begin(), preloads.end(), path) == preloads.end()) {
            preloads.push_back(path);
          }
        }
        if (std::find(preloads.begin(), preloads.end(), answer->via.path) == preloads.end()) {
          preloads.push_back(answer->via.path);
        }
      }
    }
    if (already) {
      already->reason = "already in the process: " + already->via.found_via +
                        " preloads it into every process (" + already->via.path +
                        "), so cuda-pathfinder's dlopen(SONAME, RTLD_NOLOAD) returns it";
      result.selected = std::move(already);
      return;
    }
    // 3. A file from the early steps, by its path.
    if (early) {
      result.selected = by_path(std::move(*early), preloads);
      return;
    }
    // 4. The system search: dlopen(SONAME) newest first, failures swallowed; only the SONAMEs
    // cuda-pathfinder declares (an older one, such as libcudart.so.11.0, is never asked for).
    std::string system_search_failed;
    std::optional<Choice> first_failure;
    for (const auto file_name : result.spec->file_names) {
      if (!probes::cuda_python_declares(*result.spec, file_name)) {
        continue;
      }
      const std::string soname(file_name);
      bool load_failed = false;
      auto attempt = attempt_for(result, soname, preloads, load_failed);
      if (!attempt) {
        continue;
      }
      if (attempt->loads() || attempt->outcome == LoadOutcome::crashes) {
        attempt->reason = "cuda-pathfinder's system search (plain dlopen) finds it: " + attempt->reason +
                          (attempt->loads() ? "" : "; the process dies");
        result.selected = std::move(attempt);
        return;
      }
      const auto line =
          "dlopen(\"" + soname + "\") fails at " + attempt->via.path + ": " + attempt->fails.value_or("");
      result.trace.push_back("load: cuda-pathfinder's system search: " + line + "; it goes on");
      system_search_failed += (system_search_failed.empty() ? "" : "; ") + line;
      if (!first_failure) {
        attempt->reason = "cuda-pathfinder's system search: dlopen(\"" + soname + "\") finds it through " +
                          attempt->via.found_via + " and the load fails";
        first_failure = std::move(attempt);
      }
    }
    const auto after_system_search = [&](Choice choice) {
      if (!system_search_failed.empty()) {
        choice.reason += " (its system search failed first: " + system_search_failed + ")";
      }
      return choice;
    };
    // 5. Product roots, CUDA_PATH/CUDA_HOME, the canary's toolkit root.
    for (const auto step : {probes::PathfinderStep::product_root, probes::PathfinderStep::cuda_path,
                            probes::PathfinderStep::ctk_root}) {
      if (step == probes::PathfinderStep::ctk_root && !canary_loads()) {
        continue;
      }
      if (auto found = first_file_at(result, step)) {
        result.selected = after_system_search(by_path(std::move(*found), preloads));
        return;
      }
    }
    // 6. Not found: when a file failed in the system search, CUDA Python's load of this library
    // fails there (python_failed), although it raises "not found".
    if (first_failure) {
      result.trace.push_back("load: cuda-pathfinder finds no other file and raises DynamicLibNotFoundError");
      first_failure->reason += "; cuda-pathfinder finds no other file and raises DynamicLibNotFoundError";
      result.python_failed = std::move(first_failure);
    }
    result.selected.reset();
  }

  // Whether cuda-pathfinder's canary (cudart by system search, in a child process) loads; unknown
  // (cudart not resolved in this run) counts as the file-level answer discovery derived the root from.
  bool canary_loads() const {
    const auto found = m_by_name.find("cudart");
    return found == m_by_name.end() || (found->second->loader && found->second->loader->loads());
  }

  const loader::SearchSetting& m_setting;
  loader::ObjectStore& m_store;
  std::vector<ComponentResult*> m_libraries;
  std::map<std::string_view, ComponentResult*> m_by_name;
  // What cuda-pathfinder has loaded before each library's own load: its dependencies' files, each
  // after its own. Written for a library only while its level runs; read by the levels above.
  std::map<const ComponentResult*, std::vector<std::string>> m_preloads;
};

} // namespace

void follow_loads(std::vector<ComponentResult>& components, std::vector<ComponentResult>& dependencies,
                  const loader::SearchSetting& setting, loader::ObjectStore& store) {
  LoadModel(components, dependencies, setting, store).run();
}

} // namespace cudadiag::discovery
