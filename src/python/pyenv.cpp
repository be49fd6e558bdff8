#include "python/pyenv.hpp"

#include "python/interpreter.hpp"

#include <algorithm>
#include <vector>

namespace cudadiag::python {
namespace {

// Sorts pyenv version names newest first the way pyenv-latest does (dotted numbers compared as numbers).
bool newer_version_name(const std::string& a, const std::string& b) {
  size_t i = 0;
  size_t j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = a[i] >= '0' && a[i] <= '9';
    const bool db = b[j] >= '0' && b[j] <= '9';
    if (da && db) {
      size_t ei = i;
      size_t ej = j;
      while (ei < a.size() && a[ei] >= '0' && a[ei] <= '9') {
        ++ei;
      }
      while (ej < b.size() && b[ej] >= '0' && b[ej] <= '9') {
        ++ej;
      }
      auto na = std::string_view(a).substr(i, ei - i);
      auto nb = std::string_view(b).substr(j, ej - j);
      while (na.size() > 1 && na.front() == '0') {
        na.remove_prefix(1);
      }
      while (nb.size() > 1 && nb.front() == '0') {
        nb.remove_prefix(1);
      }
      if (na.size() != nb.size()) {
        return na.size() > nb.size();
      }
      if (na != nb) {
        return na > nb;
      }
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j]) {
        return a[i] > b[j];
      }
      ++i;
      ++j;
    }
  }
  return a.size() - i > b.size() - j;
}

// pyenv-latest -b: the newest installed version named `prefix` followed by '.' or '-', skipping
// -dev, -src, -latest, pre-releases and free-threaded builds.
std::optional<std::string> pyenv_latest(const std::string& root, const std::string& prefix) {
  auto names = fs::list_directory(fs::join(root, "versions"));
  if (!names || prefix.empty()) {
    return std::nullopt;
  }
  std::vector<std::string> matches;
  for (const auto& name : *names) {
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
        (name[prefix.size()] != '.' && name[prefix.size()] != '-')) {
      continue;
    }
    if (name.ends_with("-dev") || name.ends_with("-src") || name.ends_with("-latest") ||
        !fs::is_directory(fs::join(root, "versions/" + name))) {
      continue;
    }
    const auto last_alpha = name.find_last_not_of("0123456789");
    if (last_alpha != std::string::npos && last_alpha + 1 < name.size() &&
        (name[last_alpha] == 'a' || name[last_alpha] == 'b' ||
         (name[last_alpha] == 'c' && last_alpha > 0 && name[last_alpha - 1] == 'r'))) {
      continue;
    }
    if (name.back() == 't' && name.size() > 1 && name[name.size() - 2] >= '0' &&
        name[name.size() - 2] <= '9') {
      continue;
    }
    matches.push_back(name);
  }
  if (matches.empty()) {
    return std::nullopt;
  }
  std::sort(matches.begin(), matches.end(), newer_version_name);
  return matches.front();
}

// pyenv-version-name: an installed version for `name`, "system", or nullopt if it is not installed.
std::optional<std::string> pyenv_resolve(const std::string& root, const std::string& name) {
  if (name == "system") {
    return name;
  }
  constexpr std::string_view k_python_dash = "python-";
  const std::string normalised =
      name.compare(0, k_python_dash.size(), k_python_dash) == 0 ? name.substr(k_python_dash.size()) : name;
  for (const auto& candidate : {name, normalised}) {
    if (!candidate.empty() && fs::is_directory(fs::join(root, "versions/" + candidate))) {
      return candidate;
    }
  }
  if (auto latest = pyenv_latest(root, name)) {
    return latest;
  }
  return pyenv_latest(root, normalised);
}

// pyenv-version-file-read: the first word of each line, skipping blank lines, comments and words
// that could leave $PYENV_ROOT/versions.
std::vector<std::string> read_version_file(const Context& ctx, const std::string& path) {
  std::vector<std::string> names;
  auto content = read_bounded(ctx, path);
  if (!content) {
    ctx.note("cannot read " + path + ": " + content.error().message);
    return names;
  }
  for (const auto line : split_lines(*content)) {
    const auto text = trim(line);
    const auto end = text.find_first_of(" \t\r\f\v");
    auto word = std::string(text.substr(0, std::min<size_t>(end, 1024)));
    if (word.empty() || word.front() == '#') {
      continue;
    }
    if (word == ".." || word.find("../") != std::string::npos || word.find("/..") != std::string::npos ||
        word.front() == '/') {
      ctx.note(path + ": version \"" + word +
               "\" could leave the versions directory; ignored (as pyenv does)");
      continue;
    }
    names.push_back(word);
  }
  return names;
}

struct PyenvSelection {
  std::vector<std::string> names;
  std::string origin;
};

