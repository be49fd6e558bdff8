#pragma once
// A synthetic machine for discovery tests: a temp tree standing in for /, an Environment that
// names only what the test sets, a SystemLayout pointing at the tree (its own ld.so.cache,
// default dirs and /usr/local), and helpers to plant libraries, wheels, venvs and toolkits.

#include "core/environment.hpp"
#include "discovery/discovery.hpp"
#include "loader/ld_so_cache.hpp"
#include "temp_tree.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::testing {

class SyntheticWorld {
public:
  SyntheticWorld();

  TempTree tree;
  Environment env;
  SystemLayout layout;

  // Writes a synthetic x86-64 shared object to `relative` whose SONAME is its file name and that
  // needs nothing (synthetic_elf.hpp), a distinct file each time.
  std::string library(std::string_view relative) const;
  // A virtual environment at `relative` with Python 3.12 and pyvenv.cfg; returns its site-packages.
  std::string venv(std::string_view relative, bool system_site_packages = false) const;
  // A wheel's dist-info in a site-packages dir, with METADATA "Version: <version>".
  void dist_info(const std::string& site_dir, std::string_view distribution, std::string_view version) const;
  // A toolkit root at `relative` with version.json {"cuda_nvrtc": version, "cuda_cudart": version, ...}.
  std::string toolkit(std::string_view relative, std::string_view version) const;
  // Replaces the synthetic ld.so.cache with these entries (x86-64 libc6 unless flags are given).
  void ld_cache(const std::vector<loader::LdCacheEntry>& entries) const;
  static loader::LdCacheEntry cache_entry(std::string soname, std::string path);

  // Runs discovery on the world for the named components (all when empty).
  [[nodiscard]] discovery::DiscoveryResult discover(std::vector<std::string> only = {}) const;
};

// A copy of the component named `name` (and kind) in a discovery result; fails the test when absent.
discovery::ComponentResult component(const discovery::DiscoveryResult& result, std::string_view name,
                                     probes::ComponentKind kind = probes::ComponentKind::dynamic_lib);

// The path through which a choice was made, or "" when there is none.
std::string chosen(const std::optional<discovery::Choice>& choice);

} // namespace cudadiag::testing
