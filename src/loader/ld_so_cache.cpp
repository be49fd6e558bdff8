#include "loader/ld_so_cache.hpp"

#include "core/filesystem.hpp"
#include "core/read_record.hpp"
#include "core/system_root.hpp"
#include "core/text.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cerrno>
#include <cstring>
#include <sys/stat.h>

namespace cudadiag::loader {
namespace {

constexpr std::string_view k_old_magic = "ld.so-1.7.0";
constexpr std::string_view k_new_magic = "glibc-ld.so.cache";
constexpr std::string_view k_new_version = "1.1";

// struct cache_file: char magic[11]; uint32_t nlibs; struct file_entry libs[] {int32 flags; uint32 key,
// value;}
constexpr std::size_t k_old_header_size = 16;
constexpr std::size_t k_old_nlibs_at = 12;
constexpr std::size_t k_old_entry_size = 12;

// struct cache_file_new: magic[17], version[3], uint32 nlibs, uint32 len_strings, uint8 flags,
// uint8 padding[3], uint32 extension_offset, uint32 unused[3]; then file_entry_new libs[]
// {int32 flags; uint32 key, value; uint32 osversion; uint64 hwcap;}
constexpr std::size_t k_new_header_size = 48;
constexpr std::size_t k_new_nlibs_at = 20;
constexpr std::size_t k_new_flags_at = 28;
constexpr std::size_t k_new_entry_size = 24;
constexpr std::size_t k_new_alignment = 8; // __alignof__(struct cache_file_new)

// The endianness bits of cache_file_new.flags.
constexpr unsigned k_endian_mask = 3;
constexpr unsigned k_endian_invalid = 1;
constexpr unsigned k_endian_little = 2;
constexpr unsigned k_endian_big = 3;
constexpr unsigned k_endian_current =
    std::endian::native == std::endian::little ? k_endian_little : k_endian_big;

// Bounds on decoded strings, so that entries sharing one huge string cannot exhaust memory.
constexpr std::size_t k_max_string_length = 4096;
constexpr std::size_t k_max_total_string_bytes = std::size_t{64} << 20U;

#if defined(__x86_64__) && defined(__LP64__)
constexpr bool host_accepts(std::int32_t flags) {
  return flags == (k_flag_elf_libc6 | k_flag_x8664_lib64);
}
#elif defined(__x86_64__)
constexpr bool host_accepts(std::int32_t flags) {
  return flags == (k_flag_elf_libc6 | k_flag_x8664_libx32);
}
#elif defined(__aarch64__) && defined(__LP64__)
constexpr bool host_accepts(std::int32_t flags) {
  return flags == (k_flag_elf_libc6 | k_flag_aarch64_lib64);
}
#elif defined(__powerpc64__)
constexpr bool host_accepts(std::int32_t flags) {
  return flags == (k_flag_elf_libc6 | 0x0500);
}
#elif defined(__s390x__)
constexpr bool host_accepts(std::int32_t flags) {
  return flags == (k_flag_elf_libc6 | 0x0400);
}
#else
// glibc's generic rule (i386 and others): any ELF, or libc6 without an ABI flag.
constexpr bool host_accepts(std::int32_t flags) {
  return flags == k_flag_elf || flags == k_flag_elf_libc6;
}
#endif

struct AbiName {
  std::int32_t abi;
  std::string_view name;
};

// ldconfig's FLAG_*_LIB* values (the 0xff00 byte of the flags).
constexpr std::array k_abi_names{
    AbiName{0x0100, "sparc64"},
    AbiName{0x0200, "ia64"},
    AbiName{k_flag_x8664_lib64, "x86-64"},
    AbiName{0x0400, "s390x"},
    AbiName{0x0500, "ppc64"},
    AbiName{0x0600, "mips64 n32"},
    AbiName{0x0700, "mips64"},
    AbiName{k_flag_x8664_libx32, "x32"},
    AbiName{0x0900, "arm hard-float"},
    AbiName{k_flag_aarch64_lib64, "aarch64"},
    AbiName{0x0b00, "arm soft-float"},
    AbiName{0x0c00, "mips nan2008"},
    AbiName{0x0d00, "mips64 n32 nan2008"},
    AbiName{0x0e00, "mips64 nan2008"},
    AbiName{0x0f00, "riscv soft-float"},
    AbiName{0x1000, "riscv double-float"},
    AbiName{0x1100, "loongarch soft-float"},
    AbiName{0x1200, "loongarch double-float"},
};

std::uint32_t load32(std::span<const std::byte> bytes, std::size_t at) {
  std::uint32_t value = 0;
  std::memcpy(&value, bytes.data() + at, sizeof value);
  return value;
}

std::uint64_t load64(std::span<const std::byte> bytes, std::size_t at) {
  std::uint64_t value = 0;
  std::memcpy(&value, bytes.data() + at, sizeof value);
  return value;
}

bool starts_with(std::span<const std::byte> bytes, std::size_t at, std::string_view text) {
  return at <= bytes.size() && text.size() <= bytes.size() - at &&
         std::memcmp(bytes.data() + at, text.data(), text.size()) == 0;
}

// Whether the first bytes of the file agree with `magic` as far as the file goes.
bool is_prefix_of_magic(std::span<const std::byte> bytes, std::string_view magic) {
  const auto length = std::min(bytes.size(), magic.size());
  return std::memcmp(bytes.data(), magic.data(), length) == 0;
}

std::string truncated(std::uint64_t declared, std::uint64_t held) {
  return "truncated: header says " + std::to_string(declared) + " entries but file holds " +
         std::to_string(held);
}

// Decodes the NUL-terminated strings that entries point at, keeping a running total.
class StringReader {
public:
  StringReader(std::span<const std::byte> bytes, std::size_t base) : m_bytes(bytes), m_base(base) {}

