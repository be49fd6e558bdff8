#pragma once
// Minimal ELF64 little-endian shared objects for tests of the closure stage: an ELF header, one
// PT_LOAD covering the file, a PT_DYNAMIC, a string table and the dynamic entries asked for, and
// undefined symbols when asked (.dynsym with a DT_HASH table). No code: the loader-search side of
// a library, nothing else. (Real libraries built by a compiler cannot carry 10,000 DT_NEEDED
// entries or a foreign machine cheaply.)

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cudadiag::testing {

struct SyntheticLibrary {
  std::optional<std::string> soname = {};
  std::vector<std::string> needed = {};
  std::optional<std::string> runpath = {};
  std::optional<std::string> rpath = {};
  std::uint16_t machine = 62;                        // EM_X86_64
  bool no_default_lib = false;                       // DF_1_NODEFLIB
  std::vector<std::string> undefined_functions = {}; // global, unversioned references
};

// The file's bytes.
std::string synthetic_shared_object(const SyntheticLibrary& library);

// An ELF64 x86-64 shared object with no program headers whose only sections are .shstrtab and
// `section_name` holding `content` (sh_size `claimed_size` when given): for readers of one section.
std::string synthetic_object_with_section(const std::string& section_name, const std::string& content,
                                          std::optional<std::uint64_t> claimed_size = std::nullopt);

} // namespace cudadiag::testing
