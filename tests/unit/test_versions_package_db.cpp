// Versions from the system package databases: a fake dpkg root (status + info/*.list) and RPM
// databases written with libsqlite3 (rpmdb.sqlite's tables, a synthesized header blob), good and bad.
#include "discovery/candidate_inspection.hpp"
#include "probes/catalog.hpp"
#include "skip.hpp"
#include "temp_tree.hpp"
#include "versions/package_db.hpp"

#include <doctest/doctest.h>
#if CUDADIAG_HAVE_SQLITE3
#include <sqlite3.h>
#endif

#include <fcntl.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <sys/stat.h>
#include <vector>

using cudadiag::testing::TempTree;
using cudadiag::versions::PackageDatabase;
using cudadiag::versions::PackageDbPaths;
using cudadiag::versions::upstream_version;
using cudadiag::versions::VersionSource;

namespace {

constexpr const char* k_status = "Package: bash\n"
                                 "Status: install ok installed\n"
                                 "Version: 5.2.15-2+b2\n"
                                 "Description: a shell\n"
                                 " Package: cuda-nvcc-13-0 (a continuation line, not a stanza)\n"
                                 "\n"
                                 "Package: cuda-nvcc-13-0\n"
                                 "Status: install ok installed\n"
                                 "Architecture: amd64\n"
                                 "Version: 13.0.88-1\n"
                                 "\n"
                                 "Package: cuda-cupti-13-0\n"
                                 "Status: deinstall ok config-files\n"
                                 "Version: 13.0.80-1\n"
                                 "\n"
                                 "Package: cuda-cupti-13-0\n"
                                 "Status: install ok installed\n"
                                 "Version: 1:13.0.85-1\n"
                                 "\n";

struct DpkgRoot {
  TempTree tree;
  PackageDbPaths paths;

  explicit DpkgRoot(std::string_view status = k_status) {
    tree.write("dpkg/status", status);
    tree.write("dpkg/info/cuda-nvcc-13-0.list", "/.\n/usr/local/cuda-13.0\n/usr/local/cuda-13.0/bin/nvcc\n");
    tree.write("dpkg/info/cuda-cupti-13-0:amd64.list",
               "/usr/local/cuda-13.0/extras/CUPTI/lib64/libcupti.so.2025.3.1\n");
    tree.write("dpkg/info/bash.list",
               "/usr/bin/bash\n/usr/local/cuda-13.0/bin/ptxas\n"); // not a CUDA-like name
    paths.dpkg_dir = tree.path("dpkg");
    paths.rpm_db = tree.path("rpm/rpmdb.sqlite");
  }
};

} // namespace

TEST_CASE("package db: upstream versions drop epoch and revision") {
  CHECK(upstream_version("13.0.88-1") == "13.0.88");
  CHECK(upstream_version("1:13.0.85-1") == "13.0.85");
  CHECK(upstream_version("2.28.9-1+cuda13.0") == "2.28.9");
  CHECK(upstream_version("9") == "9");
  CHECK(upstream_version("") == "");
}

TEST_CASE("package db: dpkg maps a file to its package through info/*.list, and the version from status") {
  DpkgRoot root;
  const PackageDatabase db(root.paths);
  const auto nvcc =
      db.version_of_file("/usr/local/cuda/bin/nvcc", std::string("/usr/local/cuda-13.0/bin/nvcc"));
  REQUIRE(nvcc.has_value());
  CHECK(nvcc->version == "13.0.88");
  CHECK(nvcc->source == VersionSource::dpkg_status);
  CHECK(nvcc->evidence.find("cuda-nvcc-13-0 13.0.88-1") == 0);
  // The installed stanza (not the removed one's config files), epoch dropped; arch-qualified list name.
  const auto cupti = db.version_of_file("/usr/local/cuda-13.0/extras/CUPTI/lib64/libcupti.so.2025.3.1");
  REQUIRE(cupti.has_value());
  CHECK(cupti->version == "13.0.85");
  // Packages without a CUDA-like name are not read; unknown files have no version.
  CHECK_FALSE(db.version_of_file("/usr/local/cuda-13.0/bin/ptxas").has_value());
  CHECK_FALSE(db.version_of_file("/nowhere").has_value());
  CHECK(to_string(VersionSource::dpkg_status) == "dpkg_status");
}

