#pragma once
// The files the closures open, each read once per run: where it really is, its ELF facts and,
// on first use, its dynamic symbols. Keyed by the path as opened and by file identity (device and
// inode), as glibc recognises an object it has already loaded under another name.

#include "core/expected.hpp"
#include "core/filesystem.hpp"
#include "core/once_flag.hpp"
#include "core/once_map.hpp"
#include "core/real_path_cache.hpp"
#include "elf/elf_file.hpp"
#include "elf/elf_symbols.hpp"

#include <array>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cudadiag::loader {

struct ObjectFile {
  fs::FileId identity;
  std::string realpath;
  Expected<elf::ElfInfo> elf = Error{"not read"};
  // Why glibc's loader passes over the file and keeps searching (another ELF class, byte order
  // or machine); nullopt when it would take it (usable, or broken in a way that stops the load).
  std::optional<std::string> skipped_because;
  // Why a load that reaches this file fails ("invalid ELF header", "not a shared object (ET_EXEC)");
  // nullopt when it loads.
  std::optional<std::string> fails_because;
  // Set with fails_because when the load does not return at all: dlopen dies with SIGBUS on a
  // truncated file (elf::truncated_load).
  bool crashes = false;
};

// Thread-safe: closures of different components are built in parallel over one store. A file is
// read once however many threads ask for it at once (the others wait for that read only).
class ObjectStore {
public:
  // ELF facts already read this run (discovery's candidates), by real path: a file found there is
  // not read again.
  using KnownElf = std::unordered_map<std::string, elf::ElfInfo>;
  ObjectStore() = default;
  explicit ObjectStore(std::shared_ptr<const KnownElf> known) : m_known(std::move(known)) {}
  ObjectStore(const ObjectStore&) = delete;
  ObjectStore& operator=(const ObjectStore&) = delete;
  // The same facts for a store already in use (the frameworks' closures start before discovery
  // ends): files opened from now on are looked up there first.
  void add_known(std::shared_ptr<const KnownElf> known);

  // The regular file at `path` (symlinks followed), or nullptr when there is none: missing,
  // a dangling link or a loop, not readable (glibc's open fails and the search goes on).
  // A directory or other non-file opens and fails (fails_because set), as glibc's read does.
  const ObjectFile* open(const std::string& path);
  // Whether `dir` is a directory (symlinks followed), asked once per run: a search directory that
  // is not one holds no file, and glibc marks it so after its first miss instead of trying every
  // name in it (an LD_LIBRARY_PATH of thousands of missing entries, every dependency of every closure).
  bool is_directory(const std::string& dir) {
    return m_directories.get(dir, [&] { return fs::is_directory(dir); });
  }
  // `file`'s dynamic symbols, read on the first call. `file` must come from this store's open().
  // After release_symbols(), a file read before it answers Error{k_symbols_released}.
  const Expected<elf::DynamicSymbols>& symbols(const ObjectFile& file);
  [[nodiscard]] std::size_t files_read() const;
  // Frees the symbol tables read so far, but for their string tables and for the tables of a heap
  // block of 128 KiB or more. For the end of a run's symbol checks, whose results hold copies of
  // the names they report: the tables are the largest part of a run's heap (some 500 KB for the
  // CUDA toolkit's libraries), and the report rendered next reuses that memory instead of touching
  // fresh pages, each of which costs a page fault (about 2 µs in a virtual machine). What stays
  // with the store is what freeing would unmap rather than give back to the heap: the larger
  // string tables are mappings of the files, glibc maps the blocks from 128 KiB up (a framework's
  // library of tens of thousands of symbols), and an unmapping interrupts every CPU the process ran
  // on (measured on a 16-CPU host: +0.3 ms when the string tables were unmapped here; at exit they
  // cost nothing).
  // One caller at a time. It must hold no reference from symbols() and run nothing that reads one
  // meanwhile; a table still being read (a framework's read-ahead, whose file no closure needed) is
  // left as it is.
  void release_symbols();
  static constexpr std::string_view k_symbols_released =
      "the symbol table was released after the symbol checks";

  // The symbol check of an object that comes out clean among its own dependencies, kept for the
  // other closures that load the same object with the same dependencies (`key` names them all,
  // see symbol_check.cpp): the references it checked, or nullopt when it is not clean that way.
  // `check()` runs on the first question about `key` only.
  template <class Check>
  const std::optional<std::size_t>& clean_check(const std::string& key, Check&& check) {
    return m_clean_checks.get(key, std::forward<Check>(check));
  }

private:
  struct IdentityHash {
    std::size_t operator()(const fs::FileId& id) const noexcept {
      return std::hash<std::uint64_t>()(id.inode * 1000003U ^ id.device);
    }
  };
  // One file: its facts, read once, and its symbols, read on first use. The ObjectFile handed out
  // is the slot's base, so symbols() finds its slot without a lookup.
  struct Slot : ObjectFile {
    OnceFlag read_once;
    OnceFlag symbols_once;
    Expected<elf::DynamicSymbols> symbols = Error{"not read"};
  };
  // The slots by file identity, spread over shards with a lock each, taken once per path opened
  // (m_by_path answers every later open without a lock): one reader-writer lock for every open made
  // the closures' threads sleep on each other (measured on a 16-CPU host: hundreds of futex waits
  // per run, from ObjectStore::open).
  struct alignas(64) IdentityShard {
    std::mutex mutex;
    std::unordered_map<fs::FileId, std::unique_ptr<Slot>, IdentityHash> slots;
  };
  static constexpr std::size_t k_identity_shards = 16;

  [[nodiscard]] Slot& slot_of(const fs::FileId& id);
  [[nodiscard]] std::optional<elf::ElfInfo> known_elf(const std::string& realpath) const;

  mutable std::mutex m_known_mutex; // guards m_known (replaced once, read once per file)
  std::shared_ptr<const KnownElf> m_known;
  fs::RealPathCache m_real_paths; // the closures open hundreds of files from a few directories
  mutable std::array<IdentityShard, k_identity_shards> m_identities;
  OnceMap<const ObjectFile*> m_by_path; // nullptr: nothing to open there
  OnceMap<bool> m_directories;          // is_directory
  OnceMap<std::optional<std::size_t>> m_clean_checks;
  std::vector<std::shared_ptr<const void>> m_released_string_tables; // see release_symbols()
  std::vector<elf::DynamicSymbols> m_unreleased_tables;              // likewise
};

} // namespace cudadiag::loader
