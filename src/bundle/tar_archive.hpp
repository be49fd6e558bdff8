#pragma once
// The POSIX ustar archive format, in memory: a writer for the files of a support bundle and a
// reader for `cudadiag diff`, which accepts bundles. Only what a bundle needs: regular files and
// directories. The reader also understands the long-name records GNU tar and pax write, so a
// bundle that was unpacked and re-packed by hand still reads.

#include "core/expected.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::bundle {

// ustar keeps names in a 100-byte field plus a 155-byte prefix split at a '/'.
inline constexpr std::size_t k_tar_block = 512;

class TarWriter {
public:
  // Every member gets this modification time (seconds since the epoch) and owner 0:0.
  explicit TarWriter(std::int64_t mtime) : m_mtime(mtime) {}

  // Appends a regular file. Errors (nothing appended): an empty or absolute name, a ".."
  // component, or a name that does not fit ustar's fields.
  [[nodiscard]] Expected<void> add_file(std::string_view name, std::string_view content,
                                        unsigned mode = 0644);
  // Appends a directory entry ("name/").
  [[nodiscard]] Expected<void> add_directory(std::string_view name, unsigned mode = 0755);

  // The archive: every member, then the two zero blocks that end a tar file.
  [[nodiscard]] std::string finish() const;

private:
  Expected<void> add(std::string_view name, char type, std::string_view content, unsigned mode);
  std::int64_t m_mtime;
  std::string m_data;
};

struct TarEntry {
  std::string name; // as stored, e.g. "cudadiag-bundle-host/report.json" ("dir/" for directories)
  bool directory = false;
  std::string content; // empty for directories
};

// Every regular file and directory in `data` (other member types are skipped). Errors name the
// member and offset: "not a tar archive (bad header checksum at offset 0)", "truncated tar
// archive: member report.json needs 4096 bytes, 100 left", "more than N members".
Expected<std::vector<TarEntry>> read_tar(std::string_view data);

} // namespace cudadiag::bundle
