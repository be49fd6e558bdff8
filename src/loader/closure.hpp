#pragma once
// The dependency closure of one library as glibc's loader would build it, predicted from the
// files alone (nothing is loaded): every DT_NEEDED entry resolved in glibc's order, breadth first,
// an object already loaded under that name or as that file satisfying the need; then the symbol
// check: every version a dependency must define (.gnu.version_r) and every undefined, non-weak
// symbol against the definitions of the objects in the process's scope. What glibc would stop on
// is recorded, never thrown.
//
// glibc's search for a name without a slash (elf/dl-load.c, _dl_map_object):
//   1. DT_RPATH of the object that needs it, then of the object that loaded that one, and so on
//      up the chain, unless the object that needs it has DT_RUNPATH;
//   2. LD_LIBRARY_PATH;
//   3. DT_RUNPATH of the object that needs it (only that object's);
//   4. /etc/ld.so.cache, then 5. the default directories (both skipped under DF_1_NODEFLIB).
// $ORIGIN (and ${ORIGIN}) is the directory of the object as it was opened, $LIB and $PLATFORM
// this machine's values; an empty entry is the current directory. A file of another ELF class or
// machine is passed over; an empty, non-ELF or truncated file, or a directory, stops the load.
// A name with a slash is opened as it is; a relative path (a slash name, a RUNPATH entry without
// $ORIGIN) from the process's working directory; an empty DT_RUNPATH / DT_RPATH names no directory.
// The system's preloads (LD_PRELOAD, /etc/ld.so.preload) come first in every closure.
// Not modelled: the executable's own RPATH and symbols (cudadiag does not know the program),
// glibc-hwcaps subdirectories (searched first by glibc 2.33+), secure-execution mode;
// the load check (load_check.hpp) finds where that makes a prediction wrong.

#include "core/environment.hpp"
#include "loader/ld_so_cache.hpp"
#include "loader/load_outcome.hpp"
#include "loader/object_store.hpp"
#include "loader/preload.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace cudadiag::loader {

// How an object came into the process, in the words of found_via elsewhere in the report.
enum class Route {
  root,            // the library asked for, opened by its path
  preloaded,       // loaded before the root (cuda-pathfinder loads a library's dependencies first)
  ld_preload,      // an LD_PRELOAD entry: in every process, before anything else
  ld_so_preload,   // an /etc/ld.so.preload entry: in every process, after LD_PRELOAD's
  path_in_name,    // a DT_NEEDED entry with a slash, opened as written
  rpath,           // DT_RPATH of the object that needs it or of one that loaded it
  ld_library_path, // LD_LIBRARY_PATH
  runpath,         // DT_RUNPATH of the object that needs it
  ld_so_cache,     // /etc/ld.so.cache
  default_dirs,    // the loader's default directories
};
std::string_view to_string(Route route); // "root", "preloaded", "LD_PRELOAD", "/etc/ld.so.preload",
                                         // "DT_NEEDED path", "DT_RPATH",
                                         // "LD_LIBRARY_PATH", "DT_RUNPATH", "ld.so.cache", "default-dirs"

struct LoadedObject {
  std::string path;                     // as opened: the search directory joined with the name
  const ObjectFile* file = nullptr;     // never null
  std::vector<std::string> names;       // every name it was needed or opened as (glibc's l_libname)
  std::optional<std::size_t> needed_by; // the object whose DT_NEEDED loaded it (glibc's l_loader)
  Route route = Route::root;
  std::string search_dir;                // the directory it was found in ("" for roots and slash names)
  std::vector<std::size_t> dependencies; // what each of its DT_NEEDED entries resolved to, in order
};

// A DT_NEEDED name no directory holds: dlopen fails with "cannot open shared object file".
struct MissingDependency {
  std::string name;
  std::size_t needed_by = 0;
  std::vector<std::string> searched; // the directories looked in, in order
};

// A DT_NEEDED name that led to a file the loader stops at (not ELF, truncated, a directory).
struct BrokenDependency {
  std::string name;
  std::string path;
  std::size_t needed_by = 0;
  std::string error;
};