TEST_CASE("package db: a search does not wait for the package lists, complete_versions asks them after") {
  TempTree tree;
  const auto nvcc = tree.write("cuda-13.0/bin/nvcc", "#!/bin/sh\n", 0755);
  tree.write("dpkg/status", k_status);
  tree.write("dpkg/info/cuda-nvcc-13-0.list", "/.\n" + nvcc + "\n");
  PackageDbPaths paths;
  paths.dpkg_dir = tree.path("dpkg");
  paths.rpm_db = tree.path("rpm/rpmdb.sqlite");
  const PackageDatabase db(paths);
  const auto* spec = cudadiag::probes::find_component("nvcc", cudadiag::probes::ComponentKind::binary);
  REQUIRE(spec != nullptr);
  cudadiag::probes::Sighting sighting;
  sighting.path = nvcc;
  sighting.found_via = "PATH";
  sighting.search_dir = tree.path("cuda-13.0/bin");
  const cudadiag::SystemLayout layout;

  REQUIRE_FALSE(db.lists_read());
  auto candidates = cudadiag::discovery::build_candidates(*spec, {sighting}, layout, &db, nullptr, true);
  REQUIRE(candidates.size() == 1);
  CHECK(candidates[0].version_awaits_packages); // no other source knows it: the database is asked later
  CHECK_FALSE(db.lists_read());                 // and the search did not read it
  cudadiag::discovery::complete_versions(*spec, candidates, layout, &db, nullptr);
  CHECK(db.lists_read());
  CHECK_FALSE(candidates[0].version_awaits_packages);
  REQUIRE(candidates[0].version.has_value());
  CHECK(candidates[0].version->version == "13.0.88");
  CHECK(candidates[0].version->source == VersionSource::dpkg_status);

  // Once the lists are read, nothing is left for later; without deferral the first search reads them.
  const auto again = cudadiag::discovery::build_candidates(*spec, {sighting}, layout, &db, nullptr, true);
  CHECK_FALSE(again[0].version_awaits_packages);
  CHECK(again[0].version->version == "13.0.88");
  const PackageDatabase fresh(paths);
  const auto waited = cudadiag::discovery::build_candidates(*spec, {sighting}, layout, &fresh, nullptr);
  CHECK_FALSE(waited[0].version_awaits_packages);
  CHECK(waited[0].version->version == "13.0.88");
}

TEST_CASE("package db: a corrupt, truncated or binary status file gives no version and no crash") {
  for (const std::string& status :
       {std::string("Package: cuda-nvcc-13-0\nStatus: install ok installed\n"), // no Version
        std::string("\0\0\xff\xfe garbage \n\n\n", 16),
        std::string("Package: cuda-nvcc-13-0"),                       // cut
        std::string("Package: cuda-nvcc-13-0\nVersion: 13.0.88-1\n"), // no Status
        std::string("Package: cuda-nvcc-13-0\nStatus: install ok installed\nVersion: $(rm -rf)\n")}) {
    CAPTURE(status);
    DpkgRoot root(status);
    const PackageDatabase db(root.paths);
    CHECK_FALSE(db.version_of_file("/usr/local/cuda-13.0/bin/nvcc").has_value());
  }
}

