#pragma once
// /etc/ld.so.conf as ldconfig reads it: one directory per line (comments after '#', blank lines
// ignored; ldconfig's old "dir=TYPE" suffix is dropped), and `include PATTERN` lines whose glob
// matches are read in sorted order, relative patterns against the including file's directory.
// Used to say which file lists a directory the loader cache points into, so that a remedy can name
// it. Never fails: unreadable files and include loops are skipped (the trace says so).

#include <string>
#include <vector>

namespace cudadiag::loader {

struct LdConfEntry {
  std::string directory; // as written, trailing slashes removed
  std::string file;      // the conf file that lists it
  int line = 0;          // 1-based
};

struct LdConf {
  std::vector<LdConfEntry> entries; // in ldconfig's reading order
  std::vector<std::string> trace;   // files read, skipped, not found

  // The first entry naming `directory` (compared lexically and by realpath), or nullptr.
  [[nodiscard]] const LdConfEntry* listing(const std::string& directory) const;
};

// Reads `path` and its includes (at most 64 files, each at most 1 MiB, nesting at most 8).
LdConf read_ld_so_conf(const std::string& path);

} // namespace cudadiag::loader
