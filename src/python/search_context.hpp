#pragma once
// What every step of Python discovery shares (internal to src/python): the snapshot and the trace
// being written, Python versions as X.Y, and bounded, cwd-relative file access. Nothing here
// spawns a process or reads the process environment.

#include "core/environment.hpp"
#include "core/expected.hpp"
#include "core/filesystem.hpp"
#include "core/text.hpp"

#include <compare>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::python {

constexpr std::size_t k_max_file_bytes = std::size_t{64} * 1024; // pyvenv.cfg, shims, version files, site.py
constexpr std::size_t k_max_path_notes = 8; // PATH oddities traced one by one, then counted
constexpr std::size_t k_max_walk_up = 256;  // directory levels climbed looking for a file

// The snapshot being searched, the trace being written, and whether the user site is off
// (PYTHONNOUSERSITE). note() makes each line printable (control bytes and non-UTF-8 as \xNN).
struct Context {
  const Environment& env;
  std::vector<std::string>& trace;
  bool no_user_site = false;

  void note(std::string_view line) const { trace.push_back(printable(line)); }
};

struct PyVersion {
  unsigned major = 0;
  unsigned minor = 0;
  auto operator<=>(const PyVersion&) const = default;
  [[nodiscard]] std::string text() const { return std::to_string(major) + "." + std::to_string(minor); }
};

// "3.11", "3.11.7", "3.11.7.final.0" -> 3.11 (numbers of at most four digits). With `whole`,
// nothing may follow the minor number.
std::optional<PyVersion> parse_major_minor(std::string_view text, bool whole = false);
// "python3.11" -> 3.11; "python3", "python3.11-config", "python3.13t" -> nullopt.
std::optional<PyVersion> version_from_exe_name(std::string_view name);
// "python3.11".
std::string python_dir_name(const PyVersion& version);

// The newest X.Y with a <dir>/pythonX.Y entry that satisfies `accept`.
template <class Accept> std::optional<PyVersion> newest_python_entry(const std::string& dir, Accept accept) {
  auto names = fs::list_directory(dir);
  if (!names) {
    return std::nullopt;
  }
  std::optional<PyVersion> best;
  for (const auto& name : *names) {
    const auto version = version_from_exe_name(name);
    if (version && (!best || *version > *best) && accept(fs::join(dir, name))) {
      best = version;
    }
  }
  return best;
}

// `value` as an absolute, lexically normal path; a relative one is taken relative to env.cwd and
// the trace says so (unless `quiet`). nullopt, traced, when it is relative and the cwd is unknown.
std::optional<std::string> absolute_path(const Context& ctx, std::string_view what, const std::string& value,
                                         bool quiet = false);
// The realpath of `path`, or `path` itself when it cannot be resolved.
std::string real_or_same(const std::string& path);
// The file's first k_max_file_bytes; the trace notes when it is larger.
Expected<std::string> read_bounded(const Context& ctx, const std::string& path);

} // namespace cudadiag::python