TEST_CASE("package db: a status file of 100 MB is not read, and a FIFO status is not waited on") {
  DpkgRoot root;
  const auto status = root.tree.path("dpkg/status");
  REQUIRE(::truncate(status.c_str(), 100LL << 20) == 0);
  const PackageDatabase db(root.paths);
  CHECK_FALSE(db.version_of_file("/usr/local/cuda-13.0/bin/nvcc").has_value());
  REQUIRE(db.problems().size() == 1);
  CHECK(db.problems().front().find("over 64 MiB") != std::string::npos);

  DpkgRoot fifo;
  ::unlink(fifo.tree.path("dpkg/status").c_str());
  REQUIRE(::mkfifo(fifo.tree.path("dpkg/status").c_str(), 0644) == 0);
  const PackageDatabase fifo_db(fifo.paths);
  CHECK_FALSE(fifo_db.version_of_file("/usr/local/cuda-13.0/bin/nvcc").has_value());
}

#if CUDADIAG_HAVE_SQLITE3

namespace {

void put32(std::string& out, std::uint32_t value) {
  for (int shift = 24; shift >= 0; shift -= 8) {
    out.push_back(static_cast<char>((value >> shift) & 0xff));
  }
}

// An RPM header blob (il, dl, entries, store) with NAME, VERSION, RELEASE and the file list.
std::string rpm_header(const std::string& name, const std::string& version, const std::string& release,
                       const std::vector<std::string>& dirs,
                       const std::vector<std::pair<std::uint32_t, std::string>>& files) {
  struct Entry {
    std::uint32_t tag, type, offset, count;
  };
  std::vector<Entry> entries;
  std::string store;
  const auto add_strings = [&](std::uint32_t tag, std::uint32_t type,
                               const std::vector<std::string>& values) {
    entries.push_back(
        {tag, type, static_cast<std::uint32_t>(store.size()), static_cast<std::uint32_t>(values.size())});
    for (const auto& value : values) {
      store += value;
      store.push_back('\0');
    }
  };
  add_strings(1000, 6, {name});
  add_strings(1001, 6, {version});
  add_strings(1002, 6, {release});
  std::vector<std::string> basenames;
  for (const auto& file : files) {
    basenames.push_back(file.second);
  }
  add_strings(1117, 8, basenames);
  add_strings(1118, 8, dirs);
  while (store.size() % 4 != 0) {
    store.push_back('\0');
  }
  entries.push_back(
      {1116, 4, static_cast<std::uint32_t>(store.size()), static_cast<std::uint32_t>(files.size())});
  for (const auto& file : files) {
    put32(store, file.first);
  }
  std::string blob;
  put32(blob, static_cast<std::uint32_t>(entries.size()));
  put32(blob, static_cast<std::uint32_t>(store.size()));
  for (const auto& entry : entries) {
    put32(blob, entry.tag);
    put32(blob, entry.type);
    put32(blob, entry.offset);
    put32(blob, entry.count);
  }
  return blob + store;
}

void exec(sqlite3* db, const char* sql) {
  char* error = nullptr;
  REQUIRE_MESSAGE(sqlite3_exec(db, sql, nullptr, nullptr, &error) == SQLITE_OK, (error ? error : ""));
}

// rpmdb.sqlite's tables (Packages, Basenames, Dirnames) with one package.
void write_rpmdb(const std::string& path, const std::string& blob, const std::vector<std::string>& basenames,
                 const std::vector<std::string>& dirnames) {
  sqlite3* db = nullptr;
  REQUIRE(sqlite3_open(path.c_str(), &db) == SQLITE_OK);
  exec(db, "CREATE TABLE Packages (hnum INTEGER PRIMARY KEY AUTOINCREMENT, blob BLOB NOT NULL);"
           "CREATE TABLE Basenames (key TEXT NOT NULL, hnum INTEGER NOT NULL, idx INTEGER NOT NULL);"
           "CREATE TABLE Dirnames (key TEXT NOT NULL, hnum INTEGER NOT NULL, idx INTEGER NOT NULL);");
  sqlite3_stmt* insert = nullptr;
  REQUIRE(sqlite3_prepare_v2(db, "INSERT INTO Packages (hnum, blob) VALUES (1, ?1)", -1, &insert, nullptr) ==
          SQLITE_OK);
  sqlite3_bind_blob(insert, 1, blob.data(), static_cast<int>(blob.size()), SQLITE_TRANSIENT);
  REQUIRE(sqlite3_step(insert) == SQLITE_DONE);
  sqlite3_finalize(insert);
  for (const auto& [table, keys] : {std::pair{"Basenames", basenames}, std::pair{"Dirnames", dirnames}}) {
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const auto sql =
          std::string("INSERT INTO ") + table + " VALUES ('" + keys[i] + "', 1, " + std::to_string(i) + ")";
      exec(db, sql.c_str());
    }
  }
  sqlite3_close(db);
}

} // namespace

