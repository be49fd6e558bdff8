#pragma once
// PATH as a shell searches it, and the one place that decides which interpreter `python3` runs
// (internal to src/python).

#include "python/python_environments.hpp"
#include "python/search_context.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cudadiag::python {

class PathSearch {
public:
  // The directories of the PATH value `value`, absolute, each once; relative and empty entries are
  // taken relative to ctx.env.cwd (traced, the first k_max_path_notes of them).
  PathSearch(const Context& ctx, const std::string& value);

  [[nodiscard]] const std::vector<std::string>& dirs() const { return m_dirs; }

  // The first executable `name` in dirs()[from…] whose directory `skip` does not reject, with its index.
  template <class Skip>
  std::optional<std::pair<size_t, std::string>> find(std::string_view name, size_t from, Skip skip) {
    for (size_t i = from; i < m_dirs.size(); ++i) {
      if (skip(m_dirs[i])) {
        continue;
      }
      const auto candidate = fs::join(m_dirs[i], name);
      if (fs::is_executable_file(candidate)) {
        return std::pair{i, candidate};
      }
      if (fs::is_symlink(candidate) && !fs::exists(candidate) && m_broken_notes++ < k_max_path_notes) {
        auto why = fs::real_path(candidate);
        m_ctx.note(candidate + " is a broken symlink (" + (why ? std::string("?") : why.error().message) +
                   "); skipped");
      }
    }
    return std::nullopt;
  }
  std::optional<std::pair<size_t, std::string>> find(std::string_view name, size_t from = 0) {
    return find(name, from, [](const std::string&) { return false; });
  }

private:
  const Context& m_ctx;
  std::vector<std::string> m_dirs;
  size_t m_broken_notes = 0;
};

// What `python3` typed in a shell with this snapshot runs (label "python3 on PATH"): the first
// executable python3 on $PATH — a venv's bin (pyvenv.cfg next to it or one level up, checked before
// symlinks are resolved), a pyenv shim (resolved as pyenv would), or a plain interpreter. $VIRTUAL_ENV
// and $CONDA_PREFIX play no part: Python reads neither. nullopt, traced, when PATH has no python3
// or what it names cannot be resolved.
std::optional<PythonEnvironment> python3_on_path(const Context& ctx);

} // namespace cudadiag::python
