#include "elf/elf_file.hpp"

#include "core/read_record.hpp"
#include "core/system_root.hpp"
#include "core/text.hpp"
#include "elf/byte_source.hpp"
#include "elf/elf_sections.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <limits>
#include <string_view>
#include <sys/stat.h>

namespace cudadiag::elf {
namespace {

using detail::ByteSource;
using detail::FileSource;
using detail::load;
using detail::SectionRange;
using detail::SpanSource;

constexpr std::array<std::byte, 4> k_magic{std::byte{0x7f}, std::byte{'E'}, std::byte{'L'}, std::byte{'F'}};
constexpr std::size_t k_ident_class = 4;
constexpr std::size_t k_ident_data = 5;

constexpr std::uint32_t k_pt_load = 1;
constexpr std::uint32_t k_pt_dynamic = 2;
constexpr std::uint32_t k_sht_strtab = 3;
constexpr std::uint32_t k_sht_dynamic = 6;
constexpr std::uint32_t k_pn_xnum = 0xffff;
constexpr std::uint32_t k_shn_xindex = 0xffff; // e_shstrndx: the index is section 0's sh_link

constexpr std::uint64_t k_dt_null = 0;
constexpr std::uint64_t k_dt_needed = 1;
constexpr std::uint64_t k_dt_strtab = 5;
constexpr std::uint64_t k_dt_strsz = 10;
constexpr std::uint64_t k_dt_soname = 14;
constexpr std::uint64_t k_dt_rpath = 15;
constexpr std::uint64_t k_dt_runpath = 29;
constexpr std::uint64_t k_dt_hash = 4;
constexpr std::uint64_t k_dt_symtab = 6;
constexpr std::uint64_t k_dt_syment = 11;
constexpr std::uint64_t k_dt_bind_now = 24;
constexpr std::uint64_t k_dt_flags = 30;
constexpr std::uint64_t k_dt_gnu_hash = 0x6ffffef5;
constexpr std::uint64_t k_dt_versym = 0x6ffffff0;
constexpr std::uint64_t k_dt_flags_1 = 0x6ffffffb;
constexpr std::uint64_t k_dt_verdef = 0x6ffffffc;
constexpr std::uint64_t k_dt_verdefnum = 0x6ffffffd;
constexpr std::uint64_t k_dt_verneed = 0x6ffffffe;
constexpr std::uint64_t k_dt_verneednum = 0x6fffffff;
constexpr std::uint64_t k_df_bind_now = 0x8;
constexpr std::uint64_t k_df_1_now = 0x1;
constexpr std::uint64_t k_df_1_nodeflib = 0x800;

// Bounds that keep hostile counts from turning into large reads or allocations.
constexpr std::uint64_t k_max_program_headers = 65535;
constexpr std::uint64_t k_max_section_headers = 65535;
constexpr std::uint64_t k_max_dynamic_entries = 65536;
constexpr std::size_t k_max_needed = 1024;
constexpr std::uint64_t k_max_string_length = 4096;

// Where each field sits in one ELF class; offsets and widths in bytes.
struct ClassLayout {
  std::size_t word;      // width of addresses, offsets and d_tag / d_val
  std::size_t ehdr_size; // sizeof(ElfN_Ehdr)
  std::size_t e_phoff;
  std::size_t e_shoff;
  std::size_t e_phentsize; // followed by e_phnum, e_shentsize, e_shnum (2 bytes each)
  std::size_t phdr_size;
  std::size_t p_offset;
  std::size_t p_vaddr;
  std::size_t p_filesz;
  std::size_t shdr_size;
  std::size_t sh_offset;
  std::size_t sh_size;
  std::size_t sh_link; // followed by sh_info (4 bytes)
};

constexpr ClassLayout k_elf32_layout{4, 52, 28, 32, 42, 32, 4, 8, 16, 40, 16, 20, 24};
constexpr ClassLayout k_elf64_layout{8, 64, 32, 40, 54, 56, 8, 16, 32, 64, 24, 32, 40};

// A contiguous run of file bytes.
struct Range {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

// A PT_LOAD segment's file image.
struct Segment {
  std::uint64_t offset = 0;
  std::uint64_t vaddr = 0;
  std::uint64_t filesz = 0;
};

struct ProgramHeaders {
  std::vector<Segment> loads;
  std::optional<Range> dynamic;
};

struct SectionHeaders {
  std::optional<Range> dynamic;
  std::optional<Range> dynamic_strings; // the string table SHT_DYNAMIC links to
};

// The raw, unresolved content of a dynamic section: string-table offsets per tag.
struct DynamicEntries {
  std::optional<std::uint64_t> strtab_address;
  std::optional<std::uint64_t> strtab_size;
  std::optional<std::uint64_t> soname;
  std::vector<std::uint64_t> needed;
  std::optional<std::uint64_t> runpath;
  std::optional<std::uint64_t> rpath;
  // Addresses of the symbol tables (elf_symbols.hpp reads them) and the binding flags.
  std::optional<std::uint64_t> symtab, syment, gnu_hash, sysv_hash, versym, verneed, verdef;
  std::uint64_t verneed_count = 0, verdef_count = 0;
  bool bind_now = false;
  bool no_default_lib = false;

