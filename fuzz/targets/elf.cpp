#include "elf/elf_file.hpp"
#include "elf/elf_symbols.hpp"
#include "elf/gpu_code.hpp"
#include "targets.hpp"

namespace cudadiag::fuzz {

int elf(const std::uint8_t* data, std::size_t size) {
  // The fatbinaries of .nv_fatbin (src/elf/gpu_code): hostile sizes, padding and entry headers.
  if (const auto code = elf::parse_gpu_code(std::span(reinterpret_cast<const std::byte*>(data), size))) {
    for (const auto& gpu : code->codes) {
      static_cast<void>(gpu.name());
    }
    static_cast<void>(code->for_gpu(9, 0));
  }
  const auto info = elf::parse_elf_info(std::span(reinterpret_cast<const std::byte*>(data), size));
  if (info) {
    static_cast<void>(elf::incompatibility_with_host(*info));
    static_cast<void>(info->class_name());
    static_cast<void>(info->machine_name());
    // The symbol tables (src/elf/elf_symbols): hostile counts, hash tables and version chains.
    const auto image = std::span(reinterpret_cast<const std::byte*>(data), size);
    if (const auto symbols = elf::parse_dynamic_symbols(image, *info)) {
      std::size_t asked = 0;
      for (const auto& reference : symbols->references()) {
        if (++asked > 64) {
          break;
        }
        static_cast<void>(symbols->defines(reference));
        static_cast<void>(symbols->defines_version(reference.version));
      }
      static_cast<void>(symbols->defines(elf::SymbolReference{"main", "", "", false}));
    }
  }
  return 0;
}

} // namespace cudadiag::fuzz