TEST_CASE("package db: RPM's SQLite database names the package of a file (basename and its directory)") {
  TempTree tree;
  tree.mkdir("rpm");
  const auto path = tree.path("rpm/rpmdb.sqlite");
  write_rpmdb(path,
              rpm_header("cuda-nvcc-12-4", "12.4.131", "1", {"/usr/local/cuda-12.4/bin/", "/usr/share/doc/"},
                         {{0, "nvcc"}, {1, "ptxas"}}),
              {"nvcc", "ptxas"}, {"/usr/local/cuda-12.4/bin/", "/usr/share/doc/"});
  const PackageDatabase db({tree.path("no-dpkg"), path});
  const auto nvcc = db.version_of_file("/usr/local/cuda-12.4/bin/nvcc");
  REQUIRE(nvcc.has_value());
  CHECK(nvcc->version == "12.4.131");
  CHECK(nvcc->source == VersionSource::rpm_db);
  CHECK(nvcc->evidence.find("cuda-nvcc-12-4 12.4.131-1") == 0);
  // ptxas is listed under another directory (index 1): not this path's file.
  CHECK_FALSE(db.version_of_file("/usr/local/cuda-12.4/bin/ptxas").has_value());
  CHECK(db.problems().empty());
}

TEST_CASE("package db: a file that is not SQLite, a locked database and a garbled header give no version") {
  TempTree tree;
  const auto junk = tree.write("rpm/rpmdb.sqlite", std::string(4096, 'x'));
  const PackageDatabase junk_db({tree.path("no-dpkg"), junk});
  CHECK_FALSE(junk_db.version_of_file("/usr/local/cuda/bin/nvcc").has_value());
  REQUIRE_FALSE(junk_db.problems().empty());
  CHECK(junk_db.problems().front().find("rpm: ") == 0);

  const auto garbled = tree.path("garbled.sqlite");
  write_rpmdb(garbled, std::string("\x00\x00\x10\x00\xff\xff\xff\xff", 8), {"nvcc"},
              {"/usr/local/cuda/bin/"});
  const PackageDatabase garbled_db({tree.path("no-dpkg"), garbled});
  CHECK_FALSE(garbled_db.version_of_file("/usr/local/cuda/bin/nvcc").has_value());
  CHECK_FALSE(garbled_db.problems().empty());

  const auto locked = tree.path("locked.sqlite");
  write_rpmdb(locked, rpm_header("cuda-nvcc-12-4", "12.4.131", "1", {"/usr/local/cuda/bin/"}, {{0, "nvcc"}}),
              {"nvcc"}, {"/usr/local/cuda/bin/"});
  sqlite3* writer = nullptr;
  REQUIRE(sqlite3_open(locked.c_str(), &writer) == SQLITE_OK);
  exec(writer, "BEGIN EXCLUSIVE; INSERT INTO Dirnames VALUES ('/x/', 1, 9);");
  const PackageDatabase locked_db({tree.path("no-dpkg"), locked});
  CHECK_FALSE(locked_db.version_of_file("/usr/local/cuda/bin/nvcc").has_value());
  CHECK_FALSE(locked_db.problems().empty());
  exec(writer, "ROLLBACK;");
  sqlite3_close(writer);
}
#else
TEST_CASE("package db: RPM's SQLite database (needs libsqlite3-dev to write one)") {
  CUDADIAG_SKIP("built without libsqlite3-dev: the RPM database tests cannot write a database");
}
#endif