// "version `V' not found (required by X)": the dependency glibc bound for `file` has version
// definitions, and `version` is not among them.
struct MissingVersion {
  std::string version;
  std::string file; // the DT_NEEDED name the version is required of
  std::size_t needed_by = 0;
  std::size_t bound = 0; // the object loaded for `file`
};

// "undefined symbol: S, version V": no object in the scope defines what `needed_by` references.
struct UnresolvedSymbol {
  std::string symbol;
  std::string version;      // "" when unversioned
  std::string version_file; // the DT_NEEDED name the version is required of; "" when unversioned
  std::size_t needed_by = 0;
  std::optional<std::size_t> bound; // the object loaded for version_file (what was bound instead)
};

// The symbol check could not read an object's tables; its references were not checked.
struct UncheckedObject {
  std::size_t object = 0;
  std::string reason;
};

struct Closure {
  std::vector<LoadedObject> objects; // load order: preloads and their closures, the root, breadth first
  std::size_t root = 0;
  // The root (or a preload) itself cannot be opened: "PATH: invalid ELF header"; objects may be empty.
  std::optional<std::string> root_error;
  std::vector<MissingDependency> missing;
  std::vector<BrokenDependency> broken;
  std::vector<MissingVersion> missing_versions;
  std::vector<UnresolvedSymbol> unresolved;
  std::vector<UncheckedObject> unchecked;
  std::size_t references_checked = 0;
  // The object whose load kills the process (SIGBUS: a truncated file; elf::truncated_load), as
  // "PATH: crashes (SIGBUS): ..."; it is also in root_error or broken.
  std::optional<std::string> crash;
  // The system's preloads (LD_PRELOAD, /etc/ld.so.preload) that could not be loaded: glibc says so
  // on stderr and ignores them ("PATH: why").
  std::vector<std::string> ignored_preloads;

  // Whether dlopen of the root succeeds, as predicted.
  [[nodiscard]] bool loads() const {
    return !root_error && missing.empty() && broken.empty() && missing_versions.empty() && unresolved.empty();
  }
  [[nodiscard]] LoadOutcome outcome() const {
    return crash ? LoadOutcome::crashes : loads() ? LoadOutcome::loads : LoadOutcome::fails;
  }
  // glibc's words for the first thing that stops the load ("" when it loads): the root's own error,
  // a missing or broken dependency, a missing version, an undefined symbol.
  [[nodiscard]] std::string failure() const;
};

// What the loader's search reads besides the files: LD_LIBRARY_PATH, the cache, the default dirs.
struct SearchSetting {
  std::vector<std::string> ld_library_path; // split on ':' and ';'; an empty entry is the current dir
  std::string cwd;
  const loader::LdSoCache* cache = nullptr; // nullptr: unreadable, glibc goes on to the default dirs
  std::vector<std::string> default_dirs;
  std::string lib_token = "lib/x86_64-linux-gnu"; // $LIB
  std::string platform_token = "x86_64";          // $PLATFORM
  // Loaded first into every closure (loader/preload.hpp), each with its own closure.
  std::vector<loader::Preload> preloads;
};
SearchSetting search_setting(const Environment& env, const SystemLayout& layout,
                             const loader::LdSoCache* cache);

// The closure of `root` (opened by its path, found through `root_route` in `root_dir`) in a
// process that loaded `preloads` first, each by its path with RTLD_GLOBAL, in order.
// `store` caches the files across closures. SymbolCheck::skip maps the objects only (what is
// missing or broken), for a quick "does this open" where the symbols are checked later;
// check_in_parallel spreads the objects' symbol reads and checks over threads (one closure whose
// tables are large, a framework's; the libraries' closures are already built in parallel).
enum class SymbolCheck { check, check_in_parallel, skip };
Closure build_closure(const std::string& root, Route root_route, const std::string& root_dir,
                      const std::vector<std::string>& preloads, const SearchSetting& setting,
                      ObjectStore& store, SymbolCheck symbols = SymbolCheck::check);

// $ORIGIN, ${ORIGIN}, $LIB, $PLATFORM in one DT_RPATH / DT_RUNPATH entry of the object at `object_path`.
std::string expand_dynamic_tokens(std::string_view entry, std::string_view object_path,
                                  const SearchSetting& setting);

} // namespace cudadiag::loader
