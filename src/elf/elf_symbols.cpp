#include "elf/elf_symbols.hpp"

#include "core/read_record.hpp"
#include "core/system_root.hpp"
#include "elf/byte_source.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <optional>
#include <sys/stat.h>

namespace cudadiag::elf {
namespace {

using detail::ByteSource;
using detail::FileSource;
using detail::SpanSource;

constexpr std::uint16_t k_shn_undef = 0;
constexpr std::uint16_t k_shn_abs = 0xfff1;
constexpr unsigned k_stb_local = 0;
constexpr unsigned k_stb_weak = 2;
constexpr unsigned k_stt_tls = 6;
// STT_NOTYPE, OBJECT, FUNC, COMMON, TLS, GNU_IFUNC: the types glibc's lookup accepts (ALLOWED_STT).
constexpr unsigned k_allowed_types =
    (1U << 0U) | (1U << 1U) | (1U << 2U) | (1U << 5U) | (1U << 6U) | (1U << 10U);
constexpr std::uint16_t k_versym_hidden = 0x8000;
constexpr std::uint16_t k_versym_index = 0x7fff;
constexpr std::uint16_t k_ver_flg_weak = 0x2;
// Chain entries read per step while counting symbols: a chain is a handful of entries, so the first
// step is small (served by the file's read window); a longer one doubles the step, up to the largest.
constexpr std::uint64_t k_first_chain_block = 64;
constexpr std::uint64_t k_chain_block = 4096;

class SymbolTableReaderBase {
public:
  SymbolTableReaderBase(const ByteSource& source, const ElfInfo& info) : m_source(source), m_info(info) {}

protected:
  // `length` bytes at `offset`, or nullopt unless they all lie in the file.
  [[nodiscard]] std::optional<detail::ByteBuffer> bytes_at(std::uint64_t offset, std::uint64_t length) const {
    return m_source.bytes(offset, length);
  }
  // The same for the large tables, mapped where the source allows (see ByteSource::range).
  [[nodiscard]] std::optional<detail::Bytes> table_at(std::uint64_t offset, std::uint64_t length) const {
    return m_source.range(offset, length);
  }
  [[nodiscard]] std::uint64_t field(std::span<const std::byte> bytes, std::size_t at,
                                    std::size_t width) const {
    return detail::load(bytes, at, width, m_info.little_endian);
  }

  const ByteSource& m_source;
  const ElfInfo& m_info;
};

// Whether a symbol entry gives its object's definition: a value, or an absolute or TLS symbol (whose
// value may be 0).
bool has_defined_value(std::uint64_t value, std::uint16_t section, std::uint8_t info) {
  return value != 0 || section == k_shn_abs || (info & 0xfU) == k_stt_tls;
}

} // namespace

// Reads the tables of one object into a DynamicSymbols (a friend, so it fills the private parts).
class SymbolTableReader : SymbolTableReaderBase {
public:
  using SymbolTableReaderBase::SymbolTableReaderBase;

