#pragma once
// SQLite, loaded when it is needed: the RPM database (rpmdb.sqlite) is read through the system's
// libsqlite3.so.0, dlopen'd on the first RPM query, so that libcudadiag.so needs nothing but the C
// and C++ runtimes (tests/abi/check_needed.sh) and a machine without an RPM database never loads
// it. The entry points are typed from sqlite3.h's own prototypes (decltype), so a mirror cannot
// drift from the header it was compiled against.

#include <sqlite3.h>

#include <string>

namespace cudadiag::versions {

struct SqliteApi {
  decltype(&::sqlite3_open_v2) open_v2 = nullptr;
  decltype(&::sqlite3_close_v2) close_v2 = nullptr;
  decltype(&::sqlite3_errmsg) errmsg = nullptr;
  decltype(&::sqlite3_errstr) errstr = nullptr;
  decltype(&::sqlite3_busy_timeout) busy_timeout = nullptr;
  decltype(&::sqlite3_prepare_v2) prepare_v2 = nullptr;
  decltype(&::sqlite3_finalize) finalize = nullptr;
  decltype(&::sqlite3_reset) reset = nullptr;
  decltype(&::sqlite3_bind_text) bind_text = nullptr;
  decltype(&::sqlite3_step) step = nullptr;
  decltype(&::sqlite3_column_bytes) column_bytes = nullptr;
  decltype(&::sqlite3_column_blob) column_blob = nullptr;
};

// The process's one SQLite API, loaded on the first call (thread-safe) and never unloaded; nullptr
// when libsqlite3.so.0 cannot be loaded or lacks an entry point, with the reason in `why`.
const SqliteApi* sqlite_api(std::string& why);

} // namespace cudadiag::versions