  Expected<std::string> read(std::uint32_t offset, std::size_t entry) {
    const std::string where = "entry " + std::to_string(entry) + ": ";
    if (m_base > m_bytes.size() || offset >= m_bytes.size() - m_base) {
      return Error{where + "string offset " + std::to_string(offset) + " out of range (file holds " +
                   std::to_string(m_bytes.size()) + " bytes)"};
    }
    const std::size_t start = m_base + offset;
    const std::size_t window = std::min(m_bytes.size() - start, k_max_string_length + 1);
    const auto* begin = reinterpret_cast<const char*>(m_bytes.data() + start); // NOLINT: byte view
    const auto* end = static_cast<const char*>(std::memchr(begin, '\0', window));
    if (end == nullptr) {
      if (window > k_max_string_length) {
        return Error{where + "string is longer than " + std::to_string(k_max_string_length) + " bytes"};
      }
      return Error{where + "string is not NUL-terminated"};
    }
    const auto length = static_cast<std::size_t>(end - begin);
    m_total += length;
    if (m_total > k_max_total_string_bytes) {
      return Error{"string data exceeds " + std::to_string(k_max_total_string_bytes >> 20U) + " MiB"};
    }
    return std::string(begin, length);
  }

private:
  std::span<const std::byte> m_bytes;
  std::size_t m_base;
  std::size_t m_total = 0;
};

// Reads one entry's key and value into `entry`.
Expected<bool> read_strings(StringReader& strings, std::uint32_t key, std::uint32_t value, std::size_t index,
                            LdCacheEntry& entry) {
  auto soname = strings.read(key, index);
  if (!soname) {
    return soname.error();
  }
  auto path = strings.read(value, index);
  if (!path) {
    return path.error();
  }
  entry.soname = std::move(*soname);
  entry.path = std::move(*path);
  return true;
}

// The new-format table whose header starts at `base`; string offsets are relative to `base`.
Expected<std::vector<LdCacheEntry>> parse_new(std::span<const std::byte> bytes, std::size_t base) {
  if (bytes.size() - base < k_new_header_size) {
    return Error{"truncated header"};
  }
  if (!starts_with(bytes, base + k_new_magic.size(), k_new_version)) {
    const auto* version = reinterpret_cast<const char*>(bytes.data() + base + k_new_magic.size()); // NOLINT
    std::string printable;
    for (std::size_t i = 0; i < k_new_version.size(); ++i) {
      const char c = version[i];
      printable += (c >= ' ' && c <= '~') ? c : '?';
    }
    return Error{"unsupported ld.so.cache version \"" + printable + "\""};
  }
  const unsigned endian = std::to_integer<unsigned>(bytes[base + k_new_flags_at]) & k_endian_mask;
  if (endian == k_endian_invalid) {
    return Error{"ld.so.cache endianness flag is invalid"};
  }
  if (endian != 0 && endian != k_endian_current) {
    const bool big = endian == k_endian_big;
    return Error{std::string("cache written for a ") + (big ? "big" : "little") +
                 "-endian machine, this one is " + (big ? "little" : "big") + "-endian"};
  }
  const std::uint64_t nlibs = load32(bytes, base + k_new_nlibs_at);
  const std::size_t first = base + k_new_header_size;
  const std::uint64_t held = (bytes.size() - first) / k_new_entry_size;
  if (nlibs > held) {
    return Error{truncated(nlibs, held)};
  }
  std::vector<LdCacheEntry> entries(static_cast<std::size_t>(nlibs));
  StringReader strings(bytes, base);
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::size_t at = first + i * k_new_entry_size;
    auto& entry = entries[i];
    entry.flags = static_cast<std::int32_t>(load32(bytes, at));
    entry.hwcap = load64(bytes, at + 16);
    if (auto ok = read_strings(strings, load32(bytes, at + 4), load32(bytes, at + 8), i, entry); !ok) {
      return ok.error();
    }
  }
  return entries;
}

Expected<LdSoCache> parse_old_or_compat(std::span<const std::byte> bytes) {
  if (bytes.size() < k_old_header_size) {
    return Error{"truncated header"};
  }
  const std::uint64_t nlibs = load32(bytes, k_old_nlibs_at);
  const std::uint64_t held = (bytes.size() - k_old_header_size) / k_old_entry_size;
  if (nlibs > held) {
    return Error{truncated(nlibs, held)};
  }
  const std::size_t old_end = k_old_header_size + static_cast<std::size_t>(nlibs) * k_old_entry_size;
  // As glibc: a complete new-format header right after the (aligned) old entries wins.
  const std::size_t new_at = (old_end + k_new_alignment - 1) & ~(k_new_alignment - 1);
  if (new_at <= bytes.size() && bytes.size() - new_at >= k_new_header_size &&
      starts_with(bytes, new_at, k_new_magic) &&
      starts_with(bytes, new_at + k_new_magic.size(), k_new_version)) {
    auto entries = parse_new(bytes, new_at);
    if (!entries) {
      return entries.error();
    }
    return LdSoCache(std::move(*entries), LdCacheFormat::compat);
  }
  std::vector<LdCacheEntry> entries(static_cast<std::size_t>(nlibs));
  StringReader strings(bytes, old_end); // old string offsets count from the end of the entries
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const std::size_t at = k_old_header_size + i * k_old_entry_size;
    auto& entry = entries[i];
    entry.flags = static_cast<std::int32_t>(load32(bytes, at));
    if (auto ok = read_strings(strings, load32(bytes, at + 4), load32(bytes, at + 8), i, entry); !ok) {
      return ok.error();
    }
  }
  return LdSoCache(std::move(entries), LdCacheFormat::old_format);
}