  Expected<DynamicSymbols> read() {
    if (!m_info.tables) {
      return Error{"no dynamic symbol table"};
    }
    const auto& tables = *m_info.tables;
    const bool is64 = m_info.elf_class == ElfClass::elf64;
    const std::uint64_t symbol_size = is64 ? 24 : 16;
    if (tables.syment != symbol_size) {
      return Error{"unexpected symbol entry size " + std::to_string(tables.syment)};
    }
    if (tables.strtab_size > k_max_dynamic_strings) {
      return Error{"string table of " + std::to_string(tables.strtab_size) + " bytes is too large"};
    }
    // Mapped or read whole: a C++ library's .dynstr runs to megabytes (libtorch_cpu.so's).
    auto strings = table_at(tables.strtab, tables.strtab_size);
    if (!strings) {
      return Error{"string table lies outside the file"};
    }
    m_result.m_strings = std::move(strings->keep);
    m_result.m_string_view =
        std::string_view(reinterpret_cast<const char*>(strings->view.data()), strings->view.size());

    read_gnu_hash(is64);
    auto count = symbol_count();
    if (!count) {
      return count.error();
    }
    if (auto done = read_symbols(*count, symbol_size, is64); !done) {
      return done.error();
    }
    if (auto done = read_version_definitions(); !done) {
      return done.error();
    }
    if (auto done = read_version_needs(); !done) {
      return done.error();
    }
    collect_references();
    if (!m_result.m_gnu.usable) {
      for (std::uint32_t index = 1; index < m_result.m_symbols.size(); ++index) {
        m_result.m_by_name.emplace(std::string(m_result.name_of(m_result.m_symbols[index])), index);
      }
    }
    return std::move(m_result);
  }

private:
  // The GNU hash table's header, bloom filter and buckets; its chains once the count is known.
  void read_gnu_hash(bool is64) {
    auto& gnu = m_result.m_gnu;
    const auto& tables = *m_info.tables;
    if (!tables.gnu_hash) {
      return;
    }
    const auto header = bytes_at(*tables.gnu_hash, 16);
    if (!header) {
      return;
    }
    const auto nbuckets = field(*header, 0, 4);
    gnu.symoffset = static_cast<std::uint32_t>(field(*header, 4, 4));
    const auto bloom_words = field(*header, 8, 4);
    gnu.shift = static_cast<std::uint32_t>(field(*header, 12, 4));
    gnu.word_bits = is64 ? 64 : 32;
    const bool power_of_two = bloom_words != 0 && (bloom_words & (bloom_words - 1)) == 0;
    if (nbuckets == 0 || nbuckets > k_max_dynamic_symbols || !power_of_two ||
        bloom_words > k_max_dynamic_symbols || gnu.symoffset > k_max_dynamic_symbols) {
      return;
    }
    const std::uint64_t word = is64 ? 8 : 4;
    const auto bloom = table_at(*tables.gnu_hash + 16, bloom_words * word);
    const auto buckets = table_at(*tables.gnu_hash + 16 + bloom_words * word, nbuckets * 4);
    if (!bloom || !buckets) {
      return;
    }
    gnu.bloom.resize(static_cast<std::size_t>(bloom_words));
    for (std::size_t i = 0; i < gnu.bloom.size(); ++i) {
      gnu.bloom[i] = field(*bloom, i * word, static_cast<std::size_t>(word));
    }
    gnu.buckets.resize(static_cast<std::size_t>(nbuckets));
    for (std::size_t i = 0; i < gnu.buckets.size(); ++i) {
      gnu.buckets[i] = static_cast<std::uint32_t>(field(*buckets, i * 4, 4));
    }
    m_chains_offset = *tables.gnu_hash + 16 + bloom_words * word + nbuckets * 4;
    gnu.usable = true;
  }

  // DT_HASH's nchain, else the GNU hash's: one past the end of the chain of the highest bucket.
  Expected<std::uint64_t> symbol_count() {
    const auto& tables = *m_info.tables;
    auto& gnu = m_result.m_gnu;
    std::optional<std::uint64_t> count;
    if (tables.sysv_hash) {
      if (const auto header = bytes_at(*tables.sysv_hash, 8)) {
        count = field(*header, 4, 4);
      }
    }
    if (gnu.usable) {
      const auto from_gnu = count_from_gnu_hash();
      if (!from_gnu) {
        gnu.usable = false;
      } else if (!count) {
        count = from_gnu;
      }
    }
    if (!count) {
      return Error{"no DT_HASH or DT_GNU_HASH: the symbol count is unknown"};
    }
    if (*count > k_max_dynamic_symbols) {
      return Error{"symbol table claims " + std::to_string(*count) + " entries"};
    }
    if (gnu.usable) { // the chains cover the symbols from symoffset on
      const std::uint64_t chain_count = *count > gnu.symoffset ? *count - gnu.symoffset : 0;
      const auto chains = table_at(m_chains_offset, chain_count * 4);
      if (!chains || gnu.symoffset > *count) {
        gnu.usable = false;
      } else {
        gnu.chains.resize(static_cast<std::size_t>(chain_count));
        for (std::size_t i = 0; i < gnu.chains.size(); ++i) {
          gnu.chains[i] = static_cast<std::uint32_t>(field(*chains, i * 4, 4));
        }
      }
    }
    return *count;
  }

