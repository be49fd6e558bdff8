#pragma once
// What the closure tests share: synthetic libraries written into a TempTree and a loader search
// confined to it (its "cwd" and "default" directories, no cache).

#include "loader/closure.hpp"
#include "synthetic_elf.hpp"
#include "temp_tree.hpp"

#include <string>

namespace cudadiag::testing {

// Writes a synthetic shared object at `relative` under `tree`; returns its path.
inline std::string library(const TempTree& tree, const std::string& relative, SyntheticLibrary spec) {
  return tree.write(relative, synthetic_shared_object(spec));
}

inline loader::SearchSetting setting_in(const TempTree& tree) {
  loader::SearchSetting setting;
  setting.cwd = tree.path("cwd");
  setting.default_dirs = {tree.path("default")};
  return setting;
}

} // namespace cudadiag::testing