  [[nodiscard]] bool references_strings() const { return soname || !needed.empty() || runpath || rpath; }
};

std::string type_name(std::uint16_t type) {
  static constexpr std::array<std::string_view, 5> k_names{"ET_NONE", "ET_REL", "ET_EXEC", "ET_DYN",
                                                           "ET_CORE"};
  if (type < k_names.size()) {
    return std::string(k_names[type]);
  }
  return "e_type " + std::to_string(type);
}

class ElfParser {
public:
  explicit ElfParser(const ByteSource& source) : m_source(source) {}

  Expected<ElfInfo> parse() {
    if (auto header = read_header(); !header) {
      return header.error();
    }
    Expected<void> so_far; // the first error met below, if any
    const auto program = read_program_headers();
    if (!program) {
      so_far = program.error();
    } else if (program->dynamic) {
      const auto dynamic = read_dynamic(*program->dynamic);
      if (!dynamic) {
        so_far = dynamic.error();
      } else {
        auto strings = map_address(dynamic->strtab_address, dynamic->strtab_size, program->loads);
        if (!strings && dynamic->references_strings()) {
          if (const auto sections = read_section_headers(); sections && sections->dynamic_strings) {
            strings = sections->dynamic_strings;
          }
        }
        record_tables(*dynamic, strings, program->loads);
        return resolve(*dynamic, strings);
      }
    }

    // The program headers are unusable or have no PT_DYNAMIC: try the section headers.
    const auto sections = read_section_headers();
    if (sections && sections->dynamic) {
      const auto dynamic = read_dynamic(*sections->dynamic);
      if (dynamic) {
        auto strings = sections->dynamic_strings;
        if (!strings && program) {
          strings = map_address(dynamic->strtab_address, dynamic->strtab_size, program->loads);
        }
        return resolve(*dynamic, strings);
      }
      if (so_far) {
        so_far = dynamic.error();
      }
    }
    if (!so_far) {
      return so_far.error();
    }
    if (!sections && m_phnum == 0 && m_shoff != 0) {
      return sections.error();
    }
    return m_info;
  }

private:
  Expected<bool> read_header() {
    const std::uint64_t size = m_source.size();
    if (size == 0) {
      return Error{"empty file"};
    }
    std::array<std::byte, 64> header{};
    const auto available = static_cast<std::size_t>(std::min<std::uint64_t>(size, header.size()));
    if (!m_source.read(0, std::span(header).first(available))) {
      return Error{"cannot read the ELF header"};
    }
    if (!std::equal(header.begin(),
                    header.begin() + static_cast<std::ptrdiff_t>(std::min(available, k_magic.size())),
                    k_magic.begin())) {
      return Error{"not an ELF file (bad magic)"};
    }
    if (available <= k_ident_data) {
      return Error{"truncated ELF header"};
    }
    const auto elf_class = std::to_integer<unsigned>(header[k_ident_class]);
    const auto data = std::to_integer<unsigned>(header[k_ident_data]);
    if (elf_class != 1 && elf_class != 2) {
      return Error{"unsupported ELF class " + std::to_string(elf_class)};
    }
    if (data != 1 && data != 2) {
      return Error{"unsupported ELF data encoding " + std::to_string(data)};
    }
    m_info.elf_class = elf_class == 1 ? ElfClass::elf32 : ElfClass::elf64;
    m_info.little_endian = data == 1;
    m_layout = elf_class == 1 ? &k_elf32_layout : &k_elf64_layout;
    if (available < m_layout->ehdr_size) {
      return Error{"truncated ELF header"};
    }
    const std::span<const std::byte> bytes(header);
    m_info.type = field16(bytes, 16);
    m_info.machine = field16(bytes, 18);
    m_phoff = word(bytes, m_layout->e_phoff);
    m_shoff = word(bytes, m_layout->e_shoff);
    m_phentsize = field16(bytes, m_layout->e_phentsize);
    m_phnum = field16(bytes, m_layout->e_phentsize + 2);
    m_shentsize = field16(bytes, m_layout->e_phentsize + 4);
    m_shnum = field16(bytes, m_layout->e_phentsize + 6);
    m_shstrndx = field16(bytes, m_layout->e_phentsize + 8);
    return true;
  }

