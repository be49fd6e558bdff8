# All third-party dependencies, found in one place, from the distribution's packages
# (Debian 12: libcli11-dev, nlohmann-json3-dev, libspdlog-dev, libfmt-dev, doctest-dev, zlib1g-dev, libsqlite3-dev). Nothing is downloaded.
find_package(CLI11 2.1 CONFIG REQUIRED)
find_package(nlohmann_json 3.10 CONFIG REQUIRED)
find_package(spdlog 1.9 CONFIG REQUIRED)
find_package(fmt CONFIG REQUIRED)
# spdlog and fmt as headers: the `cudadiag` executable then loads no C++ library but its own
# runtime (which it links statically, cli/CMakeLists.txt): every shared library costs each run
# its open, mappings and relocations (docs/performance.md, "Start-up").
# (spdlog::spdlog_header_only would still link the shared fmt.)
add_library(cudadiag_spdlog INTERFACE)
get_target_property(_spdlog_includes spdlog::spdlog_header_only INTERFACE_INCLUDE_DIRECTORIES)
target_include_directories(cudadiag_spdlog SYSTEM INTERFACE ${_spdlog_includes})
target_compile_definitions(cudadiag_spdlog INTERFACE SPDLOG_FMT_EXTERNAL)
target_link_libraries(cudadiag_spdlog INTERFACE fmt::fmt-header-only)
if(CUDADIAG_BUILD_TESTS)
  find_package(doctest 2.4 CONFIG REQUIRED)
endif()
find_package(Threads REQUIRED)
# zlib (zlib1g-dev): the support bundle's .tar.gz is written and read in-process.
find_package(ZLIB REQUIRED)
# SQLite (libsqlite3-dev), optional: only the tests that write an RPM database (rpmdb.sqlite) and
# check the API mirror against sqlite3.h use it; cudadiag itself dlopens libsqlite3.so.0 when it
# reads one (src/versions/sqlite_api.hpp).
find_package(SQLite3)
# simdjson (libsimdjson-dev), optional: `cudadiag fleet` parses thousands of node reports with it
# (10,000 reports in seconds); without it the fleet falls back to nlohmann_json, several times slower.
find_package(simdjson CONFIG QUIET)
if(simdjson_FOUND)
  message(STATUS "cudadiag fleet: simdjson ${simdjson_VERSION}")
else()
  message(STATUS "cudadiag fleet: simdjson not found (libsimdjson-dev); the fleet parses with nlohmann_json")
endif()
