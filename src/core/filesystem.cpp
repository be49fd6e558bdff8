#include "core/filesystem.hpp"

#include "core/read_record.hpp"
#include "core/system_root.hpp"
#include "core/unique_fd.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <sys/stat.h>
#include <sys/syscall.h>

namespace cudadiag::fs {
namespace {

bool stat_follow(const std::string& path, struct stat& st) {
  note_path(path);
  return ::stat(HostPath(path).c_str(), &st) == 0;
}

struct MallocFree {
  void operator()(char* text) const { std::free(text); }
};

struct DirectoryCloser {
  void operator()(DIR* dir) const { ::closedir(dir); }
};

// The first eight bytes of `name` as one big-endian number, NUL-padded: ordered as the names are.
std::uint64_t name_prefix(std::string_view name) {
  std::uint64_t prefix = 0;
  for (std::size_t i = 0; i < sizeof prefix; ++i) {
    prefix = (prefix << 8U) | (i < name.size() ? static_cast<unsigned char>(name[i]) : 0U);
  }
  return prefix;
}

} // namespace

bool is_directory(const std::string& path) {
  struct stat st {};
  return stat_follow(path, st) && S_ISDIR(st.st_mode);
}

bool is_regular_file(const std::string& path) {
  struct stat st {};
  return stat_follow(path, st) && S_ISREG(st.st_mode);
}

bool exists(const std::string& path) {
  struct stat st {};
  return stat_follow(path, st);
}

bool is_symlink(const std::string& path) {
  struct stat st {};
  note_path(path);
  return ::lstat(HostPath(path, FollowLast::no).c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

bool is_executable_file(const std::string& path) {
  note_path(path);
  return is_regular_file(path) && ::access(HostPath(path).c_str(), X_OK) == 0;
}

Expected<std::string> real_path(const std::string& path) {
  note_path(path);
  const HostPath host(path);
  if (host.str().empty()) {
    return Error{std::strerror(ELOOP)};
  }
  std::unique_ptr<char, MallocFree> resolved(::realpath(host.c_str(), nullptr));
  if (!resolved) {
    return Error{std::strerror(errno)};
  }
  return under_root() ? system_path(resolved.get()) : std::string(resolved.get());
}

Expected<std::vector<std::string>> list_directory(const std::string& path) {
  auto names = list_directory_in_order(path);
  if (names) {
    std::sort(names->begin(), names->end());
  }
  return names;
}

Expected<std::vector<std::string>> list_directory_in_order(const std::string& path) {
  return list_directory_matching(path, [](std::string_view) { return true; });
}

Expected<std::vector<std::string>>
list_directory_matching(const std::string& path, const std::function<bool(std::string_view)>& keep) {
  note_path(path);
  std::unique_ptr<DIR, DirectoryCloser> dir(::opendir(HostPath(path).c_str()));
  if (!dir) {
    return Error{std::strerror(errno)};
  }
  std::vector<std::string> names;
  while (const dirent* entry = ::readdir(dir.get())) {
    const std::string_view name(entry->d_name);
    if (name != "." && name != ".." && keep(name)) {
      names.emplace_back(name);
    }
  }
  return names;
}

DirectoryNames read_directory_names(int fd, std::size_t max_entries) {
  DirectoryNames out;
  std::vector<std::pair<std::size_t, std::size_t>>
      spans; // offset, length in `text`: viewed once it stops growing
  alignas(dirent64) char buffer[32 * 1024];
  for (;;) {
    // The system call itself: glibc's getdents64() wrapper (2.30) is no more than this.
    const auto got = static_cast<ssize_t>(::syscall(SYS_getdents64, fd, buffer, sizeof buffer));
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got <= 0) {
      break; // the end, or an error: the names read so far, as readdir() gives them
    }
    for (ssize_t at = 0; at < got;) {
      const auto* entry = reinterpret_cast<const dirent64*>(buffer + at);
      at += entry->d_reclen;
      const std::string_view name(entry->d_name);
      if (name == "." || name == "..") {
        continue;
      }
      if (spans.size() >= max_entries) {
        out.complete = false;
        return out;
      }
      spans.emplace_back(out.text.size(), name.size());
      out.text.insert(out.text.end(), name.begin(), name.end());
    }
  }
  // Sorted by the first eight bytes read as one big-endian number, then the rest: the same order
  // as comparing the names, with an integer compare deciding most pairs (a system library
  // directory holds a thousand names, listed in hash order).
  struct Keyed {
    std::uint64_t prefix;
    std::string_view name;
  };
  std::vector<Keyed> keyed;
  keyed.reserve(spans.size());
  for (const auto& [offset, length] : spans) {
    const std::string_view name(out.text.data() + offset, length);
    keyed.push_back({name_prefix(name), name});
  }
  std::sort(keyed.begin(), keyed.end(), [](const Keyed& a, const Keyed& b) {
    if (a.prefix != b.prefix) {
      return a.prefix < b.prefix;
    }
    // Equal prefixes: names shorter than eight bytes are padded with NUL, which no name holds, so
    // the shorter name's padding sorts first, as it does compared as text.
    return a.name.size() <= sizeof a.prefix || b.name.size() <= sizeof b.prefix
               ? a.name.size() < b.name.size()
               : a.name.substr(sizeof a.prefix) < b.name.substr(sizeof b.prefix);
  });
  out.names.reserve(keyed.size());
  out.prefixes.reserve(keyed.size());
  for (const auto& entry : keyed) {
    out.names.push_back(entry.name);
    out.prefixes.push_back(entry.prefix);
  }
  return out;
}

std::size_t DirectoryNames::lower_bound(std::string_view name) const {
  if (prefixes.size() != names.size()) { // filled by hand, without prefixes
    return static_cast<std::size_t>(std::lower_bound(names.begin(), names.end(), name) - names.begin());
  }
  // The names whose prefix is `name`'s, then the first of those not less than it.
  const auto key = name_prefix(name);
  const auto first = std::lower_bound(prefixes.begin(), prefixes.end(), key);
  const auto last = std::upper_bound(first, prefixes.end(), key);
  const auto begin = names.begin() + (first - prefixes.begin());
  const auto end = names.begin() + (last - prefixes.begin());
  return static_cast<std::size_t>(std::lower_bound(begin, end, name) - names.begin());
}

Expected<DirectoryNames> list_directory_names(const std::string& path) {
  note_path(path);
  const UniqueFd fd(::open(HostPath(path).c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) {
    return Error{std::strerror(errno)};
  }
  return read_directory_names(fd.get(), std::numeric_limits<std::size_t>::max());
}

Expected<std::size_t> read_at(int fd, std::uint64_t offset, void* out, std::size_t length) {
  if (offset > static_cast<std::uint64_t>(std::numeric_limits<off_t>::max()) - length) {
    return Error{std::strerror(EOVERFLOW)};
  }
  std::size_t done = 0;
  while (done < length) {
    const ssize_t got =
        ::pread(fd, static_cast<char*>(out) + done, length - done, static_cast<off_t>(offset + done));
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got < 0) {
      return Error{std::strerror(errno)};
    }
    if (got == 0) {
      break; // the end of the file
    }
    done += static_cast<std::size_t>(got);
  }
  return done;
}

Expected<std::string> read_file_prefix(const std::string& path, size_t max_bytes) {
  note_path(path);
  const int fd = ::open(HostPath(path).c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    return Error{std::strerror(errno)};
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return Error{"not a regular file"};
  }
  // Size the buffer by the file (plus one byte to notice growth), not by the cap: callers pass
  // generous caps, and zero-filling megabytes for a 2 KiB header costs more than reading it.
  // Files that report size 0 (/proc, /sys, and empty files) start at 4 KiB; a full buffer
  // doubles, up to the cap.
  constexpr std::uint64_t k_unknown_size_start = 4096;
  const auto expected = st.st_size > 0 ? static_cast<std::uint64_t>(st.st_size) + 1 : k_unknown_size_start;
  std::string content(static_cast<size_t>(std::min<std::uint64_t>(max_bytes, expected)), '\0');
  size_t filled = 0;
  for (;;) {
    if (filled == content.size()) {
      if (content.size() >= max_bytes) {
        break;
      }
      content.resize(std::min(max_bytes, content.size() * 2));
    }
    const ssize_t got = ::read(fd, content.data() + filled, content.size() - filled);
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got < 0) {
      const int saved = errno;
      ::close(fd);
      return Error{std::strerror(saved)};
    }
    if (got == 0) {
      break;
    }
    filled += static_cast<size_t>(got);
  }
  ::close(fd);
  content.resize(filled);
  return content;
}

std::string join(std::string_view head, std::string_view tail) {
  if (head.empty()) {
    return std::string(tail);
  }
  std::string out(head);
  while (!tail.empty() && tail.front() == '/') {
    tail.remove_prefix(1);
  }
  if (out.back() != '/') {
    out.push_back('/');
  }
  out.append(tail);
  return out;
}

std::string parent(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') {
    path.remove_suffix(1);
  }
  const auto slash = path.rfind('/');
  if (slash == std::string_view::npos) {
    return ".";
  }
  if (slash == 0) {
    return "/";
  }
  return std::string(path.substr(0, slash));
}

