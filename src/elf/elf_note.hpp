#pragma once
// The first note of a note section (SHT_NOTE) of an ELF file, read without loading it: the CUDA
// forward-compatibility libcuda's `.note.cuda.fwd_compatibility` (name "NVIDIA Corporation", a JSON
// descriptor: "CUDA Version", the "Driver" branches and the "Device" brands it supports), which the
// NVIDIA Container Toolkit (1.19 and later) reads to decide whether a container uses the image's
// compat libcuda.

#include "core/expected.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cudadiag::elf {

struct ElfNote {
  std::string name; // without its terminating NUL
  std::uint32_t type = 0;
  std::string desc;
};

// nullopt when the file has no section of that name; an Error when it is not ELF, or the section
// or note is malformed or over 64 KiB.
Expected<std::optional<ElfNote>> read_section_note(const std::string& path, std::string_view section);

} // namespace cudadiag::elf
