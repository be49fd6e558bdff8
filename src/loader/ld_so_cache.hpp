#pragma once
// The dynamic loader's cache, /etc/ld.so.cache, parsed directly from its bytes (ldconfig is never
// run). Supports the three layouts glibc's loader reads: the new format ("glibc-ld.so.cache1.1"),
// the compat layout (old "ld.so-1.7.0" header and entries followed by a new-format table, which
// then takes precedence, as in glibc) and the old format alone (libc5 / glibc < 2.2; parsed,
// with hwcap 0). Every offset is bounds-checked; a corrupt cache is an Error, never a crash.

#include "core/expected.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cudadiag::loader {

inline constexpr std::string_view k_default_ld_so_cache_path = "/etc/ld.so.cache";
// Larger caches are refused rather than read (a real one is tens of kilobytes).
inline constexpr std::size_t k_max_ld_so_cache_size = std::size_t{64} << 20U;

// Entry flags, as glibc's ldconfig writes them: a type in the low byte, an ABI in the next.
inline constexpr std::int32_t k_flag_type_mask = 0x00ff;
inline constexpr std::int32_t k_flag_elf = 0x0001;       // any ELF, no ABI recorded
inline constexpr std::int32_t k_flag_elf_libc6 = 0x0003; // glibc
inline constexpr std::int32_t k_flag_abi_mask = 0xff00;
inline constexpr std::int32_t k_flag_x8664_lib64 = 0x0300;
inline constexpr std::int32_t k_flag_x8664_libx32 = 0x0800;
inline constexpr std::int32_t k_flag_aarch64_lib64 = 0x0a00;
// hwcap with this bit set names a glibc-hwcaps subdirectory (e.g. x86-64-v3) in the cache extension.
inline constexpr std::uint64_t k_hwcap_extension = std::uint64_t{1} << 62U;

struct LdCacheEntry {
  std::string soname;      // key, e.g. "libcuda.so.1"
  std::string path;        // value, e.g. "/usr/lib/x86_64-linux-gnu/libcuda.so.1"
  std::int32_t flags = 0;  // k_flag_elf_libc6 | an ABI flag such as k_flag_x8664_lib64
  std::uint64_t hwcap = 0; // 0 for ordinary entries; always 0 in the old format

  // Whether this process's loader accepts the entry: the same test as glibc's
  // _dl_cache_check_flags (x86-64: flags == 0x0303; aarch64: flags == 0x0a03).
  [[nodiscard]] bool matches_host() const;
  // The ABI in words: "x86-64", "aarch64", "x32", "i386" (libc6 without ABI bits on an x86 host,
  // "libc6" elsewhere), "ELF" (flags 1), ... or "flags 0x1234" for anything unknown.
  [[nodiscard]] std::string arch_label() const;
};

enum class LdCacheFormat { new_format, compat, old_format };

class LdSoCache {
public:
  LdSoCache() = default;
  LdSoCache(std::vector<LdCacheEntry> entries, LdCacheFormat format);

  // Entries in file order. ldconfig sorts them so that glibc's lookup takes the first usable one.
  [[nodiscard]] const std::vector<LdCacheEntry>& entries() const { return m_entries; }
  // Which layout the file used.
  [[nodiscard]] LdCacheFormat format() const { return m_format; }

  // Every entry whose soname equals `soname`, in file order (whatever the architecture).
  [[nodiscard]] std::vector<const LdCacheEntry*> find_all(std::string_view soname) const;

  // What glibc's dlopen(soname) would take from the cache for this process, or nullptr: the first
  // entry with that soname that matches_host() and has hwcap 0. Entries with hwcap != 0
  // (glibc-hwcaps subdirectories, legacy hwcap dirs) depend on CPU features this does not evaluate:
  // they are used only when no hwcap-0 entry matches, the first such one then.
  [[nodiscard]] const LdCacheEntry* resolve(std::string_view soname) const;

private:
  // The entries with `soname`, as a range of m_by_soname.
  [[nodiscard]] std::pair<std::vector<std::uint32_t>::const_iterator,
                          std::vector<std::uint32_t>::const_iterator>
  with_soname(std::string_view soname) const;

  std::vector<LdCacheEntry> m_entries;
  LdCacheFormat m_format = LdCacheFormat::new_format;
  // Indices into m_entries sorted by soname, then file order: a run asks for hundreds of names
  // (every search, every closure's dependencies) in a cache of hundreds or thousands of entries.
  std::vector<std::uint32_t> m_by_soname;
};

// Parses a whole cache image. Errors: "empty file", "not an ld.so.cache (bad magic)",
// "truncated header", "unsupported ld.so.cache version \"1.2\"", "truncated: header says 900 entries
// but file holds 12", "entry 3: string offset 70000 out of range (file holds 4096 bytes)",
// "entry 3: string is not NUL-terminated", "cache written for a big-endian machine, this one is
// little-endian" (glibc ignores such a cache).
Expected<LdSoCache> parse_ld_so_cache(std::span<const std::byte> bytes);

// Whether `bytes` (a file's first bytes) could be a loader cache, however damaged: empty (glibc reads
// that as no cache), or starting with the new or the old format's magic or a start of one. /etc/passwd
// cannot.
bool could_be_ld_so_cache(std::span<const std::byte> bytes);

// Reads and parses `path` (at most k_max_ld_so_cache_size bytes). Open failures read
// "cannot open /etc/ld.so.cache: No such file or directory".
Expected<LdSoCache> read_ld_so_cache(const std::string& path = std::string(k_default_ld_so_cache_path));

// For tests and synthetic fixtures: a valid new-format cache holding `entries` in the given order
// (glibc's binary search needs ldconfig's sort order; pass entries sorted if a real loader will
// read the result), in this machine's byte order.
std::string build_ld_so_cache(const std::vector<LdCacheEntry>& entries);

} // namespace cudadiag::loader
