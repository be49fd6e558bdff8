#include "elf/elf_file.hpp"
#include "targets.hpp"

namespace cudadiag::fuzz {

int elf(const std::uint8_t* data, std::size_t size) {
  const auto info = elf::parse_elf_info(std::span(reinterpret_cast<const std::byte*>(data), size));
  if (info) {
    static_cast<void>(elf::incompatibility_with_host(*info));
    static_cast<void>(info->class_name());
    static_cast<void>(info->machine_name());
  }
  return 0;
}

} // namespace cudadiag::fuzz
