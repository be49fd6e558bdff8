#include "elf/gpu_code.hpp"

#include "elf/byte_source.hpp"
#include "elf/elf_sections.hpp"

#include <algorithm>
#include <array>
#include <map>

namespace cudadiag::elf {
namespace {

using detail::ByteSource;
using detail::load;

constexpr std::uint32_t k_fatbin_magic = 0xBA55ED50U;
constexpr std::size_t k_fatbin_header_size = 16;
constexpr std::size_t k_entry_header_size = 64; // the fixed part; newer entries are longer
constexpr std::uint32_t k_max_entry_header_size = 4096;
constexpr std::uint16_t k_kind_ptx = 1;
constexpr std::uint16_t k_kind_sass = 2;
constexpr std::uint16_t k_kind_sass_alternate = 0x10; // cuobjdump lists it as ELF too
constexpr std::uint64_t k_flag_arch_specific = 0x100000;
constexpr std::uint64_t k_flag_family = 0x200000;
constexpr std::uint32_t k_sht_nobits = 8;
// Bounds on hostile input: a real library has thousands of fatbinaries (libcublasLt: ~2,800).
constexpr std::uint64_t k_max_fatbinaries = 1U << 20U;
constexpr std::uint64_t k_max_entries = 1U << 22U;
// Between fatbinaries only alignment padding is expected; this many 8-byte steps without a magic
// number end the walk.
constexpr std::uint64_t k_max_padding_steps = 512;

// Reads small ranges through one cached, aligned 4 KiB block: entry headers close together cost
// one read.
class BlockReader {
public:
  explicit BlockReader(const ByteSource& source) : m_source(source) {}

  // The `out.size()` (≤ 4 KiB) bytes at `offset`; false unless all of them exist.
  bool read(std::uint64_t offset, std::span<std::byte> out) {
    const std::uint64_t size = m_source.size();
    if (offset > size || out.size() > size - offset) {
      return false;
    }
    const std::uint64_t start = offset - offset % k_block;
    if (offset + out.size() > start + k_block) {
      return m_source.read(offset, out); // straddles two blocks
    }
    if (!m_cached || m_start != start) {
      m_length = static_cast<std::size_t>(std::min<std::uint64_t>(k_block, size - start));
      if (!m_source.read(start, std::span(m_block).first(m_length))) {
        m_cached = false;
        return false;
      }
      m_start = start;
      m_cached = true;
    }
    std::copy_n(m_block.begin() + static_cast<std::ptrdiff_t>(offset - start), out.size(), out.begin());
    return true;
  }

private:
  static constexpr std::size_t k_block = 4096;
  const ByteSource& m_source;
  std::array<std::byte, k_block> m_block{};
  std::uint64_t m_start = 0;
  std::size_t m_length = 0;
  bool m_cached = false;
};

struct CodeKey {
  GpuCodeKind kind;
  int arch;
  char variant;
  auto operator<=>(const CodeKey&) const = default;
};

// Walks the fatbinaries of the section [begin, end) and collects their codes.
class FatbinWalker {
public:
  FatbinWalker(const ByteSource& source, std::uint64_t begin, std::uint64_t end)
      : m_reader(source), m_begin(begin), m_end(end) {}

