#include "bundle/tar_archive.hpp"

#include <algorithm>
#include <array>
#include <cstring>

namespace cudadiag::bundle {
namespace {

// ustar header layout (POSIX.1-1988): offsets and sizes of the fields this code uses.
struct Field {
  std::size_t offset;
  std::size_t size;
};
constexpr Field k_name{0, 100};
constexpr Field k_mode{100, 8};
constexpr Field k_uid{108, 8};
constexpr Field k_gid{116, 8};
constexpr Field k_size{124, 12};
constexpr Field k_mtime{136, 12};
constexpr Field k_checksum{148, 8};
constexpr std::size_t k_typeflag = 156;
constexpr Field k_magic{257, 6};
constexpr Field k_version{263, 2};
constexpr Field k_uname{265, 32};
constexpr Field k_gname{297, 32};
constexpr Field k_prefix{345, 155};

constexpr std::size_t k_max_members = 10000;

using Header = std::array<char, k_tar_block>;

void put_text(Header& header, Field field, std::string_view text) {
  // An empty view may have a null data() (the empty prefix of a short name): memcpy from null is
  // undefined even for 0 bytes.
  if (!text.empty()) {
    std::memcpy(header.data() + field.offset, text.data(), std::min(text.size(), field.size));
  }
}

// An octal number right-aligned in the field, zero-padded, NUL-terminated.
void put_octal(Header& header, Field field, std::uint64_t value) {
  std::string digits(field.size - 1, '0');
  for (auto it = digits.rbegin(); it != digits.rend() && value != 0; ++it) {
    *it = static_cast<char>('0' + (value & 7U));
    value >>= 3U;
  }
  put_text(header, field, digits);
}

std::uint64_t checksum(const Header& header) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < header.size(); ++i) {
    const bool in_field = i >= k_checksum.offset && i < k_checksum.offset + k_checksum.size;
    sum += in_field ? static_cast<unsigned char>(' ') : static_cast<unsigned char>(header[i]);
  }
  return sum;
}

std::size_t padded(std::size_t size) {
  return (size + k_tar_block - 1) / k_tar_block * k_tar_block;
}

Expected<void> check_name(std::string_view name) {
  if (name.empty() || name.front() == '/') {
    return Error{"tar member name must be relative and non-empty: '" + std::string(name) + "'"};
  }
  // ustar fields end at the first NUL: such a name would read back as another one.
  if (name.find('\0') != std::string_view::npos) {
    return Error{"tar member name must not contain a NUL byte"};
  }
  std::string_view rest = name;
  while (!rest.empty()) {
    const auto slash = rest.find('/');
    if (rest.substr(0, slash) == "..") {
      return Error{"tar member name must not contain '..': '" + std::string(name) + "'"};
    }
    rest = slash == std::string_view::npos ? std::string_view() : rest.substr(slash + 1);
  }
  return {};
}

// Splits `name` into ustar's prefix and name fields; nullopt when it does not fit.
std::optional<std::pair<std::string_view, std::string_view>> split_name(std::string_view name) {
  if (name.size() <= k_name.size) {
    return std::pair{std::string_view(), name};
  }
  for (auto slash = name.rfind('/'); slash != std::string_view::npos && slash > 0;
       slash = name.rfind('/', slash - 1)) {
    if (slash <= k_prefix.size && name.size() - slash - 1 <= k_name.size && slash + 1 < name.size()) {
      return std::pair{name.substr(0, slash), name.substr(slash + 1)};
    }
  }
  return std::nullopt;
}

std::string_view field_text(std::string_view block, Field field) {
  auto text = block.substr(field.offset, field.size);
  return text.substr(0, text.find('\0'));
}

std::optional<std::uint64_t> parse_octal(std::string_view block, Field field) {
  const auto text = block.substr(field.offset, field.size);
  std::uint64_t value = 0;
  bool digits = false;
  for (const char c : text) {
    if (c == '\0' || (c == ' ' && digits)) {
      break;
    }
    if (c == ' ') {
      continue;
    }
    if (c < '0' || c > '7' || value > (std::uint64_t{1} << 60U)) {
      return std::nullopt;
    }
    value = value * 8 + static_cast<std::uint64_t>(c - '0');
    digits = true;
  }
  return value;
}

bool all_zero(std::string_view block) {
  return std::all_of(block.begin(), block.end(), [](char c) { return c == '\0'; });
}

// The "path" record of a pax extended header ("<len> path=<value>\n" lines), if any.
std::optional<std::string> pax_path(std::string_view records) {
  while (!records.empty()) {
    const auto space = records.find(' ');
    if (space == std::string_view::npos) {
      return std::nullopt;
    }
    std::size_t length = 0;
    for (const char c : records.substr(0, space)) {
      if (c < '0' || c > '9') {
        return std::nullopt;
      }
      length = length * 10 + static_cast<std::size_t>(c - '0');
    }
    if (length <= space + 1 || length > records.size()) {
      return std::nullopt;
    }
    const auto record = records.substr(space + 1, length - space - 2); // without the trailing '\n'
    if (record.substr(0, 5) == "path=") {
      return std::string(record.substr(5));
    }
    records.remove_prefix(length);
  }
  return std::nullopt;
}

} // namespace

