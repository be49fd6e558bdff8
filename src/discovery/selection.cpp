#include "discovery/selection.hpp"

#include <array>

namespace cudadiag::discovery {
namespace {

using probes::ComponentKind;

// Every (candidate, sighting) pair in search order.
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

// Sightings are collected strategy by strategy, so within one step they are in priority order;
// across steps the order is imposed here.
std::optional<Choice> first_usable_in_loader_order(ComponentResult& result) {
  constexpr std::array k_order = {LoaderStep::ld_library_path, LoaderStep::ld_so_cache, LoaderStep::default_dirs};
  for (const auto step : k_order) {
    std::optional<Choice> found;
    for_each_sighting(result, [&](std::size_t index, const Sighting& sighting) {
      const auto& candidate = result.candidates[index];
      if (sighting.loader_step != step || (!candidate.usable() && candidate.loader_skips)) {
        return false;
      }
      if (!candidate.usable()) {
        result.loader_blocked_by = index;
        return true;
      }
      found = Choice{index, sighting, "dlopen(\"" + std::string(result.spec->file_names.front()) +
                                          "\") would resolve it through " + sighting.found_via};
      return true;
    });
    if (found || result.loader_blocked_by) {
      return found;
    }
  }
  return std::nullopt;
}

std::optional<Choice> first_executable_on_path(const ComponentResult& result) {
  std::optional<Choice> found;
  for_each_sighting(result, [&](std::size_t index, const Sighting& sighting) {
    if (sighting.found_via != "PATH" || !result.candidates[index].usable()) {
      return false;
    }
    found = Choice{index, sighting, "first executable named " + std::string(result.spec->file_names.front()) +
                                        " on PATH (what a shell runs)"};
    return true;
  });
  return found;
}

std::optional<Choice> first_in_pathfinder_order(ComponentResult& result) {
  constexpr std::array k_order = {PathfinderStep::site_packages, PathfinderStep::conda,
                                  PathfinderStep::system_search, PathfinderStep::product_root,
                                  PathfinderStep::cuda_path,     PathfinderStep::ctk_root};
  for (const auto step : k_order) {
    if (step == PathfinderStep::system_search) {
      // cuda-pathfinder calls dlopen(SONAME): whatever the native loader resolves.
      if (result.spec->kind == ComponentKind::dynamic_lib && result.loader) {
        Choice choice = *result.loader;
        choice.reason = "cuda-pathfinder's system search (plain dlopen) finds it: " + choice.reason;
        return choice;
      }
      continue;
    }
    std::optional<Choice> found;
    for_each_sighting(result, [&](std::size_t index, const Sighting& sighting) {
      if (sighting.pathfinder_step != step) {
        return false;
      }
      if (!result.candidates[index].usable()) {
        result.shadowing_unusable.push_back(index);
        return false;
      }
      found = Choice{index, sighting, "first hit in cuda-pathfinder's order: " + sighting.found_via + " (" +
                                          sighting.search_dir + ")"};
      return true;
    });
    if (found) {
      return found;
    }
  }
  return std::nullopt;
}

} // namespace

void select(ComponentResult& result) {
  result.shadowing_unusable.clear();
  result.loader_blocked_by.reset();
  if (result.spec->kind == ComponentKind::dynamic_lib) {
    result.loader = first_usable_in_loader_order(result);
  } else if (result.spec->kind == ComponentKind::binary) {
    result.loader = first_executable_on_path(result);
  }
  result.selected = first_in_pathfinder_order(result);
  if (result.selected || result.loader) {
    result.status = ComponentStatus::found;
  } else if (!result.candidates.empty() && !result.shadowing_unusable.empty()) {
    result.status = ComponentStatus::error;
  } else {
    bool any_usable = false;
    for (const auto& candidate : result.candidates) {
      any_usable = any_usable || candidate.usable();
    }
    result.status = !result.candidates.empty() && !any_usable ? ComponentStatus::error : ComponentStatus::not_found;
  }
}

} // namespace cudadiag::discovery
