#pragma once
// What a search saw and what discovery knows about one file (or header directory) that could be a
// component: where it was seen, what it really is, which version it carries, and whether it is
// usable. Plain values: the search strategies (probes/) produce Sightings, discovery/ turns them
// into Candidates and Choices (its names for these types: discovery/candidate.hpp).

#include "core/filesystem.hpp"
#include "elf/elf_file.hpp"
#include "loader/load_outcome.hpp"
#include "versions/version_sources.hpp"

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::probes {

// cuda-pathfinder's search steps, in its priority order. A sighting made by a search that
// cuda-pathfinder does not perform has step `none` and never becomes the Python selection.
enum class PathfinderStep {
  already_loaded, // in the process before it asks (a preload): dlopen(SONAME, RTLD_NOLOAD) finds it
  site_packages,
  conda,
  system_search,
  product_root,
  cuda_path,
  ctk_root,
  system_install_dir, // headers: /usr/include and the like (cuDNN, NCCL, NVSHMEM), last
  none
};
// The value cuda-pathfinder reports as found_via for a step ("site-packages", "system-search", ...);
// for product roots it is the variable's name, which only the sighting knows (see below).
constexpr std::string_view pathfinder_found_via(PathfinderStep step) {
  switch (step) {
  case PathfinderStep::already_loaded: return "was-already-loaded-from-elsewhere";
  case PathfinderStep::site_packages: return "site-packages";
  case PathfinderStep::conda: return "conda";
  case PathfinderStep::system_search: return "system-search";
  case PathfinderStep::product_root: return "product-root";
  case PathfinderStep::cuda_path: return "CUDA_PATH";
  case PathfinderStep::ctk_root: return "system-ctk-root";
  case PathfinderStep::system_install_dir: return "supported_install_dir";
  case PathfinderStep::none: return "";
  }
  return "";
}

// Where the native loader looks, in glibc's order; `none` for sightings the loader never makes.
// `preloaded`: an LD_PRELOAD or /etc/ld.so.preload object, which answers before any search.
enum class LoaderStep { preloaded, ld_library_path, ld_so_cache, default_dirs, none };

// One place a search saw a file. The same file seen twice gives two sightings of one Candidate.
struct Sighting {
  std::string path;       // as found: search dir + file name (not resolved)
  std::string found_via;  // cudadiag's name for the search ("site-packages", "LD_LIBRARY_PATH", ...)
  std::string search_dir; // the directory that was searched
  PathfinderStep pathfinder_step = PathfinderStep::none;
  LoaderStep loader_step = LoaderStep::none;
  // The name that was looked for (a declared SONAME such as "libnvrtc.so.13", the header anchor, the
  // binary's name); for an ld.so.cache entry its key. Empty: the file name of `path`.
  std::string file_name = {};
};

// cuda-pathfinder's found_via for a sighting: the step's value, or the variable that named the
// product root ("CUDNN_PATH", "NCCL_HOME"); "" when cuda-pathfinder would not find it this way.
inline std::string pathfinder_found_via(const Sighting& sighting) {
  return sighting.pathfinder_step == PathfinderStep::product_root
             ? sighting.found_via
             : std::string(pathfinder_found_via(sighting.pathfinder_step));
}

struct Candidate {
  Sighting first;                      // the first sighting, in search order
  std::vector<Sighting> also_found_as; // later sightings of the same file
  std::optional<std::string> realpath; // nullopt for broken symlinks and loops
  std::optional<elf::ElfInfo> elf;     // dynamic libraries only
  std::optional<versions::FoundVersion> version;
  bool is_stub = false;                // the toolkit's link-time stub (a stubs/ dir or stub traits)
  std::optional<std::string> rejected; // why it cannot be used; nullopt when usable
  // For an unusable file: whether glibc's dlopen(SONAME) passes over it and keeps searching
  // (another ELF class or machine, a dangling or looping link) rather than failing on it
  // (empty, truncated or not ELF: "file too short", "invalid ELF header").
  bool loader_skips = false;
  // For an unusable file: whether dlopen of it kills the process (SIGBUS: a PT_LOAD segment lies
  // past the end of a truncated file) instead of returning an error.
  bool crashes = false;
  // Whether cuda-pathfinder's file-system steps pass over it: they take the first name for which
  // os.path.isfile() holds (binaries: and os.access(X_OK)), so a dangling or looping link, a
  // directory or a FIFO is skipped, while an empty, non-ELF or wrong-class file is taken and fails.
  bool pathfinder_skips = false;
  std::map<std::string, bool> features; // e.g. CCCL: {"cub": true, "thrust": true}
  // Set while discovery runs, never in its result: the system package database was still being
  // read when this file was inspected, and `version` (from the other sources) may yet give way to
  // it. discovery::resolve_components asks the database once every component is searched, so that
  // no search waits for the read.
  bool version_awaits_packages = false;

  [[nodiscard]] bool usable() const { return !rejected.has_value(); }
};

// What loading an answer does (loader/load_outcome.hpp): Choice::fails holds glibc's reason.
using loader::LoadOutcome;
using loader::to_string;

// A selection among a component's candidates.
struct Choice {
  std::size_t candidate = 0; // index into the component's candidates
  Sighting via;              // the sighting through which it was chosen
  std::string reason;        // one sentence: why this one
  // Set whenever `outcome` is not `loads`: why (glibc's words, "crashes (SIGBUS): ...", or the
  // dependency cuda-pathfinder loads first). The tool that takes this answer stops here.
  std::optional<std::string> fails = {};
  LoadOutcome outcome = LoadOutcome::loads;
  // The cuda-pathfinder dependency (its component name) whose own load failed first, when that is
  // why this answer fails: the file itself was never opened.
  std::string failed_dependency = {};

  [[nodiscard]] bool loads() const { return outcome == LoadOutcome::loads; }
  // Marks the answer as not loading, for `why`.
  void set_outcome(LoadOutcome what, std::string why) {
    outcome = what;
    fails = what == LoadOutcome::loads ? std::nullopt : std::optional(std::move(why));
  }
};

} // namespace cudadiag::probes
