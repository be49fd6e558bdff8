#include "versions/sqlite_api.hpp"

#include "cuda_api/library.hpp"

namespace cudadiag::versions {

namespace {

struct LoadedSqlite {
  cuda_api::DlHandle handle;
  SqliteApi api;
  std::string problem; // empty when every entry point was found
};

LoadedSqlite load_sqlite() {
  LoadedSqlite loaded;
  loaded.handle = cuda_api::DlHandle("libsqlite3.so.0");
  if (!loaded.handle.loaded()) {
    loaded.problem = "libsqlite3.so.0 could not be loaded: " + loaded.handle.error();
    return loaded;
  }
  auto& api = loaded.api;
  const auto& lib = loaded.handle;
  api.open_v2 = lib.symbol<decltype(api.open_v2)>("sqlite3_open_v2");
  api.close_v2 = lib.symbol<decltype(api.close_v2)>("sqlite3_close_v2");
  api.errmsg = lib.symbol<decltype(api.errmsg)>("sqlite3_errmsg");
  api.errstr = lib.symbol<decltype(api.errstr)>("sqlite3_errstr");
  api.busy_timeout = lib.symbol<decltype(api.busy_timeout)>("sqlite3_busy_timeout");
  api.prepare_v2 = lib.symbol<decltype(api.prepare_v2)>("sqlite3_prepare_v2");
  api.finalize = lib.symbol<decltype(api.finalize)>("sqlite3_finalize");
  api.reset = lib.symbol<decltype(api.reset)>("sqlite3_reset");
  api.bind_text = lib.symbol<decltype(api.bind_text)>("sqlite3_bind_text");
  api.step = lib.symbol<decltype(api.step)>("sqlite3_step");
  api.column_bytes = lib.symbol<decltype(api.column_bytes)>("sqlite3_column_bytes");
  api.column_blob = lib.symbol<decltype(api.column_blob)>("sqlite3_column_blob");
  const bool complete = api.open_v2 && api.close_v2 && api.errmsg && api.errstr && api.busy_timeout &&
                        api.prepare_v2 && api.finalize && api.reset && api.bind_text && api.step &&
                        api.column_bytes && api.column_blob;
  if (!complete) {
    loaded.problem = "libsqlite3.so.0 lacks an entry point cudadiag calls (older than SQLite 3.7.15)";
  }
  return loaded;
}

} // namespace

Expected<const SqliteApi*> sqlite_api() {
  static const LoadedSqlite loaded = load_sqlite(); // loaded once; never unloaded
  if (!loaded.problem.empty()) {
    return Error{loaded.problem};
  }
  return &loaded.api;
}

} // namespace cudadiag::versions