  GpuCodeList walk() {
    std::uint64_t at = m_begin;
    std::uint64_t padding_steps = 0;
    while (at + k_fatbin_header_size <= m_end && !m_result.problem) {
      std::array<std::byte, k_fatbin_header_size> header{};
      if (!m_reader.read(at, header)) {
        m_result.problem = "cannot read the fatbinary at section offset " + std::to_string(at - m_begin);
        break;
      }
      if (load(header, 0, 4, true) != k_fatbin_magic) {
        if (++padding_steps > k_max_padding_steps) {
          m_result.problem =
              "no fatbinary at section offset " + std::to_string(at - m_begin - 8 * (padding_steps - 1));
          break;
        }
        at += 8;
        continue;
      }
      padding_steps = 0;
      if (++m_result.fatbinaries > k_max_fatbinaries) {
        m_result.problem = "more than " + std::to_string(k_max_fatbinaries) + " fatbinaries";
        break;
      }
      const auto header_size = load(header, 6, 2, true);
      const auto payload_size = load(header, 8, 8, true);
      if (header_size < k_fatbin_header_size || payload_size > m_end - at ||
          header_size > m_end - at - payload_size) {
        m_result.problem = "truncated fatbinary at section offset " + std::to_string(at - m_begin);
        break;
      }
      const std::uint64_t end = at + header_size + payload_size;
      read_entries(at + header_size, end);
      at = end;
    }
    for (const auto& [key, isa] : m_codes) {
      m_result.codes.push_back({key.kind, key.arch, key.variant, isa});
    }
    return std::move(m_result);
  }

private:
  void read_entries(std::uint64_t at, std::uint64_t end) {
    while (at + k_entry_header_size <= end) {
      std::array<std::byte, k_entry_header_size> entry{};
      if (!m_reader.read(at, entry)) {
        m_result.problem = "cannot read a fatbinary entry at section offset " + std::to_string(at - m_begin);
        return;
      }
      const auto kind = static_cast<std::uint16_t>(load(entry, 0, 2, true));
      const auto own_size = load(entry, 4, 4, true);
      const auto padded_payload = load(entry, 8, 8, true);
      if (own_size < k_entry_header_size || own_size > k_max_entry_header_size || padded_payload > end - at ||
          own_size > end - at - padded_payload) {
        m_result.problem = "malformed fatbinary entry at section offset " + std::to_string(at - m_begin);
        return;
      }
      const auto arch = load(entry, 28, 4, true);
      if ((kind == k_kind_ptx || kind == k_kind_sass || kind == k_kind_sass_alternate) && arch >= 10 &&
          arch < 1000) {
        if (++m_result.entries > k_max_entries) {
          m_result.problem = "more than " + std::to_string(k_max_entries) + " fatbinary entries";
          return;
        }
        const auto flags = load(entry, 40, 8, true);
        const char variant = (flags & k_flag_arch_specific) != 0 ? 'a'
                             : (flags & k_flag_family) != 0      ? 'f'
                                                                 : '\0';
        const CodeKey key{kind == k_kind_ptx ? GpuCodeKind::ptx : GpuCodeKind::sass, static_cast<int>(arch),
                          variant};
        const int isa = kind == k_kind_ptx
                            ? static_cast<int>(std::min<std::uint64_t>(load(entry, 26, 2, true), 99) * 10 +
                                               std::min<std::uint64_t>(load(entry, 24, 2, true), 9))
                            : 0;
        auto [slot, inserted] = m_codes.emplace(key, isa);
        if (!inserted) {
          slot->second = std::max(slot->second, isa);
        }
      }
      at += own_size + padded_payload;
    }
  }

  BlockReader m_reader;
  std::uint64_t m_begin;
  std::uint64_t m_end;
  std::map<CodeKey, int> m_codes; // each code and its newest PTX ISA
  GpuCodeList m_result;
};

Expected<GpuCodeList> gpu_code_of(const ByteSource& source) {
  const auto section = detail::find_section(source, ".nv_fatbin");
  if (!section) {
    return section.error();
  }
  if (!section.value() || section.value()->type == k_sht_nobits || section.value()->size == 0) {
    return GpuCodeList{};
  }
  const auto& range = *section.value();
  if (!range.little_endian || range.elf_class != ElfClass::elf64) {
    return GpuCodeList{}; // CUDA builds fatbinaries into 64-bit little-endian hosts only
  }
  if (range.offset > source.size() || range.size > source.size() - range.offset) {
    return Error{".nv_fatbin section outside the file"};
  }
  return FatbinWalker(source, range.offset, range.offset + range.size).walk();
}

} // namespace

std::string GpuCode::name() const {
  std::string out = kind == GpuCodeKind::sass ? "sm_" : "compute_";
  out += std::to_string(arch);
  if (variant != 0) {
    out += variant;
  }
  return out;
}

bool GpuCode::runs_on(int major, int minor) const {
  const int gpu = major * 10 + minor;
  if (variant == 'a') {
    return arch == gpu;
  }
  if (kind == GpuCodeKind::ptx && variant == 0) {
    return arch <= gpu;
  }
  return arch / 10 == major && arch % 10 <= minor;
}

std::vector<GpuCode> GpuCodeList::for_gpu(int major, int minor) const {
  std::vector<GpuCode> out;
  std::copy_if(codes.begin(), codes.end(), std::back_inserter(out),
               [&](const GpuCode& code) { return code.runs_on(major, minor); });
  return out;
}

Expected<GpuCodeList> parse_gpu_code(std::span<const std::byte> image) {
  const detail::SpanSource source(image);
  return gpu_code_of(source);
}

Expected<GpuCodeList> read_gpu_code(const std::string& path) {
  return detail::with_file_source(path, [](const ByteSource& source) { return gpu_code_of(source); });
}

} // namespace cudadiag::elf