void append32(std::string& out, std::uint32_t value) {
  std::array<char, sizeof value> raw{};
  std::memcpy(raw.data(), &value, sizeof value);
  out.append(raw.data(), raw.size());
}

void append64(std::string& out, std::uint64_t value) {
  std::array<char, sizeof value> raw{};
  std::memcpy(raw.data(), &value, sizeof value);
  out.append(raw.data(), raw.size());
}

} // namespace

bool LdCacheEntry::matches_host() const {
  return host_accepts(flags);
}

std::string LdCacheEntry::arch_label() const {
  const std::int32_t type = flags & k_flag_type_mask;
  const std::int32_t abi = flags & k_flag_abi_mask;
  if (flags == k_flag_elf) {
    return "ELF";
  }
  if (flags == k_flag_elf_libc6) {
#if defined(__x86_64__) || defined(__i386__)
    return "i386";
#else
    return "libc6";
#endif
  }
  if (type == k_flag_elf_libc6 && (flags & ~(k_flag_type_mask | k_flag_abi_mask)) == 0) {
    for (const auto& row : k_abi_names) {
      if (row.abi == abi) {
        return std::string(row.name);
      }
    }
  }
  return "flags " + hex_number(static_cast<std::uint32_t>(flags));
}

LdSoCache::LdSoCache(std::vector<LdCacheEntry> entries, LdCacheFormat format)
    : m_entries(std::move(entries)), m_format(format), m_by_soname(m_entries.size()) {
  for (std::uint32_t i = 0; i < m_by_soname.size(); ++i) {
    m_by_soname[i] = i;
  }
  std::stable_sort(m_by_soname.begin(), m_by_soname.end(), [this](std::uint32_t a, std::uint32_t b) {
    return m_entries[a].soname < m_entries[b].soname;
  });
}

std::pair<std::vector<std::uint32_t>::const_iterator, std::vector<std::uint32_t>::const_iterator>
LdSoCache::with_soname(std::string_view soname) const {
  const auto first = std::lower_bound(
      m_by_soname.begin(), m_by_soname.end(), soname,
      [this](std::uint32_t index, std::string_view name) { return m_entries[index].soname < name; });
  const auto last =
      std::upper_bound(first, m_by_soname.end(), soname, [this](std::string_view name, std::uint32_t index) {
        return name < m_entries[index].soname;
      });
  return {first, last};
}

