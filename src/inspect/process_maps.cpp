#include "inspect/process_maps.hpp"

#include "inspect/access_denial.hpp"

#include <fcntl.h>
#include <link.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <optional>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unordered_set>

namespace cudadiag::inspect {
namespace {

constexpr std::string_view k_deleted_suffix = " (deleted)";

bool is_hex_digit(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
bool is_decimal_digit(char c) {
  return c >= '0' && c <= '9';
}

bool all_of(std::string_view text, bool (*predicate)(char)) {
  if (text.empty()) {
    return false;
  }
  for (const char c : text) {
    if (!predicate(c)) {
      return false;
    }
  }
  return true;
}

// "hex<sep>hex", as in the address range ("7f12-7f34") and the device ("08:01").
bool is_hex_pair(std::string_view text, char separator) {
  const auto at = text.find(separator);
  return at != std::string_view::npos && all_of(text.substr(0, at), is_hex_digit) &&
         all_of(text.substr(at + 1), is_hex_digit);
}

bool is_permissions(std::string_view text) {
  return text.size() == 4 && (text[0] == 'r' || text[0] == '-') && (text[1] == 'w' || text[1] == '-') &&
         (text[2] == 'x' || text[2] == '-') && (text[3] == 'p' || text[3] == 's');
}

// Splits off the next space-separated field of `rest`, skipping leading spaces.
std::string_view next_field(std::string_view& rest) {
  const auto start = rest.find_first_not_of(' ');
  if (start == std::string_view::npos) {
    rest = {};
    return {};
  }
  rest.remove_prefix(start);
  const auto end = rest.find(' ');
  const auto field = rest.substr(0, end);
  rest.remove_prefix(end == std::string_view::npos ? rest.size() : end);
  return field;
}

// The kernel writes a newline in a path as the four characters "\012"; nothing else is escaped.
std::string decode_path(std::string_view raw) {
  constexpr std::string_view k_newline_escape = "\\012";
  std::string out;
  out.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw.substr(i, k_newline_escape.size()) == k_newline_escape) {
      out += '\n';
      i += k_newline_escape.size() - 1;
    } else {
      out += raw[i];
    }
  }
  return out;
}

// One line of /proc/PID/maps as a mapped file; nullopt for anonymous and pseudo mappings and
// for lines that are not in the maps format.
std::optional<MappedFile> parse_line(std::string_view line) {
  std::string_view rest = line;
  const auto range = next_field(rest);
  const auto permissions = next_field(rest);
  const auto offset = next_field(rest);
  const auto device = next_field(rest);
  const auto inode_text = next_field(rest);
  if (!is_hex_pair(range, '-') || !is_permissions(permissions) || !all_of(offset, is_hex_digit) ||
      !is_hex_pair(device, ':') || !all_of(inode_text, is_decimal_digit)) {
    return std::nullopt;
  }
  std::uint64_t inode = 0;
  const auto* inode_end = inode_text.data() + inode_text.size();
  if (std::from_chars(inode_text.data(), inode_end, inode).ptr != inode_end) {
    return std::nullopt;
  }
  const auto path_start = rest.find_first_not_of(' ');
  if (path_start == std::string_view::npos || rest[path_start] != '/') {
    return std::nullopt;
  }
  auto raw_path = rest.substr(path_start);
  MappedFile file;
  if (raw_path.ends_with(k_deleted_suffix)) {
    file.deleted = true;
    raw_path.remove_suffix(k_deleted_suffix.size());
  }
  file.path = decode_path(raw_path);
  file.inode = inode;
  file.device = std::string(device);
  return file;
}

std::string identity_key(const MappedFile& file) {
  return file.device + '\0' + std::to_string(file.inode) + '\0' + file.path;
}

std::string maps_path(int pid) {
  return "/proc/" + std::to_string(pid) + "/maps";
}

// The scheduler state letter of a process from /proc/<pid>/stat ('R', 'S', 'Z', …); '\0' when the
// process no longer exists or the file cannot be read.
char process_state(int pid) {
  const auto path = "/proc/" + std::to_string(pid) + "/stat";
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return '\0';
  }
  std::array<char, 1024> buffer{};
  const ssize_t got = ::read(fd, buffer.data(), buffer.size());
  ::close(fd);
  if (got <= 0) {
    return '\0';
  }
  // "pid (comm) S …": comm may contain spaces and parentheses, so look after the last ')'.
  const std::string_view stat(buffer.data(), static_cast<std::size_t>(got));
  const auto close_paren = stat.rfind(')');
  if (close_paren == std::string_view::npos || close_paren + 2 >= stat.size()) {
    return '\0';
  }
  return stat[close_paren + 2];
}

