#pragma once
// The per-user cache of proven loads: what the load check (load_check.hpp) saw when it loaded a
// closure for real, kept so that an unchanged stack is not loaded again on the next run.
//
// Where: $XDG_CACHE_HOME/cudadiag/load-check.json when XDG_CACHE_HOME is an absolute path, else
// $HOME/.cache/cudadiag/load-check.json. The directory is created 0700 and must be owned by the
// user (a directory that is not, or that others may write, is not used); the file is 0600, written
// through output::write_output_file (a temporary file in that directory, fsync, rename).
//
// What an entry answers: a load is proven for one (context, load name, preloads) key, where the
// context is the system root ("/"), the process architecture, the worker executable's identity,
// the loader's configuration (the identity of the ld.so.cache read and of /etc/ld.so.preload, every
// LD_* variable and GLIBC_TUNABLES, the identity of each LD_LIBRARY_PATH directory). The entry
// holds the worker's answer (the link map, or dlerror) and the identity (device, inode, size,
// mtime, ctime) of every file that answer and the prediction name and of the directories they
// were found in. It is used only when every one of those identities is unchanged and the current
// prediction names no file outside it; anything else is a miss and the closure is loaded again.
// Only answers of a worker that ended normally are kept: timeouts, crashes, protocol errors and
// closures the bound cut are never stored.
//
// A cache file that cannot be parsed, is truncated, larger than k_max_bytes, of another format
// version, not a regular file owned by the user, or that holds a malformed entry is ignored as a
// whole (and replaced on the next write); it is never trusted in part.

#include "core/environment.hpp"
#include "core/expected.hpp"
#include "linkage/link_map.hpp"
#include "loader/closure.hpp"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace cudadiag::linkage {

enum class CacheMode {
  off,        // neither read nor written (--no-cache, CUDADIAG_CACHE=0)
  read,       // proven loads are taken from it; nothing is written (the embedded API's default)
  read_write, // and new proofs are written back (the CLI's default)
};

[[nodiscard]] std::string_view to_string(CacheMode mode);

// What the file system says of one path now: stat(2) with symlinks followed; `exists` false when
// it cannot be stat'ed (then every other field is 0).
struct FileIdentity {
  bool exists = false;
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  bool operator==(const FileIdentity&) const = default;
};
FileIdentity identity_of(const std::string& path);

// One proven load, as stored.
struct CachedLoad {
  LinkMapFacts facts;         // what the worker answered
  std::int64_t proven_at = 0; // when (Unix seconds)
  double elapsed_ms = 0;      // how long that load took
};

// How the run used the cache, for the report (linkage.load_check.cache).
struct CacheUse {
  CacheMode mode = CacheMode::off;
  std::string path;       // the cache file; "" when off or no directory could be named
  std::string problem;    // why it was not read or not written ("": no problem)
  std::size_t hits = 0;   // closures answered from it
  std::size_t stored = 0; // proofs added or renewed by this run
  std::size_t facts = 0;  // verification answers taken from it
};

class LoadCache {
public:
  static constexpr std::size_t k_max_entries = 512;
  static constexpr std::size_t k_max_bytes = std::size_t{8} << 20U;
  static constexpr int k_format_version = 1;

  // The cache of `env`'s user under `mode`, read now (mode != off). `executable`: the worker
  // binary; `layout`: the loader files the context names. Never fails: a cache that cannot be used
  // is empty, and use().problem says why.
  static LoadCache open(CacheMode mode, const Environment& env, const std::string& executable,
                        const SystemLayout& layout);
  // A cache at `path` (tests; the directory's rules apply as above).
  static LoadCache open_at(CacheMode mode, const std::string& path, const Environment& env,
                           const std::string& executable, const SystemLayout& layout);

  // The proven load of this closure, or nullopt (a miss). `preloads` as the worker is given them.
  [[nodiscard]] std::optional<CachedLoad> find(const loader::Closure& closure, const std::string& load_name,
                                               const std::vector<std::string>& preloads);
  // Records what a worker that ended normally answered for this closure.
  void store(const loader::Closure& closure, const std::string& load_name,
             const std::vector<std::string>& preloads, const LinkMapFacts& facts, double elapsed_ms);
  // Verification's answers that are facts of the files (what NVRTC and nvJitLink report about
  // themselves; never the driver's, NVML's or anything that asks the driver): the worker's whole
  // outcome for (kind, path), valid while the library (as given and real), its directory, every
  // file in `also` (e.g. the NVRTC builtins it loaded) and their directories, the loader's default
  // directories and the context above are unchanged. Only outcomes with status "ok" are stored.
  [[nodiscard]] std::optional<std::pair<std::string, std::int64_t>> find_fact(const std::string& kind,
                                                                              const std::string& path);
  void store_fact(const std::string& kind, const std::string& path, const std::vector<std::string>& also,
                  std::string outcome);
  // The loader's default directories the facts depend on (the layout's).
  void set_default_dirs(std::vector<std::string> dirs) { m_default_dirs = std::move(dirs); }

  // Writes the cache back when the mode allows and this run added anything; a failure is recorded
  // in use().problem and never fails the run.
  void save();

  [[nodiscard]] const CacheUse& use() const { return m_use; }
  // The key's context (root, architecture, executable, loader configuration) as text, for tests.
  [[nodiscard]] const std::string& context() const { return m_context; }

private:
  struct Entry {
    std::string key;
    std::vector<std::pair<std::string, FileIdentity>> files;
    std::string facts; // encode(LinkMapFacts)
    std::int64_t proven_at = 0;
    double elapsed_ms = 0;
  };
  std::string key_for(const std::string& load_name, const std::vector<std::string>& preloads) const;
  // The entries of the file at `path` (none when it does not exist), or why it is ignored.
  static Expected<std::map<std::string, Entry>> read_entries(const std::string& path);

  [[nodiscard]] std::optional<const Entry*> valid_entry(const std::string& key) const;

  CacheUse m_use;
  std::string m_context;
  std::vector<std::string> m_default_dirs;
  std::map<std::string, Entry> m_entries;
  std::map<std::string, Entry> m_new;
};

// `unix_seconds` as ISO 8601 UTC: "2026-12-07T16:40:00Z".
std::string utc_time(std::int64_t unix_seconds);

// The cache file `env` names, or "" when neither XDG_CACHE_HOME (absolute) nor a home directory is known.
std::string default_cache_path(const Environment& env);

} // namespace cudadiag::linkage