Expected<void> TarWriter::add(std::string_view name, char type, std::string_view content, unsigned mode) {
  CUDADIAG_TRY(check_name(name));
  const auto parts = split_name(name);
  if (!parts) {
    return Error{"tar member name too long for ustar: '" + std::string(name) + "'"};
  }
  Header header{};
  put_text(header, k_name, parts->second);
  put_text(header, k_prefix, parts->first);
  put_octal(header, k_mode, mode & 07777U);
  put_octal(header, k_uid, 0);
  put_octal(header, k_gid, 0);
  put_octal(header, k_size, content.size());
  put_octal(header, k_mtime, static_cast<std::uint64_t>(std::max<std::int64_t>(m_mtime, 0)));
  header[k_typeflag] = type;
  put_text(header, k_magic, std::string_view("ustar\0", 6));
  put_text(header, k_version, "00");
  put_text(header, k_uname, "root");
  put_text(header, k_gname, "root");
  // The checksum field: six octal digits, NUL, space.
  std::string sum(6, '0');
  auto value = checksum(header);
  for (auto it = sum.rbegin(); it != sum.rend(); ++it) {
    *it = static_cast<char>('0' + (value & 7U));
    value >>= 3U;
  }
  put_text(header, k_checksum, sum + std::string("\0 ", 2));
  m_data.append(header.data(), header.size());
  m_data.append(content);
  m_data.append(padded(content.size()) - content.size(), '\0');
  return {};
}

Expected<void> TarWriter::add_file(std::string_view name, std::string_view content, unsigned mode) {
  return add(name, '0', content, mode);
}

Expected<void> TarWriter::add_directory(std::string_view name, unsigned mode) {
  std::string with_slash(name);
  if (with_slash.empty() || with_slash.back() != '/') {
    with_slash += '/';
  }
  return add(with_slash, '5', {}, mode);
}

std::string TarWriter::finish() const {
  return m_data + std::string(2 * k_tar_block, '\0');
}

Expected<std::vector<TarEntry>> read_tar(std::string_view data) {
  std::vector<TarEntry> entries;
  std::optional<std::string> long_name; // from a GNU 'L' or pax 'x' record, for the next member
  std::size_t offset = 0;
  while (offset + k_tar_block <= data.size()) {
    const auto block = data.substr(offset, k_tar_block);
    if (all_zero(block)) {
      return entries; // the end-of-archive marker
    }
    Header header{};
    std::memcpy(header.data(), block.data(), k_tar_block);
    const auto stored = parse_octal(block, k_checksum);
    if (!stored || *stored != checksum(header)) {
      return Error{"not a tar archive (bad header checksum at offset " + std::to_string(offset) + ")"};
    }
    const auto size = parse_octal(block, k_size);
    std::string name(field_text(block, k_name));
    if (field_text(block, k_magic).substr(0, 5) == "ustar" && !field_text(block, k_prefix).empty()) {
      name.insert(0, std::string(field_text(block, k_prefix)) + "/");
    }
    if (!size) {
      return Error{"corrupt tar archive: member " + name + " has a bad size field"};
    }
    offset += k_tar_block;
    if (*size > data.size() - offset) {
      return Error{"truncated tar archive: member " + name + " needs " + std::to_string(*size) + " bytes, " +
                   std::to_string(data.size() - offset) + " left"};
    }
    const auto content = data.substr(offset, *size);
    offset += padded(*size);
    const char type = block[k_typeflag];
    if (type == 'L') {
      long_name = std::string(content.substr(0, content.find('\0')));
      continue;
    }
    if (type == 'x') {
      long_name = pax_path(content);
      continue;
    }
    if (type != '0' && type != '\0' && type != '5') {
      long_name.reset();
      continue; // links, devices, global pax headers: not part of a bundle
    }
    if (entries.size() == k_max_members) {
      return Error{"more than " + std::to_string(k_max_members) + " members in the tar archive"};
    }
    TarEntry entry;
    entry.name = long_name.value_or(name);
    entry.directory = type == '5';
    if (!entry.directory) {
      entry.content = std::string(content);
    }
    long_name.reset();
    entries.push_back(std::move(entry));
  }
  if (data.size() < k_tar_block) {
    return Error{"not a tar archive (shorter than one header)"};
  }
  if (offset != data.size()) {
    return Error{"truncated tar archive: a partial header at offset " + std::to_string(offset)};
  }
  // No end-of-archive marker, but every member is complete: accept, as GNU tar does.
  return entries;
}

} // namespace cudadiag::bundle