std::string basename(std::string_view path) {
  while (path.size() > 1 && path.back() == '/') {
    path.remove_suffix(1);
  }
  const auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string lexically_normal(std::string_view path) {
  const bool absolute = !path.empty() && path.front() == '/';
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= path.size()) {
    auto slash = path.find('/', start);
    if (slash == std::string_view::npos) {
      slash = path.size();
    }
    const auto part = path.substr(start, slash - start);
    if (part == "..") {
      if (!parts.empty() && parts.back() != "..") {
        parts.pop_back();
      } else if (!absolute) {
        parts.push_back(part);
      }
    } else if (!part.empty() && part != ".") {
      parts.push_back(part);
    }
    start = slash + 1;
  }
  std::string out = absolute ? "/" : "";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) {
      out.push_back('/');
    }
    out.append(parts[i]);
  }
  return out.empty() ? "." : out;
}

std::optional<std::uint64_t> file_size(const std::string& path) {
  struct stat st {};
  if (!stat_follow(path, st)) {
    return std::nullopt;
  }
  return static_cast<std::uint64_t>(st.st_size);
}

bool is_world_writable(const std::string& path) {
  struct stat st {};
  if (!stat_follow(path, st)) {
    return false;
  }
  return (st.st_mode & S_IWOTH) != 0;
}

std::optional<FileId> file_id(const std::string& path) {
  const auto found = file_stat(path);
  return found ? std::optional<FileId>(found->id) : std::nullopt;
}

std::optional<FileStat> file_stat(const std::string& path) {
  struct stat st {};
  if (!stat_follow(path, st)) {
    return std::nullopt;
  }
  return FileStat{FileId{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)},
                  S_ISREG(st.st_mode), S_ISDIR(st.st_mode)};
}

} // namespace cudadiag::fs
