#pragma once
// Search strategies: one small class per kind of place a CUDA component can live. Each strategy
// reports sightings (file names that exist there, usable or not) and trace lines; it never
// decides what is selected, never loads anything and never prints.

#include "core/environment.hpp"
#include "loader/ld_so_cache.hpp"
#include "probes/candidate.hpp"
#include "probes/catalog.hpp"
#include "python/python_environments.hpp"

#include <memory>
#include <string>
#include <vector>

namespace cudadiag::probes {

// Everything a strategy may look at, read once per run.
struct SearchInputs {
  const Environment& env;
  const SystemLayout& layout;
  const python::PythonDiscovery& python;
  const loader::LdSoCache* ld_cache; // nullptr when /etc/ld.so.cache could not be read
};

struct SearchOutput {
  std::vector<Sighting> sightings; // in the strategy's own priority order
  std::vector<std::string> trace;             // what was looked at, and what was there
};

class SearchStrategy {
public:
  virtual ~SearchStrategy() = default;
  // The found_via value this strategy's sightings carry (for the trace header).
  [[nodiscard]] virtual std::string_view name() const = 0;
  // Whether this strategy searches for components of this kind and packaging.
  [[nodiscard]] virtual bool applies_to(const ComponentSpec& spec) const = 0;
  virtual void search(const ComponentSpec& spec, const SearchInputs& inputs, SearchOutput& out) const = 0;
};

// Every strategy, in the order their sightings are listed (cuda-pathfinder's order first, then the
// loader's, then places only cudadiag looks). Listed explicitly; nothing self-registers.
std::vector<std::unique_ptr<SearchStrategy>> all_strategies();

// Looks for `spec`'s files under a toolkit-shaped `root` (the dirs in spec.toolkit_dirs) and adds
// sightings with the given found_via and pathfinder step (only the pathfinder anchor dirs get the
// step; the rest are listed with step none). Used for CUDA_PATH, conda, system toolkits and the
// toolkit root derived from cudart (cuda-pathfinder's "canary").
void search_toolkit_root(const ComponentSpec& spec, const SearchInputs& inputs, const std::string& root,
                         std::string_view found_via, PathfinderStep step, SearchOutput& out);

// cuda-pathfinder's derive_ctk_root: <root>/lib64|lib/x or <root>/targets/<triple>/lib64|lib/x -> <root>.
std::optional<std::string> derive_toolkit_root(const std::string& library_path);

// The toolkit directory name with "{triple}" replaced.
std::string expand_triple(std::string_view relative_dir, const SystemLayout& layout);

} // namespace cudadiag::probes