  Expected<ProgramHeaders> read_program_headers() {
    ProgramHeaders result;
    if (m_phnum == 0) {
      return result;
    }
    if (m_phentsize != m_layout->phdr_size) {
      return Error{"unexpected program header entry size " + std::to_string(m_phentsize) + " (expected " +
                   std::to_string(m_layout->phdr_size) + ")"};
    }
    std::uint64_t count = m_phnum;
    if (count == k_pn_xnum) { // the real count lives in section 0's sh_info
      const auto zero = read_section_zero();
      if (!zero) {
        return Error{"program header count is in section 0, which is unreadable"};
      }
      count = zero->info;
    }
    if (count > k_max_program_headers) {
      return Error{"too many program headers (" + std::to_string(count) + ")"};
    }
    auto table = read_table(m_phoff, count, m_layout->phdr_size);
    if (!table) {
      return Error{"truncated program headers"};
    }
    const std::span<const std::byte> bytes(*table);
    for (std::size_t at = 0; at < table->size(); at += m_layout->phdr_size) {
      const auto type = load(bytes, at, 4, m_info.little_endian);
      const Segment segment{word(bytes, at + m_layout->p_offset), word(bytes, at + m_layout->p_vaddr),
                            word(bytes, at + m_layout->p_filesz)};
      if (type == k_pt_load) {
        result.loads.push_back(segment);
      } else if (type == k_pt_dynamic && !result.dynamic) {
        result.dynamic = Range{segment.offset, segment.filesz};
      }
    }
    return result;
  }

  struct SectionZero {
    std::uint64_t size = 0;
    std::uint64_t link = 0;
    std::uint64_t info = 0;
  };

  std::optional<SectionZero> read_section_zero() const {
    if (m_shoff == 0 || m_shentsize != m_layout->shdr_size) {
      return std::nullopt;
    }
    std::array<std::byte, 64> header{};
    const auto bytes = std::span(header).first(m_layout->shdr_size);
    if (!m_source.read(m_shoff, bytes)) {
      return std::nullopt;
    }
    return SectionZero{word(bytes, m_layout->sh_size),
                       load(bytes, m_layout->sh_link, 4, m_info.little_endian),
                       load(bytes, m_layout->sh_link + 4, 4, m_info.little_endian)};
  }

