#pragma once
// realpath() for the many files of a few directories, as discovery and the closures ask it: glibc's
// realpath reads every component of every path (a readlink each: eight system calls for
// /usr/local/cuda/lib64/libcudart.so.13), while a directory's real path is the same for all of its
// files. Here each directory is resolved once per run and a file costs one lstat (more only when
// it is a symbolic link). Thread-safe; the answers are realpath's, errors included, for files that
// do not change during the run (a run is a snapshot).

#include "core/expected.hpp"
#include "core/once_map.hpp"

#include <optional>
#include <string>

namespace cudadiag::fs {

class RealPathCache {
public:
  // What fs::real_path(path) returns.
  [[nodiscard]] Expected<std::string> real_path(const std::string& path) const;

private:
  struct Resolved {
    std::optional<std::string> path; // nullopt: realpath failed (the caller asks realpath itself)
  };
  OnceMap<Resolved> m_directories;
};

} // namespace cudadiag::fs