  std::optional<std::uint64_t> count_from_gnu_hash() const {
    const auto& gnu = m_result.m_gnu;
    std::uint32_t highest = 0;
    for (const auto bucket : gnu.buckets) {
      if (bucket != 0 && bucket < gnu.symoffset) {
        return std::nullopt; // a bucket pointing below the hashed symbols: a corrupt table
      }
      highest = std::max(highest, bucket);
    }
    if (highest == 0) {
      return gnu.symoffset;
    }
    // Walk the last chain to its end bit, a block of entries at a time, never past the file.
    std::uint64_t index = highest;
    for (std::uint64_t block_entries = k_first_chain_block; index < k_max_dynamic_symbols;
         block_entries = std::min(block_entries * 2, k_chain_block)) {
      const std::uint64_t first = index - gnu.symoffset;
      const std::uint64_t available = (m_source.size() - std::min(m_source.size(), m_chains_offset)) / 4;
      if (first >= available) {
        return std::nullopt;
      }
      const std::uint64_t take = std::min(block_entries, available - first);
      const auto block = bytes_at(m_chains_offset + first * 4, take * 4);
      if (!block) {
        return std::nullopt;
      }
      for (std::uint64_t i = 0; i < take; ++i, ++index) {
        if ((field(*block, static_cast<std::size_t>(i * 4), 4) & 1U) != 0) {
          return index + 1;
        }
      }
    }
    return std::nullopt;
  }

  Expected<bool> read_symbols(std::uint64_t count, std::uint64_t symbol_size, bool is64) {
    const auto& tables = *m_info.tables;
    const auto table = table_at(tables.symtab, count * symbol_size);
    if (!table) {
      return Error{"symbol table of " + std::to_string(count) + " entries exceeds the file"};
    }
    std::optional<detail::Bytes> versions;
    if (tables.versym) {
      versions = table_at(*tables.versym, count * 2);
      if (!versions) {
        return Error{"symbol version table of " + std::to_string(count) + " entries exceeds the file"};
      }
      m_result.m_has_versym = true;
    }
    auto& symbols = m_result.m_symbols;
    symbols.resize(static_cast<std::size_t>(count));
    if (is64 && m_info.little_endian && std::endian::native == std::endian::little &&
        read_symbols_elf64_native(*table, versions ? versions->view.data() : nullptr, symbol_size)) {
      return true;
    }
    for (std::size_t i = 0; i < symbols.size(); ++i) {
      const std::size_t at = i * static_cast<std::size_t>(symbol_size);
      auto& symbol = symbols[i];
      symbol.name = static_cast<std::uint32_t>(field(*table, at, 4));
      std::uint64_t value = 0;
      if (is64) {
        symbol.info = static_cast<std::uint8_t>(field(*table, at + 4, 1));
        symbol.section = static_cast<std::uint16_t>(field(*table, at + 6, 2));
        value = field(*table, at + 8, 8);
      } else {
        value = field(*table, at + 4, 4);
        symbol.info = static_cast<std::uint8_t>(field(*table, at + 12, 1));
        symbol.section = static_cast<std::uint16_t>(field(*table, at + 14, 2));
      }
      symbol.defined_value = has_defined_value(value, symbol.section, symbol.info);
      if (versions) {
        symbol.version = static_cast<std::uint16_t>(field(*versions, i * 2, 2));
      }
    }
    return true;
  }

