#pragma once
// Small, non-throwing file-system queries used by every probe. All of them treat errors
// (permission denied, symlink loops, vanished files) as "not there" or as an Error value;
// none of them throws, follows more than the kernel's symlink limit, or reads unbounded data.

#include "core/expected.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::fs {

// Whether `path` names a directory (following symlinks).
bool is_directory(const std::string& path);
// Whether `path` names a regular file (following symlinks).
bool is_regular_file(const std::string& path);
// Whether `path` exists at all (following symlinks); a broken symlink does not exist.
bool exists(const std::string& path);
// Whether `path` is itself a symbolic link (not followed).
bool is_symlink(const std::string& path);
// Whether `path` is a regular file the caller may execute.
bool is_executable_file(const std::string& path);

// The canonical absolute path, or an Error naming why it cannot be resolved (ELOOP, ENOENT…).
Expected<std::string> real_path(const std::string& path);

// Entry names of a directory, sorted bytewise, without "." and "..". Error if unreadable.
Expected<std::vector<std::string>> list_directory(const std::string& path);
// The same in the order the file system lists them (readdir's, which Python's os.scandir and glob keep).
Expected<std::vector<std::string>> list_directory_in_order(const std::string& path);
// The entry names for which `keep(name)` holds, in the order readdir returns them: a large
// directory (dpkg's info/ holds thousands) costs no string for the names passed over.
Expected<std::vector<std::string>> list_directory_matching(const std::string& path,
                                                           const std::function<bool(std::string_view)>& keep);

// A directory's entry names without "." and "..", sorted bytewise, as views of one buffer: a
// directory of thousands of names costs one allocation, not one per name. Moving it keeps the views
// valid (they point into `text`'s heap block); a copy would not, so it cannot be copied.
struct DirectoryNames {
  DirectoryNames() = default;
  DirectoryNames(DirectoryNames&&) = default;
  DirectoryNames& operator=(DirectoryNames&&) = default;
  DirectoryNames(const DirectoryNames&) = delete;
  DirectoryNames& operator=(const DirectoryNames&) = delete;

  std::vector<std::string_view> names; // sorted
  // names[i]'s first eight bytes as one big-endian number (NUL-padded: no name holds a NUL), in
  // the same order: lookups compare integers and look at a name only where two of these are equal.
  std::vector<std::uint64_t> prefixes;
  std::vector<char> text; // the names back to back
  bool complete = true;   // false: more than the limit; `names` is then empty

  // The index of the first name not less than `name` (bytewise), names.size() when there is none.
  [[nodiscard]] std::size_t lower_bound(std::string_view name) const;
  [[nodiscard]] bool contains(std::string_view name) const {
    const auto at = lower_bound(name);
    return at < names.size() && names[at] == name;
  }
};
// The names of the directory open as `fd` (read from its current offset), at most `max_entries` of
// them; `fd` stays open. Read with getdents64 straight into the names' buffer: no DIR, whose
// opendir stats the directory a second time and allocates 32 KiB.
DirectoryNames read_directory_names(int fd, std::size_t max_entries);
// The same for `path`; Error if it cannot be opened.
Expected<DirectoryNames> list_directory_names(const std::string& path);

// Reads `length` bytes at `offset` of the open descriptor `fd` into `out` (pread, retried on EINTR
// and short reads): how many it read, fewer only at the end of the file; Error (strerror) when a
// read fails.
Expected<std::size_t> read_at(int fd, std::uint64_t offset, void* out, std::size_t length);

// At most `max_bytes` of a file's content. Error if it cannot be opened or read.
Expected<std::string> read_file_prefix(const std::string& path, size_t max_bytes);

// Joins two path fragments with exactly one '/'. An absolute `tail` is appended, not substituted.
std::string join(std::string_view head, std::string_view tail);
// The directory part of `path` ("/a/b/c" -> "/a/b"; "c" -> ".").
std::string parent(std::string_view path);
// The last component of `path`.
std::string basename(std::string_view path);
// Removes "." components, duplicate and trailing slashes and resolves ".." lexically.
std::string lexically_normal(std::string_view path);

// Size in bytes, or nullopt if it cannot be stat'ed.
std::optional<std::uint64_t> file_size(const std::string& path);

// Whether anyone may write to `path` (the "other" write bit is set, following symlinks).
bool is_world_writable(const std::string& path);

// The identity of a file (device and inode), for telling whether two paths are the same file.
struct FileId {
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  bool operator==(const FileId&) const = default;
};
std::optional<FileId> file_id(const std::string& path);
// What one stat(2) of `path` (symlinks followed) says: the file's identity and type.
struct FileStat {
  FileId id;
  bool regular = false;
  bool directory = false;
};
std::optional<FileStat> file_stat(const std::string& path);

} // namespace cudadiag::fs
