#pragma once
// Finding one section of an ELF file by name (through the section-name string table), for readers
// of a section's content (gpu_code.cpp: .nv_fatbin). Internal to src/elf; the parser lives in
// elf_file.cpp.

#include "core/expected.hpp"
#include "elf/byte_source.hpp"
#include "elf/elf_file.hpp"

#include <cstdint>
#include <optional>
#include <string_view>

namespace cudadiag::elf::detail {

// Where a section's bytes lie in the file; its size is the file's claim, not yet checked.
struct SectionRange {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
  std::uint32_t type = 0; // sh_type (SHT_NOBITS = 8 has no bytes in the file)
  bool little_endian = true;
  ElfClass elf_class = ElfClass::elf64;
};

// The first section called `name`; nullopt when there is none (or no section headers), an Error
// (a user-facing sentence, as read_elf_info's) when the file is not ELF or its headers are unreadable.
Expected<std::optional<SectionRange>> find_section(const ByteSource& source, std::string_view name);

} // namespace cudadiag::elf::detail