  Expected<SectionHeaders> read_section_headers() const {
    SectionHeaders result;
    if (m_shoff == 0) {
      return Error{"no section headers"};
    }
    if (m_shentsize != m_layout->shdr_size) {
      return Error{"unexpected section header entry size " + std::to_string(m_shentsize)};
    }
    std::uint64_t count = m_shnum;
    if (count == 0) { // the real count lives in section 0's sh_size
      const auto zero = read_section_zero();
      if (!zero) {
        return Error{"truncated section headers"};
      }
      count = zero->size;
    }
    if (count > k_max_section_headers) {
      return Error{"too many section headers (" + std::to_string(count) + ")"};
    }
    const auto table = read_table(m_shoff, count, m_layout->shdr_size);
    if (!table) {
      return Error{"truncated section headers"};
    }
    const std::span<const std::byte> bytes(*table);
    const auto section_at = [&](std::uint64_t index) {
      return static_cast<std::size_t>(index) * m_layout->shdr_size;
    };
    for (std::uint64_t index = 0; index < count; ++index) {
      const std::size_t at = section_at(index);
      if (load(bytes, at + 4, 4, m_info.little_endian) != k_sht_dynamic) {
        continue;
      }
      result.dynamic = Range{word(bytes, at + m_layout->sh_offset), word(bytes, at + m_layout->sh_size)};
      const auto link = load(bytes, at + m_layout->sh_link, 4, m_info.little_endian);
      if (link != 0 && link < count) {
        const std::size_t linked = section_at(link);
        if (load(bytes, linked + 4, 4, m_info.little_endian) == k_sht_strtab) {
          result.dynamic_strings =
              Range{word(bytes, linked + m_layout->sh_offset), word(bytes, linked + m_layout->sh_size)};
        }
      }
      break;
    }
    return result;
  }

public:
  // The file range of the first section called `name` (through e_shstrndx); nullopt when the file
  // has no such section, an Error when its header or section headers are unreadable.
  Expected<std::optional<SectionRange>> named_section(std::string_view name) {
    if (auto header = read_header(); !header) {
      return header.error();
    }
    if (m_shoff == 0) {
      return std::optional<SectionRange>{};
    }
    if (m_shentsize != m_layout->shdr_size) {
      return Error{"unexpected section header entry size " + std::to_string(m_shentsize)};
    }
    std::uint64_t count = m_shnum;
    std::uint64_t names_index = m_shstrndx;
    if (count == 0 || names_index == k_shn_xindex) { // the real values live in section 0
      const auto zero = read_section_zero();
      if (!zero) {
        return Error{"truncated section headers"};
      }
      count = count == 0 ? zero->size : count;
      names_index = names_index == k_shn_xindex ? zero->link : names_index;
    }
    if (count > k_max_section_headers) {
      return Error{"too many section headers (" + std::to_string(count) + ")"};
    }
    if (names_index == 0 || names_index >= count) {
      return std::optional<SectionRange>{};
    }
    const auto table = read_table(m_shoff, count, m_layout->shdr_size);
    if (!table) {
      return Error{"truncated section headers"};
    }
    const std::span<const std::byte> bytes(*table);
    const auto names_at = static_cast<std::size_t>(names_index) * m_layout->shdr_size;
    const Range names{word(bytes, names_at + m_layout->sh_offset), word(bytes, names_at + m_layout->sh_size)};
    std::vector<std::byte> wanted(name.size() + 1);
    for (std::uint64_t index = 1; index < count; ++index) {
      const auto at = static_cast<std::size_t>(index) * m_layout->shdr_size;
      const auto name_offset = load(bytes, at, 4, m_info.little_endian);
      if (name_offset >= names.size || wanted.size() > names.size - name_offset ||
          !m_source.read(names.offset + name_offset, wanted)) {
        continue;
      }
      if (std::equal(name.begin(), name.end(), wanted.begin(),
                     [](char c, std::byte b) {
                       return static_cast<unsigned char>(c) == std::to_integer<unsigned>(b);
                     }) &&
          wanted.back() == std::byte{0}) {
        return std::optional<SectionRange>{
            SectionRange{word(bytes, at + m_layout->sh_offset), word(bytes, at + m_layout->sh_size),
                         static_cast<std::uint32_t>(load(bytes, at + 4, 4, m_info.little_endian)),
                         m_info.little_endian, m_info.elf_class}};
      }
    }
    return std::optional<SectionRange>{};
  }

private:
  // `count` entries of `entry_size` bytes at `offset`, or nullopt unless all lie inside the file.
  std::optional<detail::ByteBuffer> read_table(std::uint64_t offset, std::uint64_t count,
                                               std::size_t entry_size) const {
    return m_source.bytes(offset, count * entry_size); // count is capped, so this cannot overflow
  }

