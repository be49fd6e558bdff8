#pragma once
// Search strategies: one small class per kind of place a CUDA component can live. Each strategy
// reports sightings (file names that exist there, usable or not) and trace lines; it never
// decides what is selected, never loads anything and never prints.

#include "core/environment.hpp"
#include "core/filesystem.hpp"
#include "core/once_map.hpp"
#include "core/real_path_cache.hpp"
#include "loader/ld_so_cache.hpp"
#include "probes/candidate.hpp"
#include "probes/catalog.hpp"
#include "python/python_environments.hpp"
#include "versions/package_db.hpp"

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cudadiag::probes {

// Directory listings shared by every component's search in a run: each directory is listed once
// (one opendir/getdents pass) and file names are matched in memory, instead of one lstat per name,
// per directory, per component. A directory reached under a second name (/bin and /usr/bin on a
// merged-/usr system, /usr/local/cuda and /usr/local/cuda-13.0) is listed once: listings are shared
// by the directory's identity (device, inode), also while it is being listed. Thread-safe, and
// directories are listed in parallel (a question about one that another thread is listing, under
// either name, waits for that listing only); entries never change once listed (a run is a snapshot: a file
// created during the run may be missed, as a sequential search could miss it).
class DirectoryCache {
public:
  // `names` (sorted: looked up and prefix-matched by binary search) holds every entry when
  // `complete`; not complete past k_max_entries (then use lstat) nor when the directory cannot be read.
  struct Listing : fs::DirectoryNames {
    Listing() { complete = false; }
    bool is_directory = false; // opendir succeeded (a directory, or a link to one)
  };
  // The listing of `dir`, read on the first question about it.
  [[nodiscard]] const Listing& listing(const std::string& dir) const;
  // `dir`'s names (none when it does not exist), or nullptr when they are not all known (over
  // k_max_entries, or a directory that can be searched but not read): readers then list it themselves.
  [[nodiscard]] const std::vector<std::string_view>* names_if_complete(const std::string& dir) const;
  // <toolkit_root>/version.json, parsed on the first question (every component found under that
  // root asks); a discarded value when it is missing, too large or not JSON.
  [[nodiscard]] const versions::ToolkitVersions& toolkit_version_json(const std::string& toolkit_root) const;
  // versions::version_from_dist_info(dir, names) over dir's listing, answered once per run for each
  // directory and list of names (a toolkit's dist-info answers for every binary of nvcc's wheel).
  [[nodiscard]] const std::optional<versions::FoundVersion>&
  dist_info_version(const std::string& dir, std::span<const std::string_view> names) const;
  // The version `read()` finds in the headers of set `set_name` under `include_dir` (a real path),
  // answered once per run for each directory and set: the same directory is sighted under several
  // names and by several searches (/usr/local/cuda/include and /usr/local/cuda-13.0/include, by
  // CUDA_HOME and by the system toolkit), and reading its headers again finds the same macros.
  template <class Read>
  [[nodiscard]] const std::optional<versions::FoundVersion>&
  header_version(const std::string& include_dir, std::string_view set_name, Read&& read) const {
    std::string key = include_dir;
    key += '\0';
    key += set_name;
    return m_header_versions.get(key, std::forward<Read>(read));
  }
  // Whether the listing of `site_dir` shows that `site_dir`/`rel_dir` is no directory: the site
  // directory is none, or it lacks rel_dir's first component (nvidia/, which most wheel directories
  // of most components lie under). known_missing's answer for that one level, without a listing made
  // and looked up for the wheel directory itself; false when unknown (a listing cut short, unreadable).
  [[nodiscard]] bool wheel_dir_known_missing(const std::string& site_dir, std::string_view rel_dir) const;
  // fs::real_path(path), each directory resolved once per run (core/real_path_cache.hpp).
  [[nodiscard]] Expected<std::string> real_path(const std::string& path) const {
    return m_real_paths.real_path(path);
  }
  // fs::file_id(path), stat'ed once per run: the same file is sighted by several searches (CUDA_HOME
  // and the system toolkit both look in /usr/local/cuda/lib64) and the same header directory by
  // every header set that lives in it.
  [[nodiscard]] std::optional<fs::FileId> file_id(const std::string& path) const {
    return m_file_ids.get(path, [&] { return fs::file_id(path); });
  }
  // How many directory names were asked about (for benchmarks and tests).
  [[nodiscard]] std::size_t listed() const;
  static constexpr std::size_t k_max_entries = 200000;

private:
  [[nodiscard]] std::shared_ptr<const Listing> read(const std::string& dir) const;
  // Whether `dir` is known not to exist from a listing of an ancestor read this run: then it is not
  // opened. A question about it is answered the same either way; only the system call is saved.
  [[nodiscard]] bool known_missing(std::string_view dir) const;

  OnceMap<std::shared_ptr<const Listing>> m_listings;
  OnceMap<versions::ToolkitVersions> m_version_json;
  OnceMap<std::optional<fs::FileId>> m_file_ids;
  OnceMap<std::optional<versions::FoundVersion>> m_dist_info_versions;
  OnceMap<std::optional<versions::FoundVersion>> m_header_versions;
  fs::RealPathCache m_real_paths;
  OnceMap<std::shared_ptr<const Listing>> m_by_identity; // keyed "device:inode"
};

// Everything a strategy may look at, read once per run.
struct SearchInputs {
  const Environment& env;
  const SystemLayout& layout;
  const python::PythonDiscovery& python;
  const loader::LdSoCache* ld_cache;                   // nullptr when /etc/ld.so.cache could not be read
  const versions::PackageDatabase* packages = nullptr; // which system package installed a file
  const DirectoryCache* dirs = nullptr;                // nullptr: every name is lstat'ed
};

struct SearchOutput {
  std::vector<Sighting> sightings; // in the strategy's own priority order
  std::vector<std::string> trace;  // what was looked at, and what was there
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
