#pragma once
// Versions from the system's package databases, without running dpkg or rpm:
//  - Debian: <dpkg_dir>/info/<package>[:<arch>].list names the files a package installed, and
//    <dpkg_dir>/status the installed version ("cuda-nvcc-13-0 13.0.88-1" -> "13.0.88").
//  - RPM: the SQLite database (rpmdb.sqlite, read-only through libsqlite3): the Basenames and
//    Dirnames indexes name the package of a file; its header blob gives name, version and release.
// Only packages that can ship CUDA components are read (names with cuda, nvidia, nv, cudnn, nccl,
// cublas, ... in them; see k_package_hints in the source): their names come from the status file
// and their .list files are opened by name, so a system with thousands of packages costs one read
// of the status file, not a listing of info/. Nothing is read until the first question. Every read is
// bounded: a .list over 16 MiB, a status file over 64 MiB, an RPM header over 16 MiB are not read; a file
// that is not SQLite, a locked or corrupt database, or a garbled status stanza gives no version and a problem
// line, never an exception.

#include "versions/version_sources.hpp"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace cudadiag::versions {

struct PackageDbPaths {
  std::string dpkg_dir = "/var/lib/dpkg";
  std::string rpm_db = "/var/lib/rpm/rpmdb.sqlite";
};

// The Debian version without epoch and revision: "1:13.0.88-1" -> "13.0.88". Also used for RPM
// versions (which carry no revision in VERSION). Empty input gives "".
std::string upstream_version(std::string_view debian_version);

class PackageDatabase {
public:
  PackageDatabase() : PackageDatabase(PackageDbPaths{}) {}
  explicit PackageDatabase(PackageDbPaths paths);

  // The version of the package that installed `path`, looked up by the path as given and, when it
  // differs, by its realpath; source dpkg_status or rpm_db, evidence "<package> <full version>
  // (<database>)". nullopt when no database knows the file. Thread-safe; the first call reads.
  [[nodiscard]] std::optional<FoundVersion>
  version_of_file(const std::string& path, const std::optional<std::string>& realpath = {}) const;
  // Reads the dpkg status and .list files now (the bulk of what the first question reads), so that a thread
  // can do it while discovery does other work. Thread-safe; they are read once however many
  // threads ask.
  void read_ahead() const;
  // Whether the dpkg status and .list files have been read, by read_ahead() or a first question
  // (never waits): a question asked now is answered without waiting for the read.
  [[nodiscard]] bool lists_read() const;
  // What could not be read (a corrupt status file, a locked RPM database, ...), one line each.
  [[nodiscard]] std::vector<std::string> problems() const;

private:
  struct State;
  void read_dpkg_lists() const;
  void read_dpkg_status() const;
  void open_rpm() const;

  PackageDbPaths m_paths;
  std::shared_ptr<State> m_state;
};

} // namespace cudadiag::versions
