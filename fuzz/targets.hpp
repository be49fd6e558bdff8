#pragma once
// The fuzz targets: one function per reader of outside bytes, listed in one table. Each is built
// twice (fuzz/CMakeLists.txt): as a libFuzzer executable of its own (CUDADIAG_FUZZ=ON with clang:
// libfuzzer_entry.cpp calls it) and into cudadiag_fuzz_replay, which runs every committed seed and
// regression input through it in the ordinary build, so a fixed crash stays fixed without clang.
//
// A target returns 0 and must never crash, leak, hit undefined behaviour or throw: every input is
// either parsed or refused with an error value. Properties a target checks beyond that (a round
// trip, agreement with nlohmann's parser) abort through check().

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::fuzz {

using TargetFunction = int (*)(const std::uint8_t* data, std::size_t size);

// One per reader (what it reads, where the reader lives):
int elf(const std::uint8_t* data,
        std::size_t size); // src/elf: ELF headers, dynamic section, dynamic symbols, .nv_fatbin
int ld_so_cache(const std::uint8_t* data, std::size_t size);   // src/loader: /etc/ld.so.cache
int proc_maps(const std::uint8_t* data, std::size_t size);     // src/inspect: /proc/PID/maps
int dist_info(const std::uint8_t* data, std::size_t size);     // src/versions: dist-info METADATA
int version_json(const std::uint8_t* data, std::size_t size);  // src/versions: <toolkit>/version.json
int conda_meta(const std::uint8_t* data, std::size_t size);    // src/versions: conda-meta records
int header_macros(const std::uint8_t* data, std::size_t size); // src/versions: CCCL/CUDA version macros
int python_files(const std::uint8_t* data, std::size_t size);  // src/python: pyvenv.cfg, pyenv files
int report_input(const std::uint8_t* data, std::size_t size);  // src/diff: report or bundle, the diff
int tar_gzip(const std::uint8_t* data, std::size_t size);      // src/bundle: gzip, tar read/write
int policy(const std::uint8_t* data, std::size_t size);        // src/policy: JSON or TOML policy files
int requirement(const std::uint8_t* data, std::size_t size);   // src/policy: requirement specs
int options_json(const std::uint8_t* data, std::size_t size);  // src/api: the C/C++ options JSON
int bounded_json(const std::uint8_t* data, std::size_t size);  // src/core: bounded JSON (worker lines)
int terminal_text(const std::uint8_t* data, std::size_t size); // src/report: escape_controls
int fleet_stream(const std::uint8_t* data, std::size_t size);  // src/fleet: report streams, pruned parse
int package_db(const std::uint8_t* data, std::size_t size);    // src/versions: dpkg status/.list, RPM headers
int python_requirements(const std::uint8_t* data,
                        std::size_t size); // src/python: PEP 440/508, METADATA Requires-Dist
int worker_results(const std::uint8_t* data,
                   std::size_t size); // src/verify, src/linkage: a worker's result object

struct Target {
  std::string_view name; // also the corpus directory fuzz/corpus/<name> and tests/fuzz/<name>
  TargetFunction run;
};

inline constexpr Target k_targets[] = {
    {.name = "elf", .run = elf},
    {.name = "ld_so_cache", .run = ld_so_cache},
    {.name = "proc_maps", .run = proc_maps},
    {.name = "dist_info", .run = dist_info},
    {.name = "version_json", .run = version_json},
    {.name = "conda_meta", .run = conda_meta},
    {.name = "header_macros", .run = header_macros},
    {.name = "python_files", .run = python_files},
    {.name = "report_input", .run = report_input},
    {.name = "tar_gzip", .run = tar_gzip},
    {.name = "policy", .run = policy},
    {.name = "requirement", .run = requirement},
    {.name = "options_json", .run = options_json},
    {.name = "bounded_json", .run = bounded_json},
    {.name = "terminal_text", .run = terminal_text},
    {.name = "fleet_stream", .run = fleet_stream},
    {.name = "package_db", .run = package_db},
    {.name = "python_requirements", .run = python_requirements},
    {.name = "worker_results", .run = worker_results},
};

// Helpers for the targets (support.cpp).

// The input split at each "\n====\n" into at most `parts` pieces (missing pieces are empty), so
// one input can carry several files.
std::vector<std::string> split_input(const std::uint8_t* data, std::size_t size, std::size_t parts);

// A directory of this process's own, created on first use and removed at exit; `sub` (a relative
// path) is created under it, emptied first.
std::string fresh_dir(std::string_view sub);
// Writes `content` to `path`, creating parent directories.
void write_file(const std::string& path, std::string_view content);
// `text` made usable as one file-name component: no '/', no NUL, not "." or "..", at most 64 bytes.
std::string file_name_part(std::string_view text);

// Aborts with `what` when `condition` is false: a property violation is a crash to the fuzzer.
void check(bool condition, std::string_view what);

} // namespace cudadiag::fuzz
