#include "probes/search_strategies.hpp"

#include "core/filesystem.hpp"
#include "core/once_flag.hpp"
#include "core/read_record.hpp"
#include "core/system_root.hpp"
#include "core/text.hpp"
#include "core/timeline.hpp"
#include "core/unique_fd.hpp"
#include "loader/preload.hpp"

#include <fcntl.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <span>
#include <sys/stat.h>
#include <unordered_set>

namespace cudadiag::probes {

namespace {

bool name_exists(const std::string& path) {
  struct stat st {};
  fs::note_path(path);
  return ::lstat(fs::HostPath(path, fs::FollowLast::no).c_str(), &st) ==
         0; // broken symlinks and loops count: they are reported
}

// The shared listing of `dir`, or nullptr when the search has none (every name is then lstat'ed).
const DirectoryCache::Listing* listing_of(const SearchInputs& inputs, const std::string& dir) {
  return inputs.dirs != nullptr ? &inputs.dirs->listing(dir) : nullptr;
}

// Whether `dir` is a directory, from its shared listing (dir's, or nullptr when the search has none).
bool is_dir(const DirectoryCache::Listing* listing, const std::string& dir) {
  return listing != nullptr ? listing->is_directory : fs::is_directory(dir);
}

bool is_dir(const SearchInputs& inputs, const std::string& dir) {
  return is_dir(listing_of(inputs, dir), dir);
}

// The names in `dir` that start with `prefix`, from the shared listing when the search has one
// (each directory is listed once per run); none when `dir` cannot be listed.
std::vector<std::string> names_with_prefix(const SearchInputs& inputs, const std::string& dir,
                                           std::string_view prefix) {
  std::vector<std::string> found;
  const auto keep = [&](std::string_view name) {
    if (name.starts_with(prefix)) {
      found.emplace_back(name);
    }
  };
  if (const auto* names = inputs.dirs != nullptr ? inputs.dirs->names_if_complete(dir) : nullptr) {
    std::for_each(names->begin(), names->end(), keep);
  } else if (auto entries = fs::list_directory(dir)) {
    std::for_each(entries->begin(), entries->end(), keep);
  }
  return found;
}

// Whether `dir` has an entry `name` (a broken link counts), matched in `listing` (dir's, or nullptr)
// when there is one; names with a '/' (cuda/std/version) are looked up on disk.
bool has_entry(const DirectoryCache::Listing* listing, const std::string& dir, std::string_view name) {
  if (listing == nullptr || name.find('/') != std::string_view::npos) {
    return name_exists(fs::join(dir, name));
  }
  if (!listing->complete) {
    return listing->is_directory && name_exists(fs::join(dir, name));
  }
  return listing->contains(name);
}

bool has_entry(const SearchInputs& inputs, const std::string& dir, std::string_view name) {
  return has_entry(listing_of(inputs, dir), dir, name);
}

// What a directory that lacks `spec`'s files holds, for the trace: the entries whose names start
// like a file that was looked for ("libnvrtc.so.12" beside a missing "libnvrtc.so.13": a SONAME
// cuda-pathfinder does not take), else how many entries there are.
// `listing` is dir's shared listing, or nullptr.
std::string what_was_there(const DirectoryCache::Listing* listing, const ComponentSpec& spec,
                           const std::string& dir) {
  // The sorted names: the shared listing's own, else read here (no listing, or one too long).
  fs::DirectoryNames read_here;
  const bool shared = listing != nullptr && listing->complete;
  if (!shared) {
    auto entries = fs::list_directory_names(dir);
    if (!entries) {
      return "unreadable (" + entries.error().message + ")";
    }
    read_here = std::move(*entries);
  }
  const fs::DirectoryNames& sorted = shared ? static_cast<const fs::DirectoryNames&>(*listing) : read_here;
  const auto& entries = sorted.names;
  // Entries that start like a wanted file name (its stem before ".so"), found by binary search.
  std::vector<std::string_view> similar;
  for (const auto file_name : spec.file_names) {
    const auto stem = file_name.substr(0, std::min(file_name.find(".so"), file_name.size()));
    if (stem.empty() || stem.find('/') != std::string_view::npos) {
      continue;
    }
    for (auto at = sorted.lower_bound(stem); at < entries.size() && entries[at].starts_with(stem); ++at) {
      similar.emplace_back(entries[at]);
    }
  }
  std::sort(similar.begin(), similar.end());
  similar.erase(std::unique(similar.begin(), similar.end()), similar.end());
  std::string names;
  for (const auto file_name : spec.file_names) {
    if (!names.empty()) {
      names += ", ";
    }
    names += file_name;
  }
  if (entries.empty()) {
    return concat("no ", names, " (the directory is empty)");
  }
  if (similar.empty()) {
    return concat("no ", names, " among its ", std::to_string(entries.size()),
                  entries.size() == 1 ? " entry" : " entries");
  }
  std::string listed;
  for (std::size_t i = 0; i < similar.size() && i < 6; ++i) {
    listed += (listed.empty() ? "" : ", ") + std::string(similar[i]);
  }
  if (similar.size() > 6) {
    listed += ", and " + std::to_string(similar.size() - 6) + " more";
  }
  return concat("no ", names, "; similar names there, not looked for: ", listed);
}

// Records a sighting for each of `spec`'s file names present in `dir`, or a trace line saying what
// the directory holds instead. For headers the sighting is the directory holding the anchor file.
// Returns whether anything was seen.
// `listing` is dir's shared listing (asked for once by the caller: each question hashes the path),
// or nullptr when the search has none.
bool look_in_listed_directory(const DirectoryCache::Listing* listing, const ComponentSpec& spec,
                              const std::string& dir, std::string_view found_via,
                              PathfinderStep pathfinder_step, LoaderStep loader_step, SearchOutput& out) {
  bool seen = false;
  for (const auto file_name : spec.file_names) {
    if (!has_entry(listing, dir, file_name)) {
      continue;
    }
    const auto path = fs::join(dir, file_name);
    seen = true;
    Sighting sighting;
    sighting.path = spec.kind == ComponentKind::headers ? dir : path;
    sighting.found_via = std::string(found_via);
    sighting.search_dir = dir;
    sighting.pathfinder_step = pathfinder_step;
    sighting.loader_step = loader_step;
    sighting.file_name = std::string(file_name);
    out.trace.push_back(concat(found_via, ": ", path, " exists"));
    out.sightings.push_back(std::move(sighting));
    if (spec.kind == ComponentKind::headers) {
      break; // one anchor file per header directory
    }
  }
  if (!seen) {
    out.trace.push_back(concat(found_via, ": ", dir, ": ", what_was_there(listing, spec, dir)));
  }
  return seen;
}

bool look_in_directory(const SearchInputs& inputs, const ComponentSpec& spec, const std::string& dir,
                       std::string_view found_via, PathfinderStep pathfinder_step, LoaderStep loader_step,
                       SearchOutput& out) {
  return look_in_listed_directory(listing_of(inputs, dir), spec, dir, found_via, pathfinder_step, loader_step,
                                  out);
}

void trace_missing_dir(SearchOutput& out, std::string_view found_via, const std::string& dir) {
  out.trace.push_back(concat(found_via, ": ", dir, " is not a directory"));
}

// look_in_directory when `dir` is a directory; a trace line saying it is not otherwise.
void look_in_if_directory(const SearchInputs& inputs, const ComponentSpec& spec, const std::string& dir,
                          std::string_view found_via, PathfinderStep pathfinder_step, LoaderStep loader_step,
                          SearchOutput& out) {
  const auto* listing = listing_of(inputs, dir);
  if (is_dir(listing, dir)) {
    look_in_listed_directory(listing, spec, dir, found_via, pathfinder_step, loader_step, out);
  } else {
    trace_missing_dir(out, found_via, dir);
  }
}

// --- Python environments -----------------------------------------------------------------------

// pip wheels in the Python environments' site-packages. cuda-pathfinder's loop is rel-dir-major:
// the CUDA 13 dir in any site dir beats the CUDA 12 dir in the first one. Only the primary
// environment (the interpreter CUDA Python would run in) takes part in the Python selection.
// DirectoryCache::wheel_dir_known_missing when the search has shared listings; false otherwise.
bool top_package_missing(const SearchInputs& inputs, const std::string& site_dir, std::string_view rel_dir) {
  return inputs.dirs != nullptr && inputs.dirs->wheel_dir_known_missing(site_dir, rel_dir);
}

class SitePackagesSearch final : public SearchStrategy {
public:
  [[nodiscard]] std::string_view name() const override { return "site-packages"; }
  [[nodiscard]] bool applies_to(const ComponentSpec& spec) const override { return !spec.wheel_dirs.empty(); }
  void search(const ComponentSpec& spec, const SearchInputs& inputs, SearchOutput& out) const override {
    if (inputs.python.environments.empty()) {
      out.trace.push_back("site-packages: no Python environment found, nothing to search");
    }
    for (const auto& environment : inputs.python.environments) {
      const auto step = environment.primary ? PathfinderStep::site_packages : PathfinderStep::none;
      if (inputs.dirs != nullptr) {
        // Each site directory and its top-level package directories that exist (nvidia/, cuquantum/)
        // are listed once for every component: the wheel directories they lack are then known
        // missing without an open each (site-packages/nvidia/<wheel>/lib for dozens of components).
        for (const auto& site_dir : environment.site_dirs) {
          for (const auto rel_dir : spec.wheel_dirs) {
            if (!top_package_missing(inputs, site_dir, rel_dir)) {
              (void)inputs.dirs->listing(fs::join(site_dir, rel_dir.substr(0, rel_dir.find('/'))));
            }
          }
        }
      }
      for (const auto rel_dir : spec.wheel_dirs) {
        for (const auto& site_dir : environment.site_dirs) {
          const auto dir = fs::join(site_dir, rel_dir);
          if (top_package_missing(inputs, site_dir, rel_dir)) {
            trace_missing_dir(out, name(), dir); // what look_in_if_directory says, without a listing of it
          } else {
            look_in_if_directory(inputs, spec, dir, name(), step, LoaderStep::none, out);
          }
        }
      }
    }
  }
};

// --- copies vendored inside framework wheels ---------------------------------------------------

// The directories of the primary environment where framework wheels keep their own copies of CUDA
// libraries under hashed names (auditwheel's "lib<name>-<8 hex>.so.<version>", its SONAME renamed
// too), or under the SONAME itself: torch 1.x's bundled-CUDA wheels (libcudart-6d56b25a.so.11.0,
// libnvrtc-3a20f2b6.so.11.1, libnvToolsExt-24de1d56.so.1; torch 1.12.1's libcublas.so.10).
constexpr std::array<std::string_view, 1> k_vendoring_dirs = {"torch/lib"};

// "libnvrtc.so.11.1" for "libnvrtc-3a20f2b6.so.11.1": the name without auditwheel's hash; "" when
// `name` has no "-<8 hex>" just before ".so".
std::string without_wheel_hash(std::string_view name) {
  const auto so = name.find(".so");
  if (so == std::string_view::npos || so < 9 || name[so - 9] != '-') {
    return {};
  }
  const auto hash = name.substr(so - 8, 8);
  if (hash.find_first_not_of("0123456789abcdef") != std::string_view::npos) {
    return {};
  }
  return std::string(name.substr(0, so - 9)) + std::string(name.substr(so));
}

class VendoredSearch final : public SearchStrategy {
public:
  [[nodiscard]] std::string_view name() const override { return "vendored"; }
  [[nodiscard]] bool applies_to(const ComponentSpec& spec) const override {
    return spec.kind == ComponentKind::dynamic_lib && spec.packaging != Packaging::driver;
  }
  // A copy counts when its ELF SONAME is its own hashed name and, without the hash, one of `spec`'s
  // SONAMEs: that is what the wheel's libraries were relinked against and what the framework loads.
  // Neither CUDA Python nor the loader takes it (both steps `none`); the sighting's file_name is the
  // SONAME without the hash.
  void search(const ComponentSpec& spec, const SearchInputs& inputs, SearchOutput& out) const override {
    for (const auto& environment : inputs.python.environments) {
      if (!environment.primary) {
        continue;
      }
      for (const auto& site_dir : environment.site_dirs) {
        for (const auto rel_dir : k_vendoring_dirs) {
          const auto dir = fs::join(site_dir, rel_dir);
          const auto* listing = listing_of(inputs, dir);
          fs::DirectoryNames read_here;
          if (listing == nullptr || !listing->complete) {
            auto names = fs::list_directory_names(dir);
            if (!names) {
              continue;
            }
            read_here = std::move(*names);
          }
          const auto& entries = listing != nullptr && listing->complete
                                    ? static_cast<const fs::DirectoryNames&>(*listing).names
                                    : read_here.names;
          for (const auto& entry : entries) {
            // A hashed copy, or one kept under the SONAME itself (torch 1.12's libcublas.so.10).
            auto plain = without_wheel_hash(entry);
            if (plain.empty()) {
              plain = std::string(entry);
            }
            if (std::find(spec.file_names.begin(), spec.file_names.end(), plain) == spec.file_names.end()) {
              continue;
            }
            const auto path = fs::join(dir, entry);
            const auto info = elf::read_elf_info(path);
            if (!info || info->soname != std::string(entry)) {
              out.trace.push_back(
                  concat(name(), ": ", path, " is named like a copy of ", plain, " but its ELF SONAME is ",
                         info && info->soname ? *info->soname : std::string("missing"), ": not counted"));
              continue;
            }
            out.trace.push_back(concat(name(), ": ", path, " is a copy of ", plain, " vendored in ", rel_dir,
                                       " (SONAME ", entry,
                                       "); the framework loads it, CUDA Python and "
                                       "the loader do not"));
            out.sightings.push_back(
                Sighting{path, std::string(name()), dir, PathfinderStep::none, LoaderStep::none, plain});
          }
        }
      }
    }
  }
};

// --- conda -------------------------------------------------------------------------------------

class CondaSearch final : public SearchStrategy {
public:
  [[nodiscard]] std::string_view name() const override { return "conda"; }
  [[nodiscard]] bool applies_to(const ComponentSpec& spec) const override {
    return spec.packaging != Packaging::driver;
  }
  void search(const ComponentSpec& spec, const SearchInputs& inputs, SearchOutput& out) const override {
    // cuda-pathfinder's binary search tests `CONDA_PREFIX is not None`, so a set-but-empty value
    // makes it look in os.path.join("", "bin"): the relative directory bin/ of the working directory.
    if (spec.kind == ComponentKind::binary) {
      if (const auto value = inputs.env.get("CONDA_PREFIX"); value && value->empty()) {
        out.trace.push_back("conda: CONDA_PREFIX is set but empty: cuda-pathfinder searches ./bin (" +
                            fs::join(inputs.env.cwd, "bin") + ")");
        look_in_directory(inputs, spec, fs::join(inputs.env.cwd, "bin"), name(), PathfinderStep::conda,
                          LoaderStep::none, out);
        return;
      }
    }
    const auto prefix = inputs.env.non_empty("CONDA_PREFIX");
    if (!prefix) {
      out.trace.push_back("conda: CONDA_PREFIX is not set (no conda environment active): step skipped");
      return;
    }
    if (!is_dir(inputs, *prefix)) {
      trace_missing_dir(out, name(), *prefix);
      return;
    }
    if (spec.kind == ComponentKind::binary) {
      look_in_directory(inputs, spec, fs::join(*prefix, "bin"), name(), PathfinderStep::conda,
                        LoaderStep::none, out);
      return;
    }
    if (spec.kind == ComponentKind::headers) {
      if (spec.conda_targets_layout) {
        search_conda_headers(inputs, spec, *prefix, out);
      } else {
        search_toolkit_root(spec, inputs, *prefix, name(), PathfinderStep::conda, out);
      }
      return;
    }
    if (!spec.conda_dirs.empty()) { // static libraries: their own conda directories
      for (const auto rel : spec.conda_dirs) {
        look_in_if_directory(inputs, spec, fs::join(*prefix, expand_triple(rel, inputs.layout)), name(),
                             PathfinderStep::conda, LoaderStep::none, out);
      }
      return;
    }
    search_toolkit_root(spec, inputs, *prefix, name(), PathfinderStep::conda, out);
  }

private:
  // cuda-pathfinder anchors a toolkit header set in conda at the single $CONDA_PREFIX/targets/*/
  // directory (skipping the step when there are none or several) and looks in its anchor layout
  // there (include/cccl, include; nvvm/include); the same directories under $CONDA_PREFIX are listed only.
  static void search_conda_headers(const SearchInputs& inputs, const ComponentSpec& spec,
                                   const std::string& prefix, SearchOutput& out) {
    std::vector<std::string> target_roots;
    if (auto targets = fs::list_directory(fs::join(prefix, "targets"))) {
      for (const auto& entry : *targets) {
        const auto root = fs::join(fs::join(prefix, "targets"), entry);
        if (is_dir(inputs, fs::join(root, "include"))) {
          target_roots.push_back(root);
        }
      }
    }
    if (target_roots.size() != 1) {
      out.trace.push_back("conda: " + std::to_string(target_roots.size()) +
                          " targets/*/include directories (cuda-pathfinder needs exactly one)");
    }
    const auto anchors = std::span(spec.toolkit_dirs).first(spec.pathfinder_toolkit_dirs);
    for (const auto& root : target_roots) {
      const auto step = target_roots.size() == 1 ? PathfinderStep::conda : PathfinderStep::none;
      for (const auto rel : anchors) {
        look_in_if_directory(inputs, spec, fs::join(root, rel), "conda", step, LoaderStep::none, out);
      }
    }
    for (const auto rel : anchors) {
      look_in_if_directory(inputs, spec, fs::join(prefix, rel), "conda", PathfinderStep::none,
                           LoaderStep::none, out);
    }
  }
};

// --- The native loader -------------------------------------------------------------------------

class LdLibraryPathSearch final : public SearchStrategy {
public:
  [[nodiscard]] std::string_view name() const override { return "LD_LIBRARY_PATH"; }
  [[nodiscard]] bool applies_to(const ComponentSpec& spec) const override {
    return spec.kind == ComponentKind::dynamic_lib;
  }
  void search(const ComponentSpec& spec, const SearchInputs& inputs, SearchOutput& out) const override {
    const auto value = inputs.env.get("LD_LIBRARY_PATH");
    if (!value || value->empty()) {
      out.trace.push_back("LD_LIBRARY_PATH: not set: step skipped");
      return;
    }
    // The entries are the same for every component of a run: resolved, deduplicated and checked
    // once (5,000 entries x 50 libraries would otherwise be 250,000 checks).
    m_once.call([&] {
      std::unordered_set<std::string> seen;
      for (const auto& entry : split_search_path(*value)) {
        // The loader reads an empty entry as the current directory and a relative one against it.
        auto dir = entry.empty()          ? inputs.env.cwd
                   : entry.front() == '/' ? entry
                                          : fs::join(inputs.env.cwd, entry);
        if (seen.insert(dir).second) {
          const bool directory = is_dir(inputs, dir);
          m_dirs.push_back({std::move(dir), directory});
        }
      }
    });
    std::size_t missing = 0;
    for (const auto& [dir, directory] : m_dirs) {
      if (directory) {
        look_in_directory(inputs, spec, dir, name(), PathfinderStep::system_search,
                          LoaderStep::ld_library_path, out);
      } else if (++missing <= k_missing_traced) {
        trace_missing_dir(out, name(), dir);
      }
    }
    if (missing > k_missing_traced) {
      out.trace.push_back("LD_LIBRARY_PATH: " + std::to_string(missing - k_missing_traced) +
                          " more entries are not directories (env.bad_search_path lists them)");
    }
  }

private:
  static constexpr std::size_t k_missing_traced = 16; // per component; the rest are counted
  mutable OnceFlag m_once;
  mutable std::vector<std::pair<std::string, bool>> m_dirs; // directory, whether it is one
};

// LD_PRELOAD and /etc/ld.so.preload: an object preloaded into every process answers every later
// dlopen of its SONAME (glibc matches loaded objects first), and cuda-pathfinder's first step
// (dlopen(SONAME, RTLD_NOLOAD)) finds it already loaded. A preload is seen as the catalog file its
// SONAME names, whatever its file name; one that cannot be loaded is ignored, as glibc ignores it.
class PreloadSearch final : public SearchStrategy {
public:
  [[nodiscard]] std::string_view name() const override { return "LD_PRELOAD"; }
  [[nodiscard]] bool applies_to(const ComponentSpec& spec) const override {
    return spec.kind == ComponentKind::dynamic_lib;
  }
  void search(const ComponentSpec& spec, const SearchInputs& inputs, SearchOutput& out) const override {
    m_once.call([&] { m_loaded = preloaded_objects(inputs); });
    if (m_loaded.empty()) {
      out.trace.push_back("LD_PRELOAD, /etc/ld.so.preload: nothing preloaded");
      return;
    }
    for (const auto& object : m_loaded) {
      if (std::find(spec.file_names.begin(), spec.file_names.end(), object.soname) == spec.file_names.end()) {
        continue;
      }
      Sighting sighting;
      sighting.path = object.path;
      sighting.found_via = object.source;
      sighting.search_dir = object.search_dir;
      sighting.pathfinder_step = PathfinderStep::already_loaded;
      sighting.loader_step = LoaderStep::preloaded;
      sighting.file_name = object.soname;
      out.trace.push_back(object.source + ": " + object.entry + " => " + object.path + " (SONAME " +
                          object.soname + "), in every process before anything else");
      out.sightings.push_back(std::move(sighting));
    }
  }

private:
  struct Preloaded {
    std::string entry;
    std::string path;
    std::string search_dir;
    std::string soname;
    std::string source;
  };

