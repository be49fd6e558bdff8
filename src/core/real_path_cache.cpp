#include "core/real_path_cache.hpp"

#include "core/filesystem.hpp"
#include "core/read_record.hpp"
#include "core/system_root.hpp"

#include <unistd.h>

#include <array>
#include <sys/stat.h>

namespace cudadiag::fs {
namespace {

// A path whose parent and last component can be taken apart lexically: absolute, no empty, "." or
// ".." component, no trailing slash. Others go to realpath as they are.
bool plain_absolute(std::string_view path) {
  if (path.size() < 2 || path.front() != '/' || path.back() == '/') {
    return false;
  }
  for (std::size_t start = 1; start <= path.size();) {
    const auto end = std::min(path.find('/', start), path.size());
    const auto part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") {
      return false;
    }
    start = end + 1;
  }
  return true;
}

} // namespace

Expected<std::string> RealPathCache::real_path(const std::string& path) const {
  if (!plain_absolute(path) || fs::under_root()) {
    return fs::real_path(path); // under a root: every component resolved inside it
  }
  const auto directory = fs::parent(path);
  const auto& resolved = m_directories.get(directory, [&] {
    auto real = fs::real_path(directory);
    return Resolved{real ? std::optional(std::move(*real)) : std::nullopt};
  });
  if (!resolved.path) {
    return fs::real_path(path); // its error, as realpath gives it
  }
  // Follows links whose target is a name in the same directory (libcudart.so.13 ->
  // libcudart.so.13.0.96); any other target, a missing file or an error goes to realpath.
  std::string current = fs::join(*resolved.path, fs::basename(path));
  for (int hop = 0; hop < 8; ++hop) {
    struct stat st {};
    fs::note_path(current);
    if (::lstat(current.c_str(), &st) != 0) {
      return fs::real_path(path);
    }
    if (!S_ISLNK(st.st_mode)) {
      return current;
    }
    std::array<char, 256> target{};
    const auto length = ::readlink(current.c_str(), target.data(), target.size());
    if (length <= 0 || static_cast<std::size_t>(length) >= target.size()) {
      return fs::real_path(path);
    }
    const std::string_view name(target.data(), static_cast<std::size_t>(length));
    if (name.find('/') != std::string_view::npos || name == "." || name == "..") {
      return fs::real_path(current);
    }
    current = fs::join(*resolved.path, name);
  }
  return fs::real_path(path);
}

} // namespace cudadiag::fs