std::optional<PyenvSelection> pyenv_selection(const Context& ctx, const std::string& root) {
  if (auto value = ctx.env.non_empty("PYENV_VERSION")) {
    PyenvSelection selection{{}, "PYENV_VERSION"};
    for (auto& name : split_search_path(*value)) {
      if (!name.empty()) {
        selection.names.push_back(std::move(name));
      }
    }
    return selection;
  }
  std::vector<std::string> starts;
  if (auto dir = ctx.env.non_empty("PYENV_DIR")) {
    auto absolute = absolute_path(ctx, "PYENV_DIR", *dir);
    if (!absolute || !fs::is_directory(*absolute)) {
      ctx.note("PYENV_DIR=" + *dir + " is not a directory: pyenv would abort");
      return std::nullopt;
    }
    starts.push_back(*absolute);
  }
  if (!ctx.env.cwd.empty() && (starts.empty() || starts.front() != ctx.env.cwd)) {
    starts.push_back(ctx.env.cwd);
  }
  for (const auto& start : starts) {
    std::string dir = start;
    for (size_t level = 0; level < k_max_walk_up; ++level) {
      const auto file = fs::join(dir, ".python-version");
      if (fs::is_regular_file(file)) {
        return PyenvSelection{read_version_file(ctx, file), file};
      }
      const auto up = fs::parent(dir);
      if (up == dir) {
        break;
      }
      dir = up;
    }
  }
  const auto global = fs::join(root, "version");
  if (fs::is_regular_file(global)) {
    return PyenvSelection{read_version_file(ctx, global), global};
  }
  return PyenvSelection{{}, "no version file"};
}

// The $PYENV_ROOT a shim runs with: the value it exports, else the parent of its shims directory,
// else $PYENV_ROOT, else ~/.pyenv.
std::string pyenv_root_for(const Context& ctx, const std::string& shim, const std::string& content) {
  constexpr std::string_view k_export = "PYENV_ROOT=\"";
  if (const auto at = content.find(k_export); at != std::string::npos) {
    const auto start = at + k_export.size();
    const auto end = content.find('"', start);
    if (end != std::string::npos && end > start && content[start] == '/') {
      return content.substr(start, end - start);
    }
  }
  const auto shim_dir = fs::parent(shim);
  if (fs::basename(shim_dir) == "shims") {
    return fs::parent(shim_dir);
  }
  if (auto root = ctx.env.non_empty("PYENV_ROOT")) {
    return *root;
  }
  return fs::join(ctx.env.home(), ".pyenv");
}

} // namespace

bool is_pyenv_shim(const Context& ctx, const std::string& exe, std::string& content) {
  auto read = read_bounded(ctx, exe);
  if (read) {
    content = std::move(*read);
    return content.compare(0, 2, "#!") == 0 && content.find("pyenv") != std::string::npos;
  }
  const auto dir = fs::parent(exe);
  if (fs::basename(dir) == "shims" && fs::is_directory(fs::join(fs::parent(dir), "versions"))) {
    ctx.note("cannot read " + exe + " (" + read.error().message +
             "); taken for a pyenv shim from its directory");
    return true;
  }
  ctx.note("cannot read " + exe + " (" + read.error().message + "); taken for an interpreter");
  return false;
}

std::optional<PythonEnvironment> pyenv_environment(const Context& ctx, PathSearch& path, size_t index,
                                                   const std::string& shim, const std::string& content) {
  const auto root = pyenv_root_for(ctx, shim, content);
  auto selection = pyenv_selection(ctx, root);
  if (!selection) {
    return std::nullopt;
  }
  std::vector<std::string> names = selection->names;
  std::string skipped;
  names.emplace_back("system");
  const std::string listed = selection->names.empty() ? "system" : [&] {
    std::string text;
    for (const auto& name : selection->names) {
      text += (text.empty() ? "" : ":") + name;
    }
    return text;
  }();
  ctx.note(shim + " is a pyenv shim (PYENV_ROOT " + root + "); versions " + listed + " from " +
           selection->origin);

  const auto shims_dir = fs::join(root, "shims");
  const auto shims_real = real_or_same(shims_dir);
  const auto own_dir_real = real_or_same(fs::parent(shim));
  for (const auto& name : names) {
    const auto resolved = pyenv_resolve(root, name);
    if (!resolved) {
      ctx.note("pyenv version " + name + " (from " + selection->origin + ") is not installed under " +
               fs::join(root, "versions"));
      skipped += (skipped.empty() ? "" : ", ") + name + " not installed";
      continue;
    }
    std::string how = shim + " is a pyenv shim; version " + *resolved + " from " + selection->origin;
    if (!skipped.empty()) {
      how += " (" + skipped + ")";
    }
    if (*resolved == "system") {
      auto next = path.find("python3", index + 1, [&](const std::string& dir) {
        const auto real = real_or_same(dir);
        return dir == shims_dir || real == shims_real || real == own_dir_real;
      });
      if (!next) {
        ctx.note("pyenv \"system\": no python3 on PATH past the shims; the shim would fail");
        return std::nullopt;
      }
      auto pe = interpreter_environment(ctx, "python3 on PATH", next->second);
      if (pe) {
        pe->how = how + " -> " + pe->how;
      }
      return pe;
    }
    const auto exe = fs::join(root, "versions/" + *resolved + "/bin/python3");
    if (!fs::is_executable_file(exe)) {
      ctx.note("pyenv version " + *resolved + " has no executable bin/python3");
      skipped += (skipped.empty() ? "" : ", ") + *resolved + " has no python3";
      continue;
    }
    auto pe = interpreter_environment(ctx, "python3 on PATH", exe);
    if (pe) {
      pe->how = how + " -> " + pe->how;
    }
    return pe;
  }
  return std::nullopt;
}

} // namespace cudadiag::python
