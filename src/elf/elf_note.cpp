#include "elf/elf_note.hpp"

#include "elf/byte_source.hpp"
#include "elf/elf_sections.hpp"

#include <cstring>

namespace cudadiag::elf {
namespace {

constexpr std::uint32_t k_sht_note = 7;
constexpr std::uint64_t k_max_section = 64 * 1024;

std::uint32_t word(const detail::ByteBuffer& bytes, std::size_t at, bool little_endian) {
  std::uint32_t value = 0;
  for (std::size_t i = 0; i < 4; ++i) {
    const auto byte = static_cast<std::uint32_t>(bytes[at + (little_endian ? 3 - i : i)]);
    value = (value << 8U) | byte;
  }
  return value;
}

std::size_t aligned4(std::size_t size) {
  return (size + 3U) & ~std::size_t{3};
}

} // namespace

Expected<std::optional<ElfNote>> read_section_note(const std::string& path, std::string_view section) {
  return detail::with_file_source(
      path, [section](const detail::FileSource& source) -> Expected<std::optional<ElfNote>> {
        auto found = detail::find_section(source, section);
        if (!found) {
          return found.error();
        }
        if (!found.value()) {
          return std::optional<ElfNote>{};
        }
        const auto& range = *found.value();
        if (range.type != k_sht_note || range.size < 12 || range.size > k_max_section) {
          return Error{std::string(section) + ": not a note section of 12 bytes to 64 KiB"};
        }
        const auto bytes = source.bytes(range.offset, range.size);
        if (!bytes) {
          return Error{std::string(section) + ": outside the file"};
        }
        const auto name_size = word(*bytes, 0, range.little_endian);
        const auto desc_size = word(*bytes, 4, range.little_endian);
        ElfNote note;
        note.type = word(*bytes, 8, range.little_endian);
        const auto desc_at = 12 + aligned4(name_size);
        if (name_size > range.size || desc_size > range.size || desc_at + desc_size > range.size) {
          return Error{std::string(section) + ": a note larger than its section"};
        }
        note.name.assign(reinterpret_cast<const char*>(bytes->data() + 12), name_size);
        while (!note.name.empty() && note.name.back() == '\0') {
          note.name.pop_back();
        }
        note.desc.assign(reinterpret_cast<const char*>(bytes->data() + desc_at), desc_size);
        while (!note.desc.empty() && note.desc.back() == '\0') {
          note.desc.pop_back();
        }
        return std::optional<ElfNote>(std::move(note));
      });
}

} // namespace cudadiag::elf
