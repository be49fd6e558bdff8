#pragma once
// A regular file's bytes, read-only: for text files that are scanned once and kept while the run
// looks things up in them (dpkg's status file and package lists). A large file is mapped, not
// copied into fresh memory (a page fault per page) as read() does. A file of up to 64 KiB (most
// package lists) is read into the heap: a mapping costs a system call to make and one to remove,
// and removing it interrupts every CPU the process's threads ran on (dear in a virtual machine;
// 60 lists on the GPU host).
//
// A mapping is private. dpkg replaces its files by renaming a new one over the old, so a mapping
// stays valid while dpkg runs; a file truncated in place by another process while it is mapped
// would fault on access (SIGBUS), as with any reader that maps files.

#include "core/expected.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace cudadiag::fs {

class MappedFile {
public:
  MappedFile() = default;
  MappedFile(MappedFile&& other) noexcept;
  MappedFile& operator=(MappedFile&& other) noexcept;
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;
  ~MappedFile();

  // The file's bytes as text (empty for an empty file, or one over the size limit it was mapped with).
  [[nodiscard]] std::string_view text() const { return {static_cast<const char*>(m_address), m_length}; }
  // The file's size when it was opened.
  [[nodiscard]] std::uint64_t file_size() const { return m_file_size; }
  // False when the file was over the size limit: text() is empty and nothing was mapped.
  [[nodiscard]] bool complete() const { return m_file_size == m_length; }

private:
  friend Expected<MappedFile> map_file(const std::string& path, std::uint64_t max_bytes);
  void* m_address = nullptr;
  std::size_t m_length = 0;
  std::uint64_t m_file_size = 0;
  bool m_on_heap = false; // read into malloc'ed memory (a small file), else mapped
};

// Files up to this size are read into memory instead of mapped.
inline constexpr std::uint64_t k_read_max_bytes = 64 * 1024;

// Maps the regular file at `path` (symlinks followed) when it holds at most `max_bytes`; a larger
// one is not mapped (complete() is false: the caller says why). Errors: "No such file or
// directory" and the like, "not a regular file" (a directory, a FIFO: never waited on).
Expected<MappedFile> map_file(const std::string& path, std::uint64_t max_bytes);

} // namespace cudadiag::fs
