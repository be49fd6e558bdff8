#include "python/path_search.hpp"

#include "python/interpreter.hpp"
#include "python/pyenv.hpp"
#include "python/venv.hpp"

#include <set>

namespace cudadiag::python {

PathSearch::PathSearch(const Context& ctx, const std::string& value) : m_ctx(ctx) {
  std::set<std::string> seen;
  size_t relative = 0;
  for (const auto& entry : split_search_path(value)) {
    std::string dir;
    if (!entry.empty() && entry.front() == '/') {
      dir = fs::lexically_normal(entry);
    } else {
      ++relative;
      const bool quiet = relative > k_max_path_notes;
      if (entry.empty()) {
        if (m_ctx.env.cwd.empty()) {
          continue;
        }
        dir = m_ctx.env.cwd;
        if (!quiet) {
          m_ctx.note("PATH has an empty entry: it means the working directory " + dir);
        }
      } else {
        auto absolute = absolute_path(m_ctx, "PATH entry", entry, quiet);
        if (!absolute) {
          continue;
        }
        dir = *absolute;
      }
    }
    if (seen.insert(dir).second) {
      m_dirs.push_back(dir);
    }
  }
  if (relative > k_max_path_notes) {
    m_ctx.note("PATH has " + std::to_string(relative) + " empty or relative entries; the first " +
               std::to_string(k_max_path_notes) + " are listed above");
  }
}

std::optional<PythonEnvironment> python3_on_path(const Context& ctx) {
  const auto value = ctx.env.get("PATH");
  if (!value) {
    ctx.note("PATH is not set; no python3 on PATH");
    return std::nullopt;
  }
  PathSearch path(ctx, *value);
  auto found = path.find("python3");
  if (!found) {
    ctx.note("no executable python3 on PATH (" + std::to_string(path.dirs().size()) + " directories)");
    return std::nullopt;
  }
  const auto& exe = found->second;
  ctx.note("python3 on PATH: " + exe);
  if (!venv_config_for(fs::parent(exe)).empty()) {
    return interpreter_environment(ctx, "python3 on PATH", exe);
  }
  std::string content;
  if (is_pyenv_shim(ctx, exe, content)) {
    return pyenv_environment(ctx, path, found->first, exe, content);
  }
  return interpreter_environment(ctx, "python3 on PATH", exe);
}

} // namespace cudadiag::python
