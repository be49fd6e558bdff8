#pragma once
// A small, defensive ELF reader: the identification, the file header and the dynamic section
// (SONAME, NEEDED, RUNPATH, RPATH), nothing else. It reads with a handful of bounded pread() calls
// and never maps or reads a whole file, so a 500 MB library costs a few kilobytes of I/O.
// Hostile input (truncated, garbage offsets and counts, missing terminators, directories, FIFOs)
// yields an Error value; nothing here throws, hangs or allocates in proportion to a corrupt count.

#include "core/expected.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace cudadiag::elf {

enum class ElfClass { elf32, elf64 };

// e_type values used in messages and checks.
inline constexpr std::uint16_t k_type_exec = 2; // ET_EXEC
inline constexpr std::uint16_t k_type_dyn = 3;  // ET_DYN: shared objects and PIE executables

// e_machine values this tool names (the full list lives in <elf.h>).
inline constexpr std::uint16_t k_machine_386 = 3;
inline constexpr std::uint16_t k_machine_ppc = 20;
inline constexpr std::uint16_t k_machine_ppc64 = 21;
inline constexpr std::uint16_t k_machine_s390 = 22;
inline constexpr std::uint16_t k_machine_arm = 40;
inline constexpr std::uint16_t k_machine_x86_64 = 62;
inline constexpr std::uint16_t k_machine_aarch64 = 183;
inline constexpr std::uint16_t k_machine_riscv = 243;

// Where the dynamic symbol tables lie: DT_* addresses mapped to file offsets through the PT_LOAD
// segments. Read by elf_symbols.hpp; the counts are the file's claims, not yet checked.
struct DynamicTables {
  std::uint64_t symtab = 0;      // DT_SYMTAB
  std::uint64_t strtab = 0;      // DT_STRTAB
  std::uint64_t strtab_size = 0; // DT_STRSZ
  std::uint64_t syment = 0;      // DT_SYMENT (the class's symbol size when absent)
  std::optional<std::uint64_t> gnu_hash, sysv_hash, versym, verneed, verdef;
  std::uint64_t verneed_count = 0, verdef_count = 0; // DT_VERNEEDNUM, DT_VERDEFNUM
};

// What one ELF file says about itself.
struct ElfInfo {
  ElfClass elf_class = ElfClass::elf64;
  bool little_endian = true;
  std::uint16_t type = 0;             // e_type (ET_DYN = 3, ET_EXEC = 2, ...)
  std::uint16_t machine = 0;          // e_machine (EM_X86_64 = 62, EM_AARCH64 = 183, EM_386 = 3, ...)
  std::optional<std::string> soname;  // DT_SONAME
  std::vector<std::string> needed;    // DT_NEEDED, in file order
  std::optional<std::string> runpath; // DT_RUNPATH
  std::optional<std::string> rpath;   // DT_RPATH
  bool has_dynamic_section = false;   // false for static executables and relocatable objects
  bool bind_now = false;       // DT_BIND_NOW, DF_BIND_NOW or DF_1_NOW: every reference is bound at load
  bool no_default_lib = false; // DF_1_NODEFLIB: its dependencies skip ld.so.cache and the default dirs
  std::optional<DynamicTables> tables; // nullopt without DT_SYMTAB or when it maps into no segment

  // "ELF32" or "ELF64".
  [[nodiscard]] std::string class_name() const;
  // "x86_64", "aarch64", "i386", "ppc64le" / "ppc64", "ppc", "s390", "arm", "riscv", else "machine <n>".
  [[nodiscard]] std::string machine_name() const;
};

// Reads the ELF identification, header and dynamic section of `path` (symlinks followed).
// Errors are user-facing sentences, e.g. "cannot open: No such file or directory",
// "not a regular file", "empty file", "not an ELF file (bad magic)", "truncated ELF header",
// "unsupported ELF class 7", "truncated program headers", "dynamic section outside the file",
// "DT_SONAME string offset 4096 out of range (string table holds 200 bytes)".
// The dynamic section is found through PT_DYNAMIC (its DT_STRTAB address mapped to a file offset
// through the PT_LOAD segments) and, when the program headers are unusable, through the section
// headers (SHT_DYNAMIC and its linked string table). A file with neither is valid and has
// has_dynamic_section == false.
Expected<ElfInfo> read_elf_info(const std::string& path);

// The same over an in-memory image; `image` is the whole file.
Expected<ElfInfo> parse_elf_info(std::span<const std::byte> image);

// How glibc's dlopen ends on a file shorter than its headers say (glibc 2.36, measured on the
// toolkit's libnvrtc.so.13 cut with head -c): shorter than an ELF header (empty included): it fails
// with "file too short"; its program headers reach past the end: it fails with "cannot read file
// data"; a PT_LOAD segment reaches past the last page of the file: the segments are mapped, and the
// loader's first touch of a page past the end kills the process with SIGBUS (`crashes`). A file at
// least as long as an ELF header that does not start with the ELF magic fails with "invalid ELF
// header" (glibc's open_verify; measured with 64 and 1600 bytes of text). nullopt when the file
// holds what its headers describe, or is an ELF file of another class or byte order (other
// readers say why).
struct TruncatedLoad {
  bool crashes = false;
  std::string reason; // "file too short", "cannot read file data", "crashes (SIGBUS): ..."
};
std::optional<TruncatedLoad> truncated_load(const std::string& path);

// Where the bytes of the first section called `name` lie in the file at `path`: {offset, size},
// clipped to the file. nullopt when the file is not ELF, has no such section, or the section has
// no bytes in the file (SHT_NOBITS). For readers that look for something in one section only
// (a tool's version string in .rodata) instead of the whole file.
struct FileRange {
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};
std::optional<FileRange> section_in_file(const std::string& path, std::string_view name);

// The e_machine of the running process's own architecture (EM_X86_64 on x86-64, EM_AARCH64 on arm64).
std::uint16_t host_machine();
// The ELF class and byte order of the running process.
ElfClass host_class();
bool host_little_endian();

// Why this process could not load the object described by `info`, or nullopt when its class,
// byte order, machine and type (ET_DYN, which includes PIE executables) all fit. The first
// mismatch is reported, in that order, e.g. "32-bit ELF (ELF32), this process is 64-bit",
// "built for aarch64, this machine is x86_64", "not a shared object (ET_EXEC)".
std::optional<std::string> incompatibility_with_host(const ElfInfo& info);

} // namespace cudadiag::elf