  Expected<DynamicEntries> read_dynamic(const Range& range) const {
    if (range.offset >= m_source.size() || range.size > m_source.size() - range.offset) {
      return Error{"dynamic section outside the file"};
    }
    const std::size_t entry_size = 2 * m_layout->word;
    const auto count = std::min(range.size / entry_size, k_max_dynamic_entries);
    const auto table = read_table(range.offset, count, entry_size);
    if (!table) {
      return Error{"cannot read the dynamic section"};
    }
    const std::span<const std::byte> bytes(*table);
    DynamicEntries entries;
    for (std::size_t at = 0; at < table->size(); at += entry_size) {
      const auto tag = word(bytes, at);
      const auto value = word(bytes, at + m_layout->word);
      switch (tag) {
      case k_dt_null: return entries;
      case k_dt_needed:
        if (entries.needed.size() == k_max_needed) {
          return Error{"more than " + std::to_string(k_max_needed) + " DT_NEEDED entries"};
        }
        entries.needed.push_back(value);
        break;
      case k_dt_strtab: entries.strtab_address = value; break;
      case k_dt_strsz: entries.strtab_size = value; break;
      case k_dt_soname: entries.soname = value; break;
      case k_dt_rpath: entries.rpath = value; break;
      case k_dt_runpath: entries.runpath = value; break;
      case k_dt_symtab: entries.symtab = value; break;
      case k_dt_syment: entries.syment = value; break;
      case k_dt_gnu_hash: entries.gnu_hash = value; break;
      case k_dt_hash: entries.sysv_hash = value; break;
      case k_dt_versym: entries.versym = value; break;
      case k_dt_verneed: entries.verneed = value; break;
      case k_dt_verneednum: entries.verneed_count = value; break;
      case k_dt_verdef: entries.verdef = value; break;
      case k_dt_verdefnum: entries.verdef_count = value; break;
      case k_dt_bind_now: entries.bind_now = true; break;
      case k_dt_flags: entries.bind_now = entries.bind_now || (value & k_df_bind_now) != 0; break;
      case k_dt_flags_1:
        entries.bind_now = entries.bind_now || (value & k_df_1_now) != 0;
        entries.no_default_lib = (value & k_df_1_nodeflib) != 0;
        break;
      default: break;
      }
    }
    return entries;
  }

  // The file range holding the string table at virtual `address`, through the PT_LOAD segments.
  static std::optional<Range> map_address(std::optional<std::uint64_t> address,
                                          std::optional<std::uint64_t> size,
                                          const std::vector<Segment>& loads) {
    if (!address) {
      return std::nullopt;
    }
    for (const auto& segment : loads) {
      if (*address >= segment.vaddr && *address - segment.vaddr < segment.filesz) {
        const std::uint64_t delta = *address - segment.vaddr;
        if (segment.offset > std::numeric_limits<std::uint64_t>::max() - delta) {
          continue;
        }
        return Range{segment.offset + delta, size.value_or(segment.filesz - delta)};
      }
    }
    return std::nullopt;
  }

