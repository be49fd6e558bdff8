// The SQLite mirror (src/versions/sqlite_api.hpp) against sqlite3.h, and a real call through it.

#include "skip.hpp"
#include "versions/sqlite_api.hpp"

#include <doctest/doctest.h>

#include <string>
#include <type_traits>

#if CUDADIAG_HAVE_SQLITE3
#include <sqlite3.h>

namespace {
using cudadiag::versions::SqliteApi;
namespace sqlite = cudadiag::versions::sqlite;

static_assert(std::is_same_v<decltype(SqliteApi::open_v2), decltype(&::sqlite3_open_v2)>);
static_assert(std::is_same_v<decltype(SqliteApi::close_v2), decltype(&::sqlite3_close_v2)>);
static_assert(std::is_same_v<decltype(SqliteApi::errmsg), decltype(&::sqlite3_errmsg)>);
static_assert(std::is_same_v<decltype(SqliteApi::errstr), decltype(&::sqlite3_errstr)>);
static_assert(std::is_same_v<decltype(SqliteApi::busy_timeout), decltype(&::sqlite3_busy_timeout)>);
static_assert(std::is_same_v<decltype(SqliteApi::prepare_v2), decltype(&::sqlite3_prepare_v2)>);
static_assert(std::is_same_v<decltype(SqliteApi::finalize), decltype(&::sqlite3_finalize)>);
static_assert(std::is_same_v<decltype(SqliteApi::reset), decltype(&::sqlite3_reset)>);
static_assert(std::is_same_v<decltype(SqliteApi::bind_text), decltype(&::sqlite3_bind_text)>);
static_assert(std::is_same_v<decltype(SqliteApi::step), decltype(&::sqlite3_step)>);
static_assert(std::is_same_v<decltype(SqliteApi::column_bytes), decltype(&::sqlite3_column_bytes)>);
static_assert(std::is_same_v<decltype(SqliteApi::column_blob), decltype(&::sqlite3_column_blob)>);
static_assert(std::is_same_v<sqlite::Destructor, sqlite3_destructor_type>);
static_assert(sqlite::k_ok == SQLITE_OK && sqlite::k_row == SQLITE_ROW && sqlite::k_done == SQLITE_DONE);
static_assert(sqlite::k_open_readonly == SQLITE_OPEN_READONLY && sqlite::k_open_uri == SQLITE_OPEN_URI);
} // namespace

TEST_CASE("sqlite api: the mirror matches sqlite3.h, and SQLITE_TRANSIENT is the header's") {
  const bool same =
      cudadiag::versions::sqlite::transient() == SQLITE_TRANSIENT; // function pointers: compared here
  CHECK(same);
}
#else
TEST_CASE("sqlite api: the mirror matches sqlite3.h") {
  CUDADIAG_SKIP("built without libsqlite3-dev: no sqlite3.h to check the mirror against");
}
#endif

TEST_CASE("sqlite api: libsqlite3.so.0 loads by name and answers a query through the mirror") {
  const auto loaded = cudadiag::versions::sqlite_api();
  if (!loaded) {
    CUDADIAG_SKIP("libsqlite3.so.0 is not installed here: " + loaded.error().message);
  }
  const auto* api = *loaded;
  sqlite3* db = nullptr;
  REQUIRE(api->open_v2(":memory:", &db, 0x02 | 0x04, nullptr) ==
          cudadiag::versions::sqlite::k_ok); // READWRITE|CREATE
  sqlite3_stmt* statement = nullptr;
  REQUIRE(api->prepare_v2(db, "SELECT ?1", -1, &statement, nullptr) == cudadiag::versions::sqlite::k_ok);
  REQUIRE(api->bind_text(statement, 1, "cuda", 4, cudadiag::versions::sqlite::transient()) ==
          cudadiag::versions::sqlite::k_ok);
  REQUIRE(api->step(statement) == cudadiag::versions::sqlite::k_row);
  CHECK(api->column_bytes(statement, 0) == 4);
  CHECK(std::string(static_cast<const char*>(api->column_blob(statement, 0)), 4) == "cuda");
  CHECK(api->step(statement) == cudadiag::versions::sqlite::k_done);
  CHECK(api->finalize(statement) == cudadiag::versions::sqlite::k_ok);
  CHECK(api->close_v2(db) == cudadiag::versions::sqlite::k_ok);
}