  // Each preload entry as glibc loads it: a path as written (from the working directory), a name
  // through LD_LIBRARY_PATH, the cache and the default directories; the first file of this
  // process's class and machine. Entries that load nothing are left out.
  static std::vector<Preloaded> preloaded_objects(const SearchInputs& inputs) {
    std::vector<Preloaded> all;
    for (const auto& preload : loader::system_preloads(inputs.env, inputs.layout)) {
      std::vector<std::pair<std::string, std::string>> places; // path, search dir
      if (preload.entry.find('/') != std::string::npos) {
        places.emplace_back(
            preload.entry.front() == '/' ? preload.entry : fs::join(inputs.env.cwd, preload.entry), "");
      } else {
        if (const auto value = inputs.env.get("LD_LIBRARY_PATH"); value && !value->empty()) {
          for (const auto& entry : split_search_path(*value)) {
            const auto dir = entry.empty()          ? inputs.env.cwd
                             : entry.front() == '/' ? entry
                                                    : fs::join(inputs.env.cwd, entry);
            places.emplace_back(fs::join(dir, preload.entry), dir);
          }
        }
        if (const auto* cached =
                inputs.ld_cache != nullptr ? inputs.ld_cache->resolve(preload.entry) : nullptr) {
          places.emplace_back(cached->path, fs::parent(cached->path));
        }
        for (const auto& dir : inputs.layout.default_lib_dirs) {
          places.emplace_back(fs::join(dir, preload.entry), dir);
        }
      }
      for (const auto& [path, dir] : places) {
        auto info = elf::read_elf_info(path);
        if (!info || elf::incompatibility_with_host(*info)) {
          continue; // missing, unreadable, broken (ignored) or of another class (passed over)
        }
        if (info->soname && !elf::truncated_load(path)) {
          all.push_back(
              {preload.entry, path, dir.empty() ? fs::parent(path) : dir, *info->soname, preload.source});
        }
        break;
      }
    }
    return all;
  }