  // read_symbols for the common case, a little-endian ELF64 object on a little-endian host: the
  // fields are copied straight out of each entry (the table's size was checked against `count`
  // when it was read), without a bounds check per field. libstdc++'s 6,000 entries, libc's 3,000.
  // False, having read nothing, when the entries are not laid out as assumed (the general loop reads them).
  bool read_symbols_elf64_native(std::span<const std::byte> table, const std::byte* versions,
                                 std::uint64_t symbol_size) {
    constexpr std::size_t k_elf64_sym_bytes =
        24; // st_name 4, st_info 1, st_other 1, st_shndx 2, st_value 8, st_size 8
    auto& symbols = m_result.m_symbols;
    if (symbol_size < k_elf64_sym_bytes || table.size() / symbol_size < symbols.size()) {
      return false;
    }
    const std::byte* entry = table.data();
    for (std::size_t i = 0; i < symbols.size(); ++i, entry += symbol_size) {
      auto& symbol = symbols[i];
      std::uint64_t value = 0;
      std::memcpy(&symbol.name, entry, 4);
      symbol.info = std::to_integer<std::uint8_t>(entry[4]);
      std::memcpy(&symbol.section, entry + 6, 2);
      std::memcpy(&value, entry + 8, 8);
      symbol.defined_value = has_defined_value(value, symbol.section, symbol.info);
      if (versions != nullptr) {
        std::memcpy(&symbol.version, versions + i * 2, 2);
      }
    }
    return true;
  }

  // A NUL-terminated string at `offset` in .dynstr, or nullopt.
  [[nodiscard]] std::optional<std::string_view> string_at(std::uint64_t offset) const {
    const auto strings = m_result.strings();
    if (offset >= strings.size()) {
      return std::nullopt;
    }
    const auto end = strings.find('\0', static_cast<std::size_t>(offset));
    if (end == std::string_view::npos) {
      return std::nullopt;
    }
    return strings.substr(static_cast<std::size_t>(offset), end - static_cast<std::size_t>(offset));
  }

  // .gnu.version_d: vd_ndx -> the name of its first Verdaux (the base entry is the object's name).
  Expected<bool> read_version_definitions() {
    const auto& tables = *m_info.tables;
    if (!tables.verdef) {
      return true;
    }
    std::uint64_t at = *tables.verdef;
    for (std::uint64_t entry = 0; entry < std::min(tables.verdef_count, k_max_version_entries); ++entry) {
      const auto verdef = bytes_at(at, 20);
      if (!verdef) {
        return Error{"DT_VERDEF entry " + std::to_string(entry) + " lies outside the file"};
      }
      const auto index = static_cast<std::uint16_t>(field(*verdef, 4, 2) & k_versym_index);
      const auto aux = field(*verdef, 12, 4);
      const auto next = field(*verdef, 16, 4);
      if (const auto verdaux = bytes_at(at + aux, 8)) {
        if (auto name = string_at(field(*verdaux, 0, 4))) {
          m_result.m_version_names.emplace(index, std::string(*name));
        }
      }
      if (next == 0) {
        break;
      }
      at += next;
    }
    return true;
  }

