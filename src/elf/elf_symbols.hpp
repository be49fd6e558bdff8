#pragma once
// The dynamic symbols of a shared object, read the way glibc's loader reads them: .dynsym and
// .dynstr through DT_SYMTAB / DT_STRTAB, the symbol count from DT_GNU_HASH (or DT_HASH), the
// versions from .gnu.version (DT_VERSYM), .gnu.version_r (DT_VERNEED) and .gnu.version_d
// (DT_VERDEF). Only those tables are read (tens to hundreds of kilobytes for the largest CUDA
// library), with bounded reads; a lookup goes through the GNU hash table as glibc's do_lookup
// does. Hostile counts, offsets past the end of the file and chains that run off their table are
// an Error or a table that is not used; nothing here loops or allocates in proportion to a claim
// the file cannot back.

#include "core/expected.hpp"
#include "elf/elf_file.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace cudadiag::elf {

// A symbol an object needs from elsewhere: undefined in its .dynsym.
// Views: into the string table of the DynamicSymbols that lists the reference (valid as long as it,
// or a copy of it, lives), or into whatever a caller builds one from.
struct SymbolReference {
  std::string_view name;
  std::string_view version;      // the version required ("GLIBC_2.34", "libnvJitLink.so.12"); "" = none
  std::string_view version_file; // the DT_NEEDED name the version is required of; "" = unversioned
  bool weak = false;             // STB_WEAK: may stay undefined
};

// A version an object requires of one of its dependencies (one .gnu.version_r entry).
struct VersionNeed {
  std::string file;    // vn_file: a DT_NEEDED name
  std::string version; // vna_name
  bool weak = false;   // VER_FLG_WEAK: the loader does not stop when it is missing
};

class DynamicSymbols {
public:
  // The undefined, non-local symbols, in .dynsym order.
  [[nodiscard]] const std::vector<SymbolReference>& references() const { return m_references; }
  [[nodiscard]] const std::vector<VersionNeed>& version_needs() const { return m_version_needs; }
  // Whether the object has .gnu.version_d at all (glibc checks version needs only against such objects).
  [[nodiscard]] bool has_version_definitions() const { return !m_version_names.empty(); }
  // Whether .gnu.version_d defines `version` (the base entry, the object's own name, included).
  [[nodiscard]] bool defines_version(std::string_view version) const;
  // Whether this object's definitions satisfy `reference`: a defined, non-local symbol of an
  // allowed type with that name whose version matches as glibc's check_match decides.
  [[nodiscard]] bool defines(const SymbolReference& reference) const;
  // The same, with gnu_hash(reference.name) computed once by a caller that asks many objects.
  [[nodiscard]] bool defines(const SymbolReference& reference, std::uint32_t name_hash) const;
  [[nodiscard]] std::size_t symbol_count() const { return m_symbols.size(); }
  // Whether lookups use the GNU hash table (false: the file has none, or it failed its checks).
  [[nodiscard]] bool uses_gnu_hash() const { return m_gnu.usable; }
  // What holds .dynstr (a mapping of the file's pages, or a buffer of its own): a holder that
  // outlives this object keeps the references' names valid, and keeps a mapping from being unmapped.
  [[nodiscard]] std::shared_ptr<const void> string_table() const { return m_strings; }
  // The bytes of its largest heap block (one of its tables), for a caller deciding whether freeing
  // it would give memory back to the heap or unmap it (glibc maps blocks from 128 KiB up).
  [[nodiscard]] std::size_t largest_heap_block() const;

private:
  friend class SymbolTableReader;

  struct Symbol {
    std::uint32_t name = 0; // offset in m_strings
    std::uint16_t section = 0;
    std::uint8_t info = 0;
    std::uint16_t version = 0;  // .gnu.version entry; 0 when the object has none
    bool defined_value = false; // st_value != 0 or SHN_ABS or TLS
  };
  struct GnuHash {
    bool usable = false;
    std::uint32_t symoffset = 0;
    std::uint32_t shift = 0;
    std::uint32_t word_bits = 64;
    std::vector<std::uint64_t> bloom;
    std::vector<std::uint32_t> buckets;
    std::vector<std::uint32_t> chains;
  };

  [[nodiscard]] std::string_view name_of(const Symbol& symbol) const;
  [[nodiscard]] bool has_name(const Symbol& symbol, std::string_view name) const;
  [[nodiscard]] bool matches(std::uint32_t index, const SymbolReference& reference, int& versions_seen) const;

  [[nodiscard]] std::string_view strings() const { return m_string_view; }

  // .dynstr: a mapping of the file's pages or a buffer of its own, held by m_strings, so that the
  // references' views survive moves and copies of this object.
  std::shared_ptr<const void> m_strings;
  std::string_view m_string_view;
  std::vector<Symbol> m_symbols;
  bool m_has_versym = false;
  GnuHash m_gnu;
  // When the GNU hash is not usable. Owning keys: a view into m_strings would dangle once this
  // object is moved (a short string's bytes live inside the object; found by the elf fuzz target).
  std::unordered_multimap<std::string, std::uint32_t> m_by_name;
  std::unordered_map<std::uint16_t, std::string> m_version_names; // vd_ndx -> name
  std::vector<SymbolReference> m_references;
  std::vector<VersionNeed> m_version_needs;
};

// Bounds on what one object may claim.
inline constexpr std::uint64_t k_max_dynamic_symbols = std::uint64_t{1} << 22U;
inline constexpr std::uint64_t k_max_dynamic_strings = std::uint64_t{64} << 20U;
inline constexpr std::uint64_t k_max_version_entries = 4096;

// The symbols of `path`, whose header facts are `info` (read_elf_info). Errors are sentences:
// "no dynamic symbol table", "no DT_HASH or DT_GNU_HASH: the symbol count is unknown",
// "symbol table of 5000000 entries exceeds the file", "DT_VERNEED entry 3 lies outside the file".
Expected<DynamicSymbols> read_dynamic_symbols(const std::string& path, const ElfInfo& info);
// The same over an in-memory image of the whole file.
Expected<DynamicSymbols> parse_dynamic_symbols(std::span<const std::byte> image, const ElfInfo& info);

// The GNU hash of a symbol name (dl_new_hash).
std::uint32_t gnu_hash(std::string_view name);

} // namespace cudadiag::elf