bool has_exited(char state) {
  return state == '\0' || state == 'Z' || state == 'X' || state == 'x';
}

Error zombie_error(int pid) {
  return Error{"process " + std::to_string(pid) +
               " has exited (a zombie waiting for its parent to reap it); its mappings are gone"};
}

Error open_error(int pid, int error) {
  const auto id = std::to_string(pid);
  if (error == ENOENT || error == ESRCH) {
    return Error{"no process with PID " + id};
  }
  if (error == EACCES || error == EPERM) {
    return Error{"permission denied reading " + maps_path(pid) + " " +
                 access_denial_reason(pid, access_facts(pid))};
  }
  return Error{"cannot read " + maps_path(pid) + ": " + std::strerror(error)};
}

struct ReadResult {
  std::string content;
  int error = 0; // errno of a failed read; 0 when the read reached end of file or the cap
};

// Reads until end of file or `cap` bytes. /proc files report size 0, so the size is not asked.
ReadResult read_all(int fd, std::size_t cap) {
  constexpr std::size_t k_chunk = 64U << 10U;
  ReadResult result;
  auto& content = result.content;
  while (content.size() < cap) {
    const auto old_size = content.size();
    const auto want = std::min(k_chunk, cap - old_size);
    content.resize(old_size + want);
    const ssize_t got = ::read(fd, content.data() + old_size, want);
    if (got < 0) {
      result.error = errno;
      content.resize(old_size);
      if (result.error == EINTR) {
        result.error = 0;
        continue;
      }
      break;
    }
    content.resize(old_size + static_cast<std::size_t>(got));
    if (got == 0) {
      break;
    }
  }
  return result;
}

std::string device_text(dev_t device) {
  std::array<char, 32> buffer{};
  (void)std::snprintf(buffer.data(), buffer.size(), "%02x:%02x", ::major(device), ::minor(device));
  return buffer.data();
}

int collect_loaded(struct dl_phdr_info* info, std::size_t /*size*/, void* data) {
  auto* names = static_cast<std::vector<std::string>*>(data);
  if (info->dlpi_name != nullptr && std::strchr(info->dlpi_name, '/') != nullptr) {
    names->emplace_back(info->dlpi_name);
  }
  return 0;
}

} // namespace

std::vector<MappedFile> parse_proc_maps(std::string_view text) {
  std::vector<MappedFile> files;
  std::unordered_set<std::string> seen;
  while (!text.empty()) {
    const auto end = text.find('\n');
    if (end == std::string_view::npos) {
      break; // an unterminated last line was cut short
    }
    const auto line = text.substr(0, end);
    text.remove_prefix(end + 1);
    if (auto file = parse_line(line)) {
      if (seen.insert(identity_key(*file)).second) {
        files.push_back(std::move(*file));
      }
    }
  }
  return files;
}

Expected<std::vector<MappedFile>> read_process_maps(int pid) {
  if (pid <= 0) {
    return Error{"invalid PID " + std::to_string(pid) + " (expected a positive process id)"};
  }
  const auto path = maps_path(pid);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return open_error(pid, errno);
  }
  // A zombie's maps open fine and read empty: say why instead of reporting no mappings.
  if (process_state(pid) == 'Z') {
    ::close(fd);
    return zombie_error(pid);
  }
  const auto result = read_all(fd, k_max_maps_bytes);
  ::close(fd);
  const auto exited_error = Error{"process " + std::to_string(pid) + " exited while being read"};
  if (result.error != 0) {
    return result.error == ESRCH || has_exited(process_state(pid)) ? exited_error
                                                                   : open_error(pid, result.error);
  }
  // The kernel stops listing mappings once the address space is torn down: what was read may be
  // partial, so a process that is gone now gives an error rather than a short list.
  if (has_exited(process_state(pid))) {
    return exited_error;
  }
  return parse_proc_maps(result.content);
}

std::vector<MappedFile> loaded_in_this_process() {
  std::vector<std::string> names;
  ::dl_iterate_phdr(collect_loaded, &names);
  std::vector<MappedFile> files;
  std::unordered_set<std::string> seen;
  for (auto& name : names) {
    if (!seen.insert(name).second) {
      continue;
    }
    MappedFile file;
    struct stat st {};
    if (::stat(name.c_str(), &st) == 0) {
      file.inode = static_cast<std::uint64_t>(st.st_ino);
      file.device = device_text(st.st_dev);
    }
    file.path = std::move(name);
    files.push_back(std::move(file));
  }
  return files;
}

} // namespace cudadiag::inspect