  // .gnu.version_r: what each dependency must define; vna_other -> (file, version) for the references.
  Expected<bool> read_version_needs() {
    const auto& tables = *m_info.tables;
    if (!tables.verneed) {
      return true;
    }
    std::uint64_t at = *tables.verneed;
    std::uint64_t aux_seen = 0;
    for (std::uint64_t entry = 0; entry < std::min(tables.verneed_count, k_max_version_entries); ++entry) {
      const auto verneed = bytes_at(at, 16);
      if (!verneed) {
        return Error{"DT_VERNEED entry " + std::to_string(entry) + " lies outside the file"};
      }
      const auto aux_count = field(*verneed, 2, 2);
      const auto file = string_at(field(*verneed, 4, 4)).value_or(std::string_view{});
      std::uint64_t aux_at = at + field(*verneed, 8, 4);
      for (std::uint64_t i = 0; i < aux_count && aux_seen < k_max_version_entries; ++i, ++aux_seen) {
        const auto vernaux = bytes_at(aux_at, 16);
        if (!vernaux) {
          return Error{"DT_VERNEED entry " + std::to_string(entry) + " has a version outside the file"};
        }
        const auto flags = static_cast<std::uint16_t>(field(*vernaux, 4, 2));
        const auto other = static_cast<std::uint16_t>(field(*vernaux, 6, 2) & k_versym_index);
        const auto name = string_at(field(*vernaux, 8, 4)).value_or(std::string_view{});
        m_needed_by_index.emplace(other, NeededVersion{file, name});
        m_result.m_version_needs.push_back(
            VersionNeed{std::string(file), std::string(name), (flags & k_ver_flg_weak) != 0});
        const auto next = field(*vernaux, 12, 4);
        if (next == 0) {
          break;
        }
        aux_at += next;
      }
      const auto next = field(*verneed, 12, 4);
      if (next == 0) {
        break;
      }
      at += next;
    }
    return true;
  }

  void collect_references() {
    // With a GNU hash table the undefined symbols precede symoffset (only definitions are hashed):
    // a bound to reserve, which spares the copies of a vector that doubles (thousands of
    // references in a large library).
    if (m_result.m_gnu.usable) {
      m_result.m_references.reserve(
          std::min<std::size_t>(m_result.m_gnu.symoffset, m_result.m_symbols.size()));
    }
    for (std::size_t i = 1; i < m_result.m_symbols.size(); ++i) {
      const auto& symbol = m_result.m_symbols[i];
      const unsigned bind = symbol.info >> 4U;
      if (symbol.section != k_shn_undef || bind == k_stb_local) {
        continue;
      }
      SymbolReference reference;
      reference.name = m_result.name_of(symbol);
      if (reference.name.empty()) {
        continue;
      }
      reference.weak = bind == k_stb_weak;
      if (const auto found =
              m_needed_by_index.find(static_cast<std::uint16_t>(symbol.version & k_versym_index));
          found != m_needed_by_index.end() && (symbol.version & k_versym_index) >= 2) {
        reference.version = found->second.version;
        reference.version_file = found->second.file;
      }
      m_result.m_references.push_back(std::move(reference));
    }
  }

