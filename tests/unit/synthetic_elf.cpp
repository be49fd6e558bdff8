#include "synthetic_elf.hpp"

#include <elf.h>

#include <cstring>

namespace cudadiag::testing {
namespace {

template <class T> void put(std::string& out, std::size_t at, const T& value) {
  if (out.size() < at + sizeof(T)) {
    out.resize(at + sizeof(T));
  }
  std::memcpy(out.data() + at, &value, sizeof(T));
}

// An ELF64 little-endian ET_DYN header for `machine`; the tables' offsets and counts are the caller's.
Elf64_Ehdr shared_object_header(std::uint16_t machine) {
  Elf64_Ehdr header{};
  std::memcpy(header.e_ident, ELFMAG, SELFMAG);
  header.e_ident[EI_CLASS] = ELFCLASS64;
  header.e_ident[EI_DATA] = ELFDATA2LSB;
  header.e_ident[EI_VERSION] = EV_CURRENT;
  header.e_type = ET_DYN;
  header.e_machine = machine;
  header.e_version = EV_CURRENT;
  header.e_ehsize = sizeof(Elf64_Ehdr);
  return header;
}

} // namespace

std::string synthetic_shared_object(const SyntheticLibrary& library) {
  // Layout: ELF header | 2 program headers | string table | dynamic entries (8-aligned).
  constexpr std::size_t k_program_headers = sizeof(Elf64_Ehdr);
  constexpr std::size_t k_strings = k_program_headers + 2 * sizeof(Elf64_Phdr);
  std::string strings(1, '\0');
  const auto add_string = [&strings](const std::string& text) {
    const auto offset = strings.size();
    strings += text;
    strings.push_back('\0');
    return static_cast<Elf64_Xword>(offset);
  };
  std::vector<Elf64_Dyn> entries;
  for (const auto& name : library.needed) {
    entries.push_back({DT_NEEDED, {add_string(name)}});
  }
  if (library.soname) {
    entries.push_back({DT_SONAME, {add_string(*library.soname)}});
  }
  if (library.rpath) {
    entries.push_back({DT_RPATH, {add_string(*library.rpath)}});
  }
  if (library.runpath) {
    entries.push_back({DT_RUNPATH, {add_string(*library.runpath)}});
  }
  if (library.no_default_lib) {
    entries.push_back({DT_FLAGS_1, {DF_1_NODEFLIB}});
  }
  // .dynsym (the null symbol, then the undefined functions) and its DT_HASH table, which gives the
  // loader the symbol count: one bucket chaining every symbol.
  std::vector<Elf64_Sym> symbols;
  if (!library.undefined_functions.empty()) {
    symbols.push_back(Elf64_Sym{});
    for (const auto& name : library.undefined_functions) {
      Elf64_Sym symbol{};
      symbol.st_name = static_cast<Elf64_Word>(add_string(name));
      symbol.st_info = ELF64_ST_INFO(STB_GLOBAL, STT_FUNC);
      symbol.st_shndx = SHN_UNDEF;
      symbols.push_back(symbol);
    }
  }
  const std::size_t symbol_table = (k_strings + strings.size() + 7) / 8 * 8;
  const std::size_t hash_table = symbol_table + symbols.size() * sizeof(Elf64_Sym);
  std::vector<Elf64_Word> hash;
  if (!symbols.empty()) {
    const auto count = static_cast<Elf64_Word>(symbols.size());
    hash = {1, count, count - 1}; // nbucket, nchain, bucket[0]
    for (Elf64_Word index = 0; index < count; ++index) {
      hash.push_back(index == 0 ? 0 : index - 1); // chain[index]
    }
    entries.push_back({DT_SYMTAB, {symbol_table}});
    entries.push_back({DT_SYMENT, {sizeof(Elf64_Sym)}});
    entries.push_back({DT_HASH, {hash_table}});
  }
  entries.push_back({DT_STRTAB, {k_strings}});
  entries.push_back({DT_STRSZ, {strings.size()}});
  entries.push_back({DT_NULL, {0}});
  const std::size_t dynamic = (hash_table + hash.size() * sizeof(Elf64_Word) + 7) / 8 * 8;
  const std::size_t size = dynamic + entries.size() * sizeof(Elf64_Dyn);

  std::string out(size, '\0');
  Elf64_Ehdr header = shared_object_header(library.machine);
  header.e_phoff = k_program_headers;
  header.e_phentsize = sizeof(Elf64_Phdr);
  header.e_phnum = 2;
  put(out, 0, header);
  Elf64_Phdr load{};
  load.p_type = PT_LOAD;
  load.p_flags = PF_R;
  load.p_filesz = load.p_memsz = size;
  load.p_align = 0x1000;
  put(out, k_program_headers, load);
  Elf64_Phdr dynamic_header{};
  dynamic_header.p_type = PT_DYNAMIC;
  dynamic_header.p_flags = PF_R;
  dynamic_header.p_offset = dynamic_header.p_vaddr = dynamic;
  dynamic_header.p_filesz = dynamic_header.p_memsz = entries.size() * sizeof(Elf64_Dyn);
  dynamic_header.p_align = 8;
  put(out, k_program_headers + sizeof(Elf64_Phdr), dynamic_header);
  std::memcpy(out.data() + k_strings, strings.data(), strings.size());
  for (std::size_t i = 0; i < symbols.size(); ++i) {
    put(out, symbol_table + i * sizeof(Elf64_Sym), symbols[i]);
  }
  for (std::size_t i = 0; i < hash.size(); ++i) {
    put(out, hash_table + i * sizeof(Elf64_Word), hash[i]);
  }
  for (std::size_t i = 0; i < entries.size(); ++i) {
    put(out, dynamic + i * sizeof(Elf64_Dyn), entries[i]);
  }
  return out;
}

std::string synthetic_object_with_section(const std::string& section_name, const std::string& content,
                                          std::optional<std::uint64_t> claimed_size) {
  const std::string names = std::string("\0.shstrtab\0", 11) + section_name + '\0';
  const auto pad = [](std::string& file) { file.resize((file.size() + 7) / 8 * 8, '\0'); };
  std::string file(sizeof(Elf64_Ehdr), '\0');
  const auto names_at = file.size();
  file += names;
  pad(file);
  const auto content_at = file.size();
  file += content;
  pad(file);
  const auto sections_at = file.size();
  Elf64_Ehdr header = shared_object_header(EM_X86_64);
  header.e_shoff = sections_at;
  header.e_shentsize = sizeof(Elf64_Shdr);
  header.e_shnum = 3;
  header.e_shstrndx = 1;
  put(file, 0, header);
  Elf64_Shdr strings{};
  strings.sh_name = 1;
  strings.sh_type = SHT_STRTAB;
  strings.sh_offset = names_at;
  strings.sh_size = names.size();
  Elf64_Shdr section{};
  section.sh_name = 11;
  section.sh_type = SHT_PROGBITS;
  section.sh_offset = content_at;
  section.sh_size = claimed_size.value_or(content.size());
  put(file, sections_at, Elf64_Shdr{});
  put(file, sections_at + sizeof(Elf64_Shdr), strings);
  put(file, sections_at + 2 * sizeof(Elf64_Shdr), section);
  return file;
}

} // namespace cudadiag::testing
