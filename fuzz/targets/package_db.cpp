// The system package databases: part 1 is dpkg's status file, part 2 a package's info/*.list (each
// of its lines is then looked up), part 3 an RPM header blob stored in an rpmdb.sqlite-shaped
// database under the basename "nvcc" (looked up as /usr/local/cuda/bin/nvcc).
#include "versions/package_db.hpp"

#include "targets.hpp"

#if CUDADIAG_HAVE_SQLITE3
#include <sqlite3.h>
#endif

namespace cudadiag::fuzz {
namespace {

// Without libsqlite3-dev no database is written, and the RPM part of the input is not exercised.
void write_rpmdb([[maybe_unused]] const std::string& path, [[maybe_unused]] const std::string& blob) {
#if CUDADIAG_HAVE_SQLITE3
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) {
    sqlite3_close(db);
    return;
  }
  sqlite3_exec(db,
               "CREATE TABLE Packages (hnum INTEGER PRIMARY KEY, blob BLOB NOT NULL);"
               "CREATE TABLE Basenames (key TEXT NOT NULL, hnum INTEGER NOT NULL, idx INTEGER NOT NULL);"
               "INSERT INTO Basenames VALUES ('nvcc', 1, 0);",
               nullptr, nullptr, nullptr);
  sqlite3_stmt* insert = nullptr;
  if (sqlite3_prepare_v2(db, "INSERT INTO Packages VALUES (1, ?1)", -1, &insert, nullptr) == SQLITE_OK) {
    sqlite3_bind_blob(insert, 1, blob.data(), static_cast<int>(blob.size()), SQLITE_TRANSIENT);
    sqlite3_step(insert);
  }
  sqlite3_finalize(insert);
  sqlite3_close(db);
#endif
}

} // namespace

int package_db(const std::uint8_t* data, std::size_t size) {
  const auto parts = split_input(data, size, 3);
  const auto root = fresh_dir("packages");
  write_file(root + "/dpkg/status", parts[0]);
  write_file(root + "/dpkg/info/cuda-nvcc-13-0:amd64.list", parts[1]);
  write_rpmdb(root + "/rpmdb.sqlite", parts[2]);
  const versions::PackageDatabase db({root + "/dpkg", root + "/rpmdb.sqlite"});
  std::size_t asked = 0;
  std::string_view lines = parts[1];
  while (!lines.empty() && asked++ < 16) {
    const auto end = lines.find('\n');
    const auto line = std::string(lines.substr(0, end));
    if (auto found = db.version_of_file(line)) {
      check(versions::is_dotted_digits(found->version), "a package version that is not dotted digits");
    }
    lines = end == std::string_view::npos ? std::string_view{} : lines.substr(end + 1);
  }
  if (auto found = db.version_of_file("/usr/local/cuda/bin/nvcc")) {
    check(versions::is_dotted_digits(found->version), "an RPM version that is not dotted digits");
  }
  static_cast<void>(db.problems());
  return 0;
}

} // namespace cudadiag::fuzz