  DynamicSymbols m_result;
  std::uint64_t m_chains_offset = 0;
  struct NeededVersion {
    std::string_view file;    // into .dynstr
    std::string_view version; // into .dynstr
  };
  std::unordered_map<std::uint16_t, NeededVersion> m_needed_by_index;
};

std::string_view DynamicSymbols::name_of(const Symbol& symbol) const {
  const auto all = strings();
  if (symbol.name >= all.size()) {
    return {};
  }
  const std::string_view rest = all.substr(symbol.name);
  return rest.substr(0, rest.find('\0'));
}

// name_of(symbol) == name, without finding the name's end first: the bytes of `name`, then the
// terminator (or the table's end, where name_of stops too). Long C++ names are compared once.
bool DynamicSymbols::has_name(const Symbol& symbol, std::string_view name) const {
  const auto all = strings();
  if (symbol.name >= all.size() || all.size() - symbol.name < name.size()) {
    return symbol.name >= all.size() && name.empty();
  }
  const auto end = symbol.name + name.size();
  return all.compare(symbol.name, name.size(), name) == 0 && (end == all.size() || all[end] == '\0');
}

std::size_t DynamicSymbols::largest_heap_block() const {
  const auto bytes = [](const auto& vector) { return vector.capacity() * sizeof(vector[0]); };
  return std::max({bytes(m_symbols), bytes(m_gnu.bloom), bytes(m_gnu.buckets), bytes(m_gnu.chains),
                   bytes(m_references), bytes(m_version_needs), m_by_name.bucket_count() * sizeof(void*)});
}

bool DynamicSymbols::defines_version(std::string_view version) const {
  return std::any_of(m_version_names.begin(), m_version_names.end(),
                     [&](const auto& entry) { return entry.second == version; });
}

// glibc's check_match (elf/dl-lookup.c) for symbol `index`: a definition of an allowed type with
// a value, then the version rules. `versions_seen` counts the unversioned-reference fallbacks.
bool DynamicSymbols::matches(std::uint32_t index, const SymbolReference& reference,
                             int& versions_seen) const {
  const auto& symbol = m_symbols[index];
  const unsigned type = symbol.info & 0xfU;
  const unsigned bind = symbol.info >> 4U;
  if (symbol.section == k_shn_undef || !symbol.defined_value || bind == k_stb_local ||
      ((1U << type) & k_allowed_types) == 0 || !has_name(symbol, reference.name)) {
    return false;
  }
  if (!m_has_versym) {
    return true;
  }
  const auto version_index = static_cast<std::uint16_t>(symbol.version & k_versym_index);
  const bool hidden = (symbol.version & k_versym_hidden) != 0;
  const auto name = m_version_names.find(version_index);
  if (!reference.version.empty()) {
    if (name != m_version_names.end() && name->second == reference.version) {
      return true;
    }
    // A different version is accepted only for an unversioned, visible definition.
    return name == m_version_names.end() && !hidden;
  }
  if (version_index < 3) {
    return true;
  }
  if (!hidden) {
    ++versions_seen; // accepted when it is the only visible version of the name
  }
  return false;
}

bool DynamicSymbols::defines(const SymbolReference& reference) const {
  return defines(reference, m_gnu.usable ? gnu_hash(reference.name) : 0);
}

bool DynamicSymbols::defines(const SymbolReference& reference, std::uint32_t hash) const {
  int versions_seen = 0;
  if (m_gnu.usable) {
    const std::uint64_t word = m_gnu.bloom[(hash / m_gnu.word_bits) & (m_gnu.bloom.size() - 1)];
    const std::uint64_t mask = (std::uint64_t{1} << (hash % m_gnu.word_bits)) |
                               (std::uint64_t{1} << ((hash >> (m_gnu.shift % 32U)) % m_gnu.word_bits));
    if ((word & mask) != mask) {
      return false;
    }
    std::uint32_t index = m_gnu.buckets[hash % m_gnu.buckets.size()];
    if (index == 0) {
      return false;
    }
    for (; index < m_symbols.size() && index - m_gnu.symoffset < m_gnu.chains.size(); ++index) {
      const std::uint32_t chained = m_gnu.chains[index - m_gnu.symoffset];
      if ((chained | 1U) == (hash | 1U) && matches(index, reference, versions_seen)) {
        return true;
      }
      if ((chained & 1U) != 0) {
        break;
      }
    }
    return versions_seen == 1;
  }
  const auto [first, last] = m_by_name.equal_range(std::string(reference.name));
  for (auto it = first; it != last; ++it) {
    if (matches(it->second, reference, versions_seen)) {
      return true;
    }
  }
  return versions_seen == 1;
}

std::uint32_t gnu_hash(std::string_view name) {
  std::uint32_t hash = 5381;
  for (const char c : name) {
    hash = hash * 33U + static_cast<unsigned char>(c);
  }
  return hash;
}

Expected<DynamicSymbols> parse_dynamic_symbols(std::span<const std::byte> image, const ElfInfo& info) {
  const SpanSource source(image);
  return SymbolTableReader(source, info).read();
}

Expected<DynamicSymbols> read_dynamic_symbols(const std::string& path, const ElfInfo& info) {
  fs::note_path(path);
  const UniqueFd fd(::open(fs::HostPath(path).c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) {
    return Error{std::string("cannot open: ") + std::strerror(errno)};
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return Error{"not a regular file"};
  }
  const FileSource source(fd.get(), static_cast<std::uint64_t>(std::max<off_t>(st.st_size, 0)));
  return SymbolTableReader(source, info).read();
}

} // namespace cudadiag::elf