  mutable OnceFlag m_once;
  mutable std::vector<Preloaded> m_loaded;
};

class LdSoCacheSearch final : public SearchStrategy {
public:
  [[nodiscard]] std::string_view name() const override { return "ld.so.cache"; }
  [[nodiscard]] bool applies_to(const ComponentSpec& spec) const override {
    return spec.kind == ComponentKind::dynamic_lib;
  }
  void search(const ComponentSpec& spec, const SearchInputs& inputs, SearchOutput& out) const override {
    if (inputs.ld_cache == nullptr) {
      out.trace.push_back("ld.so.cache: not readable, skipped");
      return;
    }
    for (const auto soname : spec.file_names) {
      // glibc takes one entry per name (the first that fits this process); the others are listed,
      // but dlopen never reaches them, not even when the chosen entry's file is missing.
      const auto* used = inputs.ld_cache->resolve(soname);
      const auto entries = inputs.ld_cache->find_all(soname);
      if (entries.empty()) {
        out.trace.push_back(concat("ld.so.cache: no entry for ", soname, " among its ",
                                   std::to_string(inputs.ld_cache->entries().size()), " entries"));
      }
      for (const auto* entry : entries) {
        if (!entry->matches_host()) {
          out.trace.push_back("ld.so.cache: " + entry->soname + " => " + entry->path + " is for " +
                              entry->arch_label() + ", not this process");
          continue;
        }
        Sighting sighting;
        sighting.path = entry->path;
        sighting.found_via = std::string(name());
        sighting.search_dir = fs::parent(entry->path);
        sighting.pathfinder_step = entry == used ? PathfinderStep::system_search : PathfinderStep::none;
        sighting.loader_step = entry == used ? LoaderStep::ld_so_cache : LoaderStep::none;
        sighting.file_name = std::string(soname);
        out.trace.push_back(
            concat("ld.so.cache: ", entry->soname, " => ", entry->path,
                   entry == used ? "" : " (not used: glibc takes the first entry for a name)"));
        out.sightings.push_back(std::move(sighting));
      }
    }
  }
};

class DefaultDirsSearch final : public SearchStrategy {
public:
  [[nodiscard]] std::string_view name() const override { return "default-dirs"; }
  [[nodiscard]] bool applies_to(const ComponentSpec& spec) const override {
    return spec.kind == ComponentKind::dynamic_lib;
  }
  void search(const ComponentSpec& spec, const SearchInputs& inputs, SearchOutput& out) const override {
    for (const auto& dir : inputs.layout.default_lib_dirs) {
      look_in_if_directory(inputs, spec, dir, name(), PathfinderStep::system_search, LoaderStep::default_dirs,
                           out);
    }
  }
};

// --- Roots named by environment variables ------------------------------------------------------

// CUDNN_PATH, NCCL_HOME: cuda-pathfinder (>= 1.7) searches these product roots before CUDA_PATH.
class ProductRootSearch final : public SearchStrategy {
public:
  [[nodiscard]] std::string_view name() const override { return "product-root"; }
  [[nodiscard]] bool applies_to(const ComponentSpec& spec) const override {
    return !spec.product_root_vars.empty();
  }
  void search(const ComponentSpec& spec, const SearchInputs& inputs, SearchOutput& out) const override {
    for (const auto variable : spec.product_root_vars) {
      const auto root = inputs.env.non_empty(variable);
      if (!root) {
        out.trace.push_back(std::string(variable) + ": not set: step skipped");
        continue;
      }
      for (const auto rel : spec.product_root_dirs) {
        look_in_if_directory(inputs, spec, fs::join(*root, rel), variable, PathfinderStep::product_root,
                             LoaderStep::none, out);
      }
    }
  }
};

// CUDA_PATH, then CUDA_HOME. cuda-pathfinder (>= 1.5) uses CUDA_PATH when set and non-empty, else
// CUDA_HOME; both are listed here, but only the one it uses takes part in the Python selection.
class CudaPathSearch final : public SearchStrategy {
public:
  [[nodiscard]] std::string_view name() const override { return "CUDA_PATH"; }
  // cuda-pathfinder's find_in_cuda_path runs for every library but the driver's (cuDNN and NCCL
  // in a toolkit's lib64 are found there too).
  [[nodiscard]] bool applies_to(const ComponentSpec& spec) const override {
    return spec.packaging != Packaging::driver;
  }
  void search(const ComponentSpec& spec, const SearchInputs& inputs, SearchOutput& out) const override {
    const auto cuda_path = inputs.env.non_empty("CUDA_PATH");
    const auto cuda_home = inputs.env.non_empty("CUDA_HOME");
    if (!cuda_path && !cuda_home) {
      out.trace.push_back("CUDA_PATH: neither CUDA_PATH nor CUDA_HOME is set: step skipped");
    }
    if (cuda_path) {
      search_variable(spec, inputs, "CUDA_PATH", *cuda_path, PathfinderStep::cuda_path, out);
    }
    if (cuda_home) {
      const auto step = cuda_path ? PathfinderStep::none : PathfinderStep::cuda_path;
      search_variable(spec, inputs, "CUDA_HOME", *cuda_home, step, out);
    }
  }

private:
  static void search_variable(const ComponentSpec& spec, const SearchInputs& inputs,
                              std::string_view variable, const std::string& root, PathfinderStep step,
                              SearchOutput& out) {
    if (!is_dir(inputs, root)) {
      trace_missing_dir(out, variable, root);
      return;
    }
    search_toolkit_root(spec, inputs, root, variable, step, out);
  }
};

// cuda-pathfinder's last step for cuDNN, NCCL and NVSHMEM headers: the system include directories
// (/usr/include/<multiarch>, /usr/include, /usr/local/include; /usr/include/nvshmem_* newest first).
class SystemIncludeSearch final : public SearchStrategy {
public:
  [[nodiscard]] std::string_view name() const override { return "supported_install_dir"; }
  [[nodiscard]] bool applies_to(const ComponentSpec& spec) const override {
    return spec.kind == ComponentKind::headers && !spec.system_include_dirs.empty();
  }
  void search(const ComponentSpec& spec, const SearchInputs& inputs, SearchOutput& out) const override {
    for (const auto pattern : spec.system_include_dirs) {
      std::string dir(pattern);
      if (const auto at = dir.find("{multiarch}"); at != std::string::npos) {
        dir.replace(at, 11, inputs.layout.multiarch);
      }
      dir = inputs.layout.system_root + dir;
      if (dir.empty() || dir.back() != '*') {
        look_in_if_directory(inputs, spec, dir, name(), PathfinderStep::system_install_dir, LoaderStep::none,
                             out);
        continue;
      }
      // A trailing glob: the matching directories, highest version first (numeric-aware).
      dir.pop_back();
      const auto parent = fs::parent(dir);
      const auto prefix = fs::basename(dir); // "nvshmem_"
      std::vector<std::string> matches;
      for (auto& entry : names_with_prefix(inputs, parent, prefix)) {
        if (is_dir(inputs, fs::join(parent, entry))) {
          matches.push_back(std::move(entry));
        }
      }
      std::sort(matches.begin(), matches.end(), [&](const std::string& a, const std::string& b) {
        return versions::compare_versions(a.substr(prefix.size()), b.substr(prefix.size())) > 0;
      });
      for (const auto& entry : matches) {
        look_in_directory(inputs, spec, fs::join(parent, entry), name(), PathfinderStep::system_install_dir,
                          LoaderStep::none, out);
      }
    }
  }
};

// Toolkits installed where distributions and NVIDIA's installers put them: /usr/local/cuda and
// /usr/local/cuda-X.Y (newest first). cuda-pathfinder does not look here; native builds and
// users do. For the driver, the toolkit's link-time stubs are listed so that "only the stub is
// here" can be said.
class SystemToolkitSearch final : public SearchStrategy {
public:
  [[nodiscard]] std::string_view name() const override { return "system-ctk"; }
  [[nodiscard]] bool applies_to(const ComponentSpec&) const override { return true; }
  void search(const ComponentSpec& spec, const SearchInputs& inputs, SearchOutput& out) const override {
    // The roots are the same for every component of a run: found once per strategy object.
    m_roots_once.call([&] { m_roots = toolkit_roots(inputs.layout); });
    for (const auto& root : m_roots) {
      if (spec.packaging == Packaging::driver) {
        search_stubs(spec, inputs, root, out);
      } else {
        search_toolkit_root(spec, inputs, root, name(), PathfinderStep::none, out);
      }
    }
  }

private:
  mutable OnceFlag m_roots_once;
  mutable std::vector<std::string> m_roots;