  // Where the symbol tables lie in the file, for read_dynamic_symbols; left unset unless DT_SYMTAB
  // and the string table map into loadable segments.
  void record_tables(const DynamicEntries& dynamic, const std::optional<Range>& strings,
                     const std::vector<Segment>& loads) {
    m_info.bind_now = dynamic.bind_now;
    m_info.no_default_lib = dynamic.no_default_lib;
    const auto symtab = map_address(dynamic.symtab, std::uint64_t{0}, loads);
    if (!symtab || !strings) {
      return;
    }
    const auto offset_of = [&](std::optional<std::uint64_t> address) -> std::optional<std::uint64_t> {
      const auto range = map_address(address, std::uint64_t{0}, loads);
      return range ? std::optional(range->offset) : std::nullopt;
    };
    DynamicTables tables;
    tables.symtab = symtab->offset;
    tables.strtab = strings->offset;
    tables.strtab_size = strings->size;
    tables.syment = dynamic.syment.value_or(m_layout->word == 8 ? 24 : 16);
    tables.gnu_hash = offset_of(dynamic.gnu_hash);
    tables.sysv_hash = offset_of(dynamic.sysv_hash);
    tables.versym = offset_of(dynamic.versym);
    tables.verneed = offset_of(dynamic.verneed);
    tables.verdef = offset_of(dynamic.verdef);
    tables.verneed_count = dynamic.verneed_count;
    tables.verdef_count = dynamic.verdef_count;
    m_info.tables = tables;
  }

  Expected<ElfInfo> resolve(const DynamicEntries& dynamic, const std::optional<Range>& strings) {
    m_info.has_dynamic_section = true;
    if (!dynamic.references_strings()) {
      return m_info;
    }
    if (!strings) {
      if (dynamic.strtab_address) {
        return Error{"DT_STRTAB address " + hex_number(*dynamic.strtab_address) +
                     " is not in any loadable segment"};
      }
      return Error{"dynamic section has no DT_STRTAB"};
    }
    if (dynamic.soname) {
      auto text = read_string(*strings, *dynamic.soname, "DT_SONAME");
      if (!text) {
        return text.error();
      }
      m_info.soname = std::move(*text);
    }
    for (const auto offset : dynamic.needed) {
      auto text = read_string(*strings, offset, "DT_NEEDED");
      if (!text) {
        return text.error();
      }
      m_info.needed.push_back(std::move(*text));
    }
    if (dynamic.runpath) {
      auto text = read_string(*strings, *dynamic.runpath, "DT_RUNPATH");
      if (!text) {
        return text.error();
      }
      m_info.runpath = std::move(*text);
    }
    if (dynamic.rpath) {
      auto text = read_string(*strings, *dynamic.rpath, "DT_RPATH");
      if (!text) {
        return text.error();
      }
      m_info.rpath = std::move(*text);
    }
    return m_info;
  }

  Expected<std::string> read_string(const Range& table, std::uint64_t offset, std::string_view tag) const {
    const std::string name(tag);
    if (offset >= table.size) {
      return Error{name + " string offset " + std::to_string(offset) + " out of range (string table holds " +
                   std::to_string(table.size) + " bytes)"};
    }
    if (table.offset >= m_source.size() || offset >= m_source.size() - table.offset) {
      return Error{name + " string lies outside the file"};
    }
    const std::uint64_t position = table.offset + offset;
    const auto length = static_cast<std::size_t>(
        std::min({k_max_string_length + 1, table.size - offset, m_source.size() - position}));
    std::string text(length, '\0');
    if (!m_source.read(position, std::as_writable_bytes(std::span(text)))) {
      return Error{"cannot read the " + name + " string"};
    }
    const auto end = text.find('\0');
    if (end == std::string::npos) {
      if (length > k_max_string_length) {
        return Error{name + " string is longer than " + std::to_string(k_max_string_length) + " bytes"};
      }
      return Error{name + " string is not NUL-terminated"};
    }
    text.resize(end);
    return text;
  }

  [[nodiscard]] std::uint16_t field16(std::span<const std::byte> bytes, std::size_t at) const {
    return static_cast<std::uint16_t>(load(bytes, at, 2, m_info.little_endian));
  }
  [[nodiscard]] std::uint64_t word(std::span<const std::byte> bytes, std::size_t at) const {
    return load(bytes, at, m_layout->word, m_info.little_endian);
  }