std::vector<const LdCacheEntry*> LdSoCache::find_all(std::string_view soname) const {
  std::vector<const LdCacheEntry*> found;
  const auto [first, last] = with_soname(soname);
  for (auto at = first; at != last; ++at) {
    found.push_back(&m_entries[*at]); // in file order: the sort kept it among equal names
  }
  return found;
}

const LdCacheEntry* LdSoCache::resolve(std::string_view soname) const {
  const LdCacheEntry* hwcap_fallback = nullptr;
  const auto [first, last] = with_soname(soname);
  for (auto at = first; at != last; ++at) {
    const auto& entry = m_entries[*at];
    if (!entry.matches_host()) {
      continue;
    }
    if (entry.hwcap == 0) {
      return &entry;
    }
    if (hwcap_fallback == nullptr) {
      hwcap_fallback = &entry;
    }
  }
  return hwcap_fallback;
}

bool could_be_ld_so_cache(std::span<const std::byte> bytes) {
  return bytes.empty() || starts_with(bytes, 0, k_new_magic) || starts_with(bytes, 0, k_old_magic) ||
         is_prefix_of_magic(bytes, k_new_magic) || is_prefix_of_magic(bytes, k_old_magic);
}

Expected<LdSoCache> parse_ld_so_cache(std::span<const std::byte> bytes) {
  if (bytes.empty()) {
    return Error{"empty file"};
  }
  if (starts_with(bytes, 0, k_new_magic)) {
    auto entries = parse_new(bytes, 0);
    if (!entries) {
      return entries.error();
    }
    return LdSoCache(std::move(*entries), LdCacheFormat::new_format);
  }
  if (starts_with(bytes, 0, k_old_magic)) {
    return parse_old_or_compat(bytes);
  }
  if (is_prefix_of_magic(bytes, k_new_magic) || is_prefix_of_magic(bytes, k_old_magic)) {
    return Error{"truncated header"};
  }
  return Error{"not an ld.so.cache (bad magic)"};
}

Expected<LdSoCache> read_ld_so_cache(const std::string& path) {
  fs::note_path(path);
  const int fd = ::open(fs::HostPath(path).c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    return Error{"cannot open " + path + ": " + std::strerror(errno)};
  }
  struct stat st {};
  std::string failure;
  if (::fstat(fd, &st) != 0) {
    failure = "cannot stat " + path + ": " + std::strerror(errno);
  } else if (!S_ISREG(st.st_mode)) {
    failure = path + " is not a regular file";
  } else if (static_cast<std::uint64_t>(st.st_size) > k_max_ld_so_cache_size) {
    failure = path + " is larger than " + std::to_string(k_max_ld_so_cache_size >> 20U) + " MiB";
  }
  std::vector<std::byte> content;
  if (failure.empty()) {
    content.resize(static_cast<std::size_t>(st.st_size));
    if (const auto done = fs::read_at(fd, 0, content.data(), content.size()); !done) {
      failure = "cannot read " + path + ": " + done.error().message;
    } else {
      content.resize(*done); // fewer bytes: the file shrank; parse what is there
    }
  }
  ::close(fd);
  if (!failure.empty()) {
    return Error{failure};
  }
  return parse_ld_so_cache(content);
}

std::string build_ld_so_cache(const std::vector<LdCacheEntry>& entries) {
  std::string strings;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> offsets;
  const std::size_t strings_at = k_new_header_size + entries.size() * k_new_entry_size;
  for (const auto& entry : entries) {
    const auto key = static_cast<std::uint32_t>(strings_at + strings.size());
    strings.append(entry.soname).push_back('\0');
    const auto value = static_cast<std::uint32_t>(strings_at + strings.size());
    strings.append(entry.path).push_back('\0');
    offsets.emplace_back(key, value);
  }

  std::string out;
  out.reserve(strings_at + strings.size());
  out.append(k_new_magic).append(k_new_version);
  append32(out, static_cast<std::uint32_t>(entries.size()));
  append32(out, static_cast<std::uint32_t>(strings.size())); // len_strings
  out.push_back(static_cast<char>(k_endian_current));        // flags
  out.append(3, '\0');                                       // padding
  append32(out, 0);                                          // extension_offset: none
  out.append(3 * sizeof(std::uint32_t), '\0');               // unused
  for (std::size_t i = 0; i < entries.size(); ++i) {
    append32(out, static_cast<std::uint32_t>(entries[i].flags));
    append32(out, offsets[i].first);
    append32(out, offsets[i].second);
    append32(out, 0); // osversion
    append64(out, entries[i].hwcap);
  }
  out.append(strings);
  return out;
}

} // namespace cudadiag::loader
