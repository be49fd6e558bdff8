#pragma once
// Search strategies: one small class per kind of place a CUDA component can live. Each strategy
// reports sightings (file names that exist there, usable or not) and trace lines; it never
// decides what is selected, never loads anything and never prints.

#include "core/environment.hpp"
#include "loader/ld_so_cache.hpp"
#include "probes/candidate.hpp"
#include "probes/catalog.hpp"
#include "python/python_environments.hpp"
#include "versions/package_db.hpp"

#include <memory>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <string>
#include <vector>

namespace cudadiag::probes {

// Directory listings shared by every component's search in a run: each directory is listed once
// (one opendir/getdents pass) and file names are matched in memory, instead of one lstat per name,
// per directory, per component. Thread-safe; entries never change once listed (a run is a
// snapshot: a file created during the run may be missed, as a sequential search could miss it).
class DirectoryCache {
public:
  struct Listing {
    bool is_directory = false; // opendir succeeded (a directory, or a link to one)
    bool complete = false;     // `names` holds every entry (false past k_max_entries: use lstat)
    std::vector<std::string> names; // sorted: looked up and prefix-matched by binary search
  };
  // The listing of `dir`, read on the first question about it.
  [[nodiscard]] const Listing& listing(const std::string& dir) const;
  // How many directories were listed (for benchmarks and tests).
  [[nodiscard]] std::size_t listed() const;
  static constexpr std::size_t k_max_entries = 200000;

private:
  mutable std::mutex m_mutex;
  mutable std::unordered_map<std::string, Listing> m_listings;
};

// Everything a strategy may look at, read once per run.
struct SearchInputs {
  const Environment& env;
  const SystemLayout& layout;
  const python::PythonDiscovery& python;
  const loader::LdSoCache* ld_cache; // nullptr when /etc/ld.so.cache could not be read
  const versions::PackageDatabase* packages = nullptr; // which system package installed a file
  const DirectoryCache* dirs = nullptr;                // nullptr: every name is lstat'ed
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
