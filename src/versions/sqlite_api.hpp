#pragma once
// SQLite, loaded when it is needed: the RPM database (rpmdb.sqlite) is read through the system's
// libsqlite3.so.0, dlopen'd on the first RPM query, so that libcudadiag.so needs nothing but the C
// and C++ runtimes (tests/abi/check_needed.sh), a machine without an RPM database never loads it,
// and the build needs no SQLite development files. The entry points mirror sqlite3.h's prototypes
// (a stable C ABI); tests/unit/test_versions_sqlite_api.cpp checks every one against the header.

#include "core/expected.hpp"

#include <cstdint>
#include <string>

// sqlite3.h's opaque handles, under the header's own global names: the mirrors below are then the
// header's exact types.
struct sqlite3;
struct sqlite3_stmt;

namespace cudadiag::versions {

// sqlite3.h's constants that cudadiag uses.
namespace sqlite {
inline constexpr int k_ok = 0;               // SQLITE_OK
inline constexpr int k_row = 100;            // SQLITE_ROW
inline constexpr int k_done = 101;           // SQLITE_DONE
inline constexpr int k_open_readonly = 0x01; // SQLITE_OPEN_READONLY
inline constexpr int k_open_uri = 0x40;      // SQLITE_OPEN_URI
using Destructor = void (*)(void*);          // sqlite3_destructor_type
// SQLITE_TRANSIENT: SQLite copies the bound bytes before the call returns.
inline Destructor transient() {
  return reinterpret_cast<Destructor>(static_cast<std::intptr_t>(-1));
}
} // namespace sqlite

struct SqliteApi {
  int (*open_v2)(const char* filename, sqlite3** db, int flags, const char* vfs) = nullptr;
  int (*close_v2)(sqlite3* db) = nullptr;
  const char* (*errmsg)(sqlite3* db) = nullptr;
  const char* (*errstr)(int code) = nullptr;
  int (*busy_timeout)(sqlite3* db, int milliseconds) = nullptr;
  int (*prepare_v2)(sqlite3* db, const char* sql, int bytes, sqlite3_stmt** statement,
                    const char** tail) = nullptr;
  int (*finalize)(sqlite3_stmt* statement) = nullptr;
  int (*reset)(sqlite3_stmt* statement) = nullptr;
  int (*bind_text)(sqlite3_stmt* statement, int index, const char* text, int bytes,
                   sqlite::Destructor free) = nullptr;
  int (*step)(sqlite3_stmt* statement) = nullptr;
  int (*column_bytes)(sqlite3_stmt* statement, int column) = nullptr;
  const void* (*column_blob)(sqlite3_stmt* statement, int column) = nullptr;
};

// The process's one SQLite API, loaded on the first call (thread-safe) and never unloaded; an error
// when libsqlite3.so.0 cannot be loaded or lacks an entry point, saying which.
Expected<const SqliteApi*> sqlite_api();

} // namespace cudadiag::versions
