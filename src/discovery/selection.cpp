#include "discovery/selection.hpp"

#include "core/filesystem.hpp"

#include <array>

namespace cudadiag::discovery {
namespace {

using probes::ComponentKind;

// Every (candidate, sighting) pair in search order; `visit` returns true to stop.
template <class Visit> void for_each_sighting(const ComponentResult& result, Visit&& visit) {
  for (std::size_t i = 0; i < result.candidates.size(); ++i) {
    const auto& candidate = result.candidates[i];
    if (visit(i, candidate.first)) {
      return;
    }
    for (const auto& sighting : candidate.also_found_as) {
      if (visit(i, sighting)) {
        return;
      }
    }
  }
}

std::string searched_name(const Sighting& sighting) {
  return sighting.file_name.empty() ? fs::basename(sighting.path) : sighting.file_name;
}

} // namespace

NameOutcome resolve_name(const ComponentResult& result, const std::string& soname) {
  constexpr std::array k_order = {LoaderStep::preloaded, LoaderStep::ld_library_path, LoaderStep::ld_so_cache,
                                  LoaderStep::default_dirs};
  for (const auto step : k_order) {
    NameOutcome outcome;
    for_each_sighting(result, [&](std::size_t index, const Sighting& sighting) {
      const auto& candidate = result.candidates[index];
      if (sighting.loader_step != step || searched_name(sighting) != soname ||
          (!candidate.usable() && candidate.loader_skips)) {
        return false;
      }
      if (!candidate.usable()) {
        outcome.blocked =
            Choice{index, sighting,
                   "dlopen(\"" + soname + "\") stops at it (" + sighting.found_via + ") with an error"};
        outcome.blocked->set_outcome(candidate.crashes ? LoadOutcome::crashes : LoadOutcome::fails,
                                     *candidate.rejected);
      } else {
        outcome.found =
            Choice{index, sighting, "dlopen(\"" + soname + "\") resolves it through " + sighting.found_via};
      }
      return true;
    });
    if (outcome.found || outcome.blocked) {
      return outcome;
    }
  }
  return {};
}

namespace {

// Declared SONAMEs newest first; the first that resolves to a loadable file is the answer.
void select_loader(ComponentResult& result) {
  std::optional<Choice> first_blocked;
  for (const auto file_name : result.spec->file_names) {
    auto outcome = resolve_name(result, std::string(file_name));
    if (outcome.blocked && !first_blocked) {
      first_blocked = outcome.blocked;
      result.loader_blocked_by = outcome.blocked->candidate;
    }
    if (outcome.found) {
      if (first_blocked) {
        outcome.found->reason += " (dlopen(\"" + searched_name(first_blocked->via) + "\") fails first at " +
                                 first_blocked->via.path + ")";
      }
      result.loader = std::move(outcome.found);
      return;
    }
  }
  result.loader = std::move(first_blocked);
}

std::optional<Choice> first_executable_on_path(const ComponentResult& result) {
  std::optional<Choice> found;
  for_each_sighting(result, [&](std::size_t index, const Sighting& sighting) {
    if (sighting.found_via != "PATH" || !result.candidates[index].usable()) {
      return false;
    }
    found = Choice{index, sighting,
                   "first executable named " + std::string(result.spec->file_names.front()) +
                       " on PATH (what a shell runs)"};
    return true;
  });
  return found;
}

std::optional<Choice> first_in_pathfinder_order(const ComponentResult& result) {
  constexpr std::array k_order = {PathfinderStep::already_loaded, PathfinderStep::site_packages,
                                  PathfinderStep::conda,          PathfinderStep::system_search,
                                  PathfinderStep::product_root,   PathfinderStep::cuda_path,
                                  PathfinderStep::ctk_root,       PathfinderStep::system_install_dir};
  const bool library = result.spec->kind == ComponentKind::dynamic_lib;
  // Libraries, static and bitcode libraries: cuda-pathfinder takes the first file that exists and
  // does not look inside; a broken one is the answer, and using it fails.
  const bool takes_broken = library || result.spec->kind == ComponentKind::static_lib ||
                            result.spec->kind == ComponentKind::bitcode_lib;
  for (const auto step : k_order) {
    if (step == PathfinderStep::system_search) {
      // cuda-pathfinder calls dlopen(SONAME) per declared name and swallows the errors: whatever
      // the native loader resolves, or on to the next step.
      if (library && result.loader && result.loader->loads() &&
          probes::cuda_python_declares(*result.spec, searched_name(result.loader->via))) {
        Choice choice = *result.loader;
        choice.reason = "cuda-pathfinder's system search (plain dlopen) finds it: " + choice.reason;
        return choice;
      }
      continue;
    }
    std::optional<Choice> found;
    for_each_sighting(result, [&](std::size_t index, const Sighting& sighting) {
      const auto& candidate = result.candidates[index];
      if (sighting.pathfinder_step != step || candidate.pathfinder_skips) {
        return false;
      }
      if (!candidate.usable() && !takes_broken) {
        return false;
      }
      found = Choice{index, sighting,
                     "first file in cuda-pathfinder's order: " + sighting.found_via + " (" +
                         sighting.search_dir + ")"};
      if (!candidate.usable()) {
        found->set_outcome(candidate.crashes ? LoadOutcome::crashes : LoadOutcome::fails,
                           *candidate.rejected);
        found->reason += library ? "; cuda-pathfinder takes it and does not fall back, so loading fails"
                                 : "; cuda-pathfinder returns it without looking inside, so linking it fails";
      }
      return true;
    });
    if (found) {
      return found;
    }
  }
  return std::nullopt;
}

} // namespace

ComponentStatus status_of(const ComponentResult& result) {
  if (!result.selected && result.python_failed) {
    return ComponentStatus::error; // CUDA Python's load fails, though it says "not found"
  }
  const auto& answer = result.selected ? result.selected : result.loader;
  if (!answer) {
    return ComponentStatus::not_found;
  }
  return answer->loads() ? ComponentStatus::found : ComponentStatus::error;
}

void select(ComponentResult& result) {
  result.loader.reset();
  result.loader_blocked_by.reset();
  result.python_failed.reset();
  if (result.spec->kind == ComponentKind::dynamic_lib) {
    select_loader(result);
  } else if (result.spec->kind == ComponentKind::binary) {
    result.loader = first_executable_on_path(result);
  }
  result.selected = first_in_pathfinder_order(result);
  result.status = status_of(result);
}

const std::vector<PathfinderDependencies>& pathfinder_dependencies() {
  static const std::vector<PathfinderDependencies> table = [] {
    std::vector<PathfinderDependencies> rows;
    for (const auto& spec : probes::catalog()) {
      if (spec.kind == ComponentKind::dynamic_lib &&
          (!spec.dependencies.empty() || !spec.optional_dependencies.empty())) {
        rows.push_back({spec.name, spec.dependencies, spec.optional_dependencies});
      }
    }
    return rows;
  }();
  return table;
}

} // namespace cudadiag::discovery