  static std::vector<std::string> toolkit_roots(const SystemLayout& layout) {
    std::vector<std::string> roots;
    for (const auto& parent : layout.toolkit_parents) {
      const auto unversioned = fs::join(parent, "cuda");
      if (fs::is_directory(unversioned)) {
        roots.push_back(unversioned);
      }
      auto entries = fs::list_directory(parent);
      if (!entries) {
        continue;
      }
      std::vector<std::string> versioned;
      for (const auto& entry : *entries) {
        if (entry.rfind("cuda-", 0) == 0 && fs::is_directory(fs::join(parent, entry))) {
          versioned.push_back(fs::join(parent, entry));
        }
      }
      std::sort(versioned.begin(), versioned.end(), [](const std::string& a, const std::string& b) {
        return versions::compare_versions(fs::basename(a).substr(5), fs::basename(b).substr(5)) > 0;
      });
      roots.insert(roots.end(), versioned.begin(), versioned.end());
    }
    // /usr/local/cuda is usually a link to one of the versioned roots: search each directory once.
    std::vector<fs::FileId> seen;
    std::erase_if(roots, [&seen](const std::string& root) {
      const auto id = fs::file_id(root);
      if (!id) {
        return false;
      }
      if (std::find(seen.begin(), seen.end(), *id) != seen.end()) {
        return true;
      }
      seen.push_back(*id);
      return false;
    });
    return roots;
  }

