#pragma once
// A temporary directory tree for tests: created empty under $TMPDIR (or /tmp), removed with
// everything in it when the TempTree goes out of scope. Helpers create files, directories and
// symlinks by path relative to the root, creating parent directories as needed.

#include <string>
#include <string_view>

namespace cudadiag::testing {

class TempTree {
public:
  TempTree();
  // Under `parent` (created if missing) instead of $TMPDIR: for tests whose trees must sit where
  // nothing else changes the directories above them.
  explicit TempTree(const std::string& parent);
  ~TempTree();
  TempTree(const TempTree&) = delete;
  TempTree& operator=(const TempTree&) = delete;

  // Absolute path of the root, or of `relative` under it.
  [[nodiscard]] const std::string& root() const { return m_root; }
  [[nodiscard]] std::string path(std::string_view relative) const;

  // Creates a directory (and its parents). Returns its absolute path.
  std::string mkdir(std::string_view relative) const;
  // Writes `content` to a file (creating parents). Returns its absolute path.
  std::string write(std::string_view relative, std::string_view content, unsigned mode = 0644) const;
  // Creates a symlink at `relative` pointing to `target` (verbatim). Returns its absolute path.
  std::string symlink(std::string_view relative, std::string_view target) const;
  // Copies an existing file (e.g. a real library) to `relative`. Returns its absolute path.
  std::string copy_file(const std::string& source, std::string_view relative) const;

private:
  std::string m_root;
};

} // namespace cudadiag::testing