  const ByteSource& m_source;
  const ClassLayout* m_layout = &k_elf64_layout;
  ElfInfo m_info;
  std::uint64_t m_phoff = 0;
  std::uint64_t m_shoff = 0;
  std::uint16_t m_phentsize = 0;
  std::uint16_t m_phnum = 0;
  std::uint16_t m_shentsize = 0;
  std::uint16_t m_shnum = 0;
  std::uint16_t m_shstrndx = 0;
};

struct MachineName {
  std::uint16_t machine;
  std::string_view name;
};

constexpr std::array k_machine_names{
    MachineName{k_machine_x86_64, "x86_64"}, MachineName{k_machine_aarch64, "aarch64"},
    MachineName{k_machine_386, "i386"},      MachineName{k_machine_ppc, "ppc"},
    MachineName{k_machine_s390, "s390"},     MachineName{k_machine_arm, "arm"},
    MachineName{k_machine_riscv, "riscv"},
};

} // namespace

std::string ElfInfo::class_name() const {
  return elf_class == ElfClass::elf32 ? "ELF32" : "ELF64";
}

std::string ElfInfo::machine_name() const {
  if (machine == k_machine_ppc64) {
    return little_endian ? "ppc64le" : "ppc64";
  }
  for (const auto& row : k_machine_names) {
    if (row.machine == machine) {
      return std::string(row.name);
    }
  }
  return "machine " + std::to_string(machine);
}

Expected<ElfInfo> parse_elf_info(std::span<const std::byte> image) {
  const SpanSource source(image);
  return ElfParser(source).parse();
}

Expected<ElfInfo> read_elf_info(const std::string& path) {
  return detail::with_file_source(path, [](const ByteSource& source) { return ElfParser(source).parse(); });
}

std::uint16_t host_machine() {
#if defined(__x86_64__)
  return k_machine_x86_64;
#elif defined(__aarch64__)
  return k_machine_aarch64;
#elif defined(__i386__)
  return k_machine_386;
#elif defined(__powerpc64__)
  return k_machine_ppc64;
#elif defined(__powerpc__)
  return k_machine_ppc;
#elif defined(__s390__)
  return k_machine_s390;
#elif defined(__arm__)
  return k_machine_arm;
#elif defined(__riscv)
  return k_machine_riscv;
#else
#error "cudadiag: unknown host architecture; add its e_machine to host_machine()"
#endif
}

ElfClass host_class() {
  return sizeof(void*) == 8 ? ElfClass::elf64 : ElfClass::elf32;
}

bool host_little_endian() {
  return std::endian::native == std::endian::little;
}

std::optional<std::string> incompatibility_with_host(const ElfInfo& info) {
  ElfInfo host;
  host.elf_class = host_class();
  host.little_endian = host_little_endian();
  host.machine = host_machine();
  if (info.elf_class != host.elf_class) {
    const bool is32 = info.elf_class == ElfClass::elf32;
    return std::string(is32 ? "32-bit" : "64-bit") + " ELF (" + info.class_name() + "), this process is " +
           (is32 ? "64-bit" : "32-bit");
  }
  if (info.little_endian != host.little_endian) {
    return std::string(info.little_endian ? "little" : "big") + "-endian ELF, this machine is " +
           (host.little_endian ? "little" : "big") + "-endian";
  }
  if (info.machine != host.machine) {
    return "built for " + info.machine_name() + ", this machine is " + host.machine_name();
  }
  if (info.type != k_type_dyn) {
    return "not a shared object (" + type_name(info.type) + ")";
  }
  return std::nullopt;
}

std::optional<FileRange> section_in_file(const std::string& path, std::string_view name) {
  constexpr std::uint32_t k_sht_nobits = 8;
  const auto found =
      detail::with_file_source(path, [&](const ByteSource& source) -> Expected<std::optional<FileRange>> {
        const auto section = detail::find_section(source, name);
        if (!section || !section.value() || section.value()->type == k_sht_nobits ||
            section.value()->offset >= source.size()) {
          return std::optional<FileRange>{};
        }
        const auto& range = *section.value();
        return std::optional<FileRange>{
            FileRange{range.offset, std::min(range.size, source.size() - range.offset)}};
      });
  return found ? found.value() : std::nullopt;
}

std::optional<TruncatedLoad> truncated_load(const std::string& path) {
  fs::note_path(path);
  const int fd = ::open(fs::HostPath(path).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return std::nullopt;
  }
  struct stat st {};
  std::array<unsigned char, 64> header{};
  const bool stat_ok = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  const auto got = stat_ok ? ::pread(fd, header.data(), header.size(), 0) : -1;
  std::optional<TruncatedLoad> result;
  const auto size = static_cast<std::uint64_t>(stat_ok ? st.st_size : 0);
  const bool is64 = host_class() == ElfClass::elf64;
  const std::size_t ehdr_size = is64 ? 64 : 52;
  const auto field = [&](const unsigned char* at, std::size_t bytes) {
    std::uint64_t value = 0;
    for (std::size_t i = 0; i < bytes; ++i) { // host byte order only (another order is passed over)
      const auto byte = host_little_endian() ? at[i] : at[bytes - 1 - i];
      value |= static_cast<std::uint64_t>(byte) << (8U * i);
    }
    return value;
  };
  const bool elf_magic = got >= 4 && std::memcmp(header.data(),
                                                 "\x7f"
                                                 "ELF",
                                                 4) == 0;
  if (got >= 0 && static_cast<std::size_t>(got) < ehdr_size) {
    result = TruncatedLoad{false, "file too short"};
  } else if (got >= 0 && !elf_magic) {
    result = TruncatedLoad{false, "invalid ELF header"};
  } else if (got >= 0 && header[k_ident_class] == (is64 ? 2 : 1) &&
             header[k_ident_data] == (host_little_endian() ? 1 : 2)) {
    const std::uint64_t phoff = field(header.data() + (is64 ? 32 : 28), is64 ? 8 : 4);
    const std::uint64_t phentsize = field(header.data() + (is64 ? 54 : 42), 2);
    const std::uint64_t phnum = field(header.data() + (is64 ? 56 : 44), 2);
    const std::uint64_t table = phentsize * phnum;
    if (phnum != 0 && (phoff > size || table > size - phoff)) {
      result = TruncatedLoad{false, "cannot read file data"};
    } else if (phnum != 0 && phnum < 0xffff && phentsize == (is64 ? 56U : 32U)) {
      std::vector<unsigned char> headers(table);
      if (::pread(fd, headers.data(), headers.size(), static_cast<off_t>(phoff)) ==
          static_cast<ssize_t>(table)) {
        const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
        const std::uint64_t mapped_end = (size + page - 1) / page * page; // the last page is zero-filled
        for (std::uint64_t at = 0; at < table; at += phentsize) {
          const unsigned char* entry = headers.data() + at;
          if (field(entry, 4) != k_pt_load) {
            continue;
          }
          const std::uint64_t offset = field(entry + (is64 ? 8 : 4), is64 ? 8 : 4);
          const std::uint64_t filesz = field(entry + (is64 ? 32 : 16), is64 ? 8 : 4);
          if (filesz != 0 && offset + filesz > mapped_end) {
            result = TruncatedLoad{true, "crashes (SIGBUS): a segment reaches byte " +
                                             std::to_string(offset + filesz) + " of a file of " +
                                             std::to_string(size) +
                                             " bytes (truncated); dlopen maps it and dies touching it"};
            break;
          }
        }
      }
    }
  }
  ::close(fd);
  return result;
}

namespace detail {

Expected<std::optional<SectionRange>> find_section(const ByteSource& source, std::string_view name) {
  return ElfParser(source).named_section(name);
}

} // namespace detail

} // namespace cudadiag::elf