  static void search_stubs(const ComponentSpec& spec, const SearchInputs& inputs, const std::string& root,
                           SearchOutput& out) {
    for (const auto rel : {"lib64/stubs", "lib/stubs", "targets/{triple}/lib/stubs"}) {
      const auto dir = fs::join(root, expand_triple(rel, inputs.layout));
      if (!is_dir(inputs, dir)) {
        continue;
      }
      for (const auto file_name : spec.file_names) {
        // The stub is shipped under the linker name (libcuda.so), not the SONAME.
        const auto soname = std::string(file_name);
        const auto linker_name = soname.substr(0, soname.find(".so") + 3);
        for (const auto& candidate_name : {soname, linker_name}) {
          const auto path = fs::join(dir, candidate_name);
          if (!has_entry(inputs, dir, candidate_name)) {
            continue;
          }
          Sighting sighting{path, "system-ctk", dir, PathfinderStep::none, LoaderStep::none, candidate_name};
          out.trace.push_back("system-ctk: " + path + " exists (toolkit stub directory)");
          out.sightings.push_back(std::move(sighting));
        }
      }
    }
  }
};

// Binaries on PATH. cuda-pathfinder never searches PATH; a shell does.
class PathSearch final : public SearchStrategy {
public:
  [[nodiscard]] std::string_view name() const override { return "PATH"; }
  [[nodiscard]] bool applies_to(const ComponentSpec& spec) const override {
    return spec.kind == ComponentKind::binary;
  }
  void search(const ComponentSpec& spec, const SearchInputs& inputs, SearchOutput& out) const override {
    m_once.call([&] { // the same directories for every binary of a run
      const auto value = inputs.env.get("PATH");
      if (!value) {
        return;
      }
      std::unordered_set<std::string> seen;
      for (const auto& entry : split_search_path(*value)) {
        auto dir = entry.empty() || entry.front() != '/' ? fs::join(inputs.env.cwd, entry) : entry;
        if (is_dir(inputs, dir) && seen.insert(dir).second) {
          m_dirs.push_back(std::move(dir));
        }
      }
    });
    for (const auto& dir : m_dirs) {
      look_in_directory(inputs, spec, dir, name(), PathfinderStep::none, LoaderStep::none, out);
    }
  }

private:
  mutable OnceFlag m_once;
  mutable std::vector<std::string> m_dirs;
};

} // namespace

const DirectoryCache::Listing& DirectoryCache::listing(const std::string& dir) const {
  return *m_listings.get(dir, [&] { return read(dir); });
}

const std::vector<std::string_view>* DirectoryCache::names_if_complete(const std::string& dir) const {
  const auto& listed = listing(dir);
  return listed.complete || !listed.is_directory ? &listed.names : nullptr;
}

const std::optional<versions::FoundVersion>&
DirectoryCache::dist_info_version(const std::string& dir, std::span<const std::string_view> names) const {
  std::string key = dir;
  for (const auto name : names) {
    key += '\0';
    key += name;
  }
  return m_dist_info_versions.get(
      key, [&] { return versions::version_from_dist_info(dir, names, names_if_complete(dir)); });
}

const versions::ToolkitVersions& DirectoryCache::toolkit_version_json(const std::string& toolkit_root) const {
  return m_version_json.get(toolkit_root, [&] { return versions::read_toolkit_version_json(toolkit_root); });
}

bool DirectoryCache::known_missing(std::string_view dir) const {
  // From the nearest ancestor listed already: the next name down is missing from it, or it is not a
  // directory. An ancestor named by "." or ".." (never in a listing) or not listed in full says nothing.
  while (dir.size() > 1 && dir.back() == '/') {
    dir.remove_suffix(1);
  }
  for (auto slash = dir.rfind('/'); slash != std::string_view::npos && slash > 0;
       slash = dir.rfind('/', slash - 1)) {
    const auto child_end = dir.find('/', slash + 1);
    const auto child =
        dir.substr(slash + 1, child_end == std::string_view::npos ? dir.npos : child_end - slash - 1);
    if (child.empty() || child == "." || child == "..") {
      return false;
    }
    if (const auto* known = m_listings.find(std::string(dir.substr(0, slash)))) {
      const auto& ancestor = **known;
      return !ancestor.is_directory || (ancestor.complete && !ancestor.contains(child));
    }
  }
  return false;
}

bool DirectoryCache::wheel_dir_known_missing(const std::string& site_dir, std::string_view rel_dir) const {
  const auto top = rel_dir.substr(0, rel_dir.find('/'));
  if (top.empty() || top == "." || top == "..") {
    return false;
  }
  const auto& site = listing(site_dir);
  return !site.is_directory || (site.complete && !site.contains(top));
}

std::shared_ptr<const DirectoryCache::Listing> DirectoryCache::read(const std::string& dir) const {
  const timeline::Span span("listing", dir);
  auto listing = std::make_shared<Listing>();
  if (known_missing(dir)) {
    return listing; // site-packages/nvidia/<wheel>/lib for every wheel a component may come in
  }
  fs::note_path(dir);
  const UniqueFd handle(::open(fs::HostPath(dir).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK));
  if (handle.get() < 0) {
    // A directory that can be searched but not read (mode 0711) still serves lookups by name.
    listing->is_directory = errno == EACCES && fs::is_directory(dir);
    return listing;
  }
  listing->is_directory = true;
  struct stat st {};
  if (::fstat(handle.get(), &st) != 0) {
    static_cast<fs::DirectoryNames&>(*listing) = fs::read_directory_names(handle.get(), k_max_entries);
    return listing;
  }
  // The same directory under another name (/bin and /usr/bin, read ahead at once from PATH) is
  // listed by whichever name asks first; a question under the other name waits for that listing.
  const auto identity = std::to_string(st.st_dev) + ':' + std::to_string(st.st_ino);
  return m_by_identity.get(identity, [&] {
    static_cast<fs::DirectoryNames&>(*listing) = fs::read_directory_names(handle.get(), k_max_entries);
    return std::shared_ptr<const Listing>(listing);
  });
}

std::size_t DirectoryCache::listed() const {
  return m_listings.size();
}

std::string expand_triple(std::string_view relative_dir, const SystemLayout& layout) {
  std::string out(relative_dir);
  const auto at = out.find("{triple}");
  if (at != std::string::npos) {
    out.replace(at, 8, layout.target_triple);
  }
  return out;
}

void search_toolkit_root(const ComponentSpec& spec, const SearchInputs& inputs, const std::string& root,
                         std::string_view found_via, PathfinderStep step, SearchOutput& out) {
  for (std::size_t i = 0; i < spec.toolkit_dirs.size(); ++i) {
    const auto dir = fs::join(root, expand_triple(spec.toolkit_dirs[i], inputs.layout));
    const auto dir_step = i < spec.pathfinder_toolkit_dirs ? step : PathfinderStep::none;
    look_in_if_directory(inputs, spec, dir, found_via, dir_step, LoaderStep::none, out);
  }
}

std::optional<std::string> derive_toolkit_root(const std::string& library_path) {
  const auto lib_dir = fs::parent(library_path);
  const auto lib_name = fs::basename(lib_dir);
  if (lib_name != "lib64" && lib_name != "lib") {
    return std::nullopt;
  }
  const auto above = fs::parent(lib_dir);
  const auto grandparent = fs::parent(above);
  if (fs::basename(grandparent) == "targets") {
    return fs::parent(grandparent);
  }
  return above;
}

std::vector<std::unique_ptr<SearchStrategy>> all_strategies() {
  std::vector<std::unique_ptr<SearchStrategy>> strategies;
  strategies.push_back(std::make_unique<PreloadSearch>());
  strategies.push_back(std::make_unique<SitePackagesSearch>());
  strategies.push_back(std::make_unique<CondaSearch>());
  strategies.push_back(std::make_unique<LdLibraryPathSearch>());
  strategies.push_back(std::make_unique<LdSoCacheSearch>());
  strategies.push_back(std::make_unique<DefaultDirsSearch>());
  strategies.push_back(std::make_unique<ProductRootSearch>());
  strategies.push_back(std::make_unique<CudaPathSearch>());
  strategies.push_back(std::make_unique<SystemIncludeSearch>());
  strategies.push_back(std::make_unique<SystemToolkitSearch>());
  strategies.push_back(std::make_unique<PathSearch>());
  strategies.push_back(std::make_unique<VendoredSearch>());
  return strategies;
}

} // namespace cudadiag::probes
