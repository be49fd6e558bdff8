#include "loader/closure.hpp"

#include "core/parallel.hpp"
#include "loader/symbol_check.hpp"

#include <cctype>
#include <deque>

namespace cudadiag::loader {
namespace {

// Glibc's separators for DT_RPATH, DT_RUNPATH and LD_LIBRARY_PATH: ':' (and ';' in LD_LIBRARY_PATH).
std::vector<std::string> split_entries(std::string_view value, std::string_view separators) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (true) {
    const auto at = value.find_first_of(separators, start);
    parts.emplace_back(
        value.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) {
      return parts;
    }
    start = at + 1;
  }
}

// One directory of a search, and what named it.
struct SearchDir {
  std::string dir;
  Route route;
};

class ClosureBuilder {
public:
  ClosureBuilder(const SearchSetting& setting, ObjectStore& store) : m_setting(setting), m_store(store) {
    for (const auto& entry : m_setting.ld_library_path) {
      m_ld_library_path.push_back({in_cwd(entry.empty() ? m_setting.cwd : entry), Route::ld_library_path});
    }
    for (const auto& dir : m_setting.default_dirs) {
      m_default_dirs.push_back({dir, Route::default_dirs});
    }
  }

  Closure build(const std::string& root, Route root_route, const std::string& root_dir,
                const std::vector<std::string>& preloads, SymbolCheck symbols) {
    for (const auto& preload : m_setting.preloads) {
      load_system_preload(preload);
    }
    for (const auto& preload : preloads) {
      if (const auto index = load_by_path(preload, Route::preloaded, fs::parent(preload))) {
        load_dependencies_of(*index);
      }
    }
    const auto index = load_by_path(root, root_route, root_dir);
    if (index) {
      m_closure.root = *index;
      load_dependencies_of(*index);
    }
    // glibc maps every dependency before it relocates anything: a missing or broken one stops the
    // load first, and the symbols are never looked up.
    if (symbols != SymbolCheck::skip && m_closure.missing.empty() && m_closure.broken.empty() &&
        !m_closure.root_error) {
      check_symbols(m_closure, m_store,
                    symbols == SymbolCheck::check_in_parallel ? parallel_threads(m_closure.objects.size())
                                                              : 1);
    }
    return std::move(m_closure);
  }

private:
  // An absolute path dlopen'ed by a program; nullopt when it is missing or fails.
  std::optional<std::size_t> load_by_path(const std::string& path, Route route, const std::string& dir) {
    if (const auto loaded = find_loaded(path)) {
      return loaded;
    }
    const auto* file = m_store.open(path);
    if (file == nullptr || file->skipped_because || file->fails_because) {
      if (file != nullptr && file->crashes && !m_closure.crash) {
        m_closure.crash = path + ": " + *file->fails_because;
      }
      if (!m_closure.root_error) {
        m_closure.root_error =
            path + ": " +
            (file == nullptr ? std::string("cannot open shared object file: No such file or directory")
                             : file->skipped_because.value_or(file->fails_because.value_or("")));
      }
      return std::nullopt;
    }
    return add_object(path, file, path, std::nullopt, route, dir);
  }

  // One LD_PRELOAD or /etc/ld.so.preload entry and its dependencies; ignored when it cannot be
  // loaded (glibc prints "object '...' cannot be preloaded ... ignored" and goes on).
  void load_system_preload(const loader::Preload& preload) {
    std::vector<std::pair<std::string, std::string>> places; // path, search dir
    if (preload.entry.find('/') != std::string::npos) {
      places.emplace_back(in_cwd(preload.entry), "");
    } else {
      for (const auto& dir : m_ld_library_path) {
        places.emplace_back(fs::join(dir.dir, preload.entry), dir.dir);
      }
      if (const auto* entry =
              m_setting.cache != nullptr ? m_setting.cache->resolve(preload.entry) : nullptr) {
        places.emplace_back(entry->path, fs::parent(entry->path));
      }
      for (const auto& dir : m_default_dirs) {
        places.emplace_back(fs::join(dir.dir, preload.entry), dir.dir);
      }
    }
    for (const auto& [path, dir] : places) {
      if (find_loaded(path)) {
        return;
      }
      const auto* file = m_store.open(path);
      if (file == nullptr || file->skipped_because) {
        continue;
      }
      if (file->fails_because) {
        if (file->crashes && !m_closure.crash) {
          m_closure.crash = path + ": " + *file->fails_because + " (" + preload.source + ")";
        }
        m_closure.ignored_preloads.push_back(path + ": " + *file->fails_because + " (" + preload.source +
                                             ")");
        return;
      }
      const auto index = add_object(path, file, preload.entry, std::nullopt,
                                    preload.from_file ? Route::ld_so_preload : Route::ld_preload,
                                    dir.empty() ? preload.source : dir);
      load_dependencies_of(index);
      return;
    }
    m_closure.ignored_preloads.push_back(preload.entry + ": cannot open shared object file (" +
                                         preload.source + ")");
  }

  // Breadth first, as _dl_map_object_deps: every object's needs, in order, before the next level.
  void load_dependencies_of(std::size_t first) {
    std::deque<std::size_t> queue{first};
    while (!queue.empty()) {
      const std::size_t index = queue.front();
      queue.pop_front();
      if (m_expanded.size() <= index) {
        m_expanded.resize(index + 1, false);
      }
      if (m_expanded[index]) {
        continue;
      }
      m_expanded[index] = true;
      const auto needed = m_closure.objects[index].file->elf->needed; // a copy: objects may grow
      for (const auto& name : needed) {
        const std::size_t before = m_closure.objects.size();
        if (const auto dependency = resolve_needed(name, index)) {
          m_closure.objects[index].dependencies.push_back(*dependency);
          if (*dependency >= before) {
            queue.push_back(*dependency);
          }
        }
      }
    }
  }

  // An object already in the process under `name` (a path it was opened as, a name it was needed
  // as, or its SONAME), as _dl_name_match_p and the SONAME check of _dl_map_object.
  std::optional<std::size_t> find_loaded(const std::string& name) const {
    for (std::size_t i = 0; i < m_closure.objects.size(); ++i) {
      const auto& object = m_closure.objects[i];
      if (object.path == name || object.file->elf->soname == name) {
        return i;
      }
      for (const auto& alias : object.names) {
        if (alias == name) {
          return i;
        }
      }
    }
    return std::nullopt;
  }

  std::optional<std::size_t> find_loaded(const ObjectFile* file) const {
    for (std::size_t i = 0; i < m_closure.objects.size(); ++i) {
      if (m_closure.objects[i].file == file) {
        return i;
      }
    }
    return std::nullopt;
  }

  std::size_t add_object(const std::string& path, const ObjectFile* file, const std::string& name,
                         std::optional<std::size_t> needed_by, Route route, const std::string& dir) {
    if (const auto same_file = find_loaded(file)) { // _dl_file_id_match_p: one file, one object
      m_closure.objects[*same_file].names.push_back(name);
      return *same_file;
    }
    LoadedObject object;
    object.path = path;
    object.file = file;
    object.names.push_back(name);
    object.needed_by = needed_by;
    object.route = route;
    object.search_dir = dir;
    m_closure.objects.push_back(std::move(object));
    return m_closure.objects.size() - 1;
  }

  std::optional<std::size_t> resolve_needed(const std::string& name, std::size_t requester) {
    if (const auto loaded = find_loaded(name)) {
      return loaded;
    }
    const auto& object = m_closure.objects[requester];
    if (name.find('/') != std::string::npos) {
      const auto path = in_cwd(expand_dynamic_tokens(name, object.path, m_setting));
      return take(path, name, requester, Route::path_in_name, "", nullptr);
    }
    // The places looked in, as views of strings that outlive this call: copied only for a
    // dependency that is missing (the search may run through thousands of directories).
    std::vector<std::string_view> searched;
    bool stop = false;
    const auto try_dir = [&](const SearchDir& dir) -> std::optional<std::size_t> {
      searched.push_back(dir.dir);
      if (!m_store.is_directory(dir.dir)) {
        return std::nullopt; // nothing to open in it
      }
      return take(fs::join(dir.dir, name), name, requester, dir.route, dir.dir, &stop);
    };
    // DT_RPATH (the requester's and its loaders', unless it has DT_RUNPATH), LD_LIBRARY_PATH, DT_RUNPATH.
    const auto [before, after] = own_search_dirs(requester);
    const std::vector<SearchDir>* const lists[] = {&before, &m_ld_library_path, &after};
    for (const auto* dirs : lists) {
      for (const auto& dir : *dirs) {
        if (auto index = try_dir(dir)) {
          return index;
        }
        if (stop) {
          return std::nullopt;
        }
      }
    }
    if (!object.file->elf->no_default_lib) {
      if (const auto* entry = m_setting.cache != nullptr ? m_setting.cache->resolve(name) : nullptr) {
        searched.push_back(loader::k_default_ld_so_cache_path);
        if (auto index =
                take(entry->path, name, requester, Route::ld_so_cache, fs::parent(entry->path), &stop)) {
          return index;
        }
        if (stop) {
          return std::nullopt;
        }
      }
      for (const auto& dir : m_default_dirs) {
        if (auto index = try_dir(dir)) {
          return index;
        }
        if (stop) {
          return std::nullopt;
        }
      }
    }
    m_closure.missing.push_back(
        {name, requester, std::vector<std::string>(searched.begin(), searched.end())});
    return std::nullopt;
  }

  // Opens `path` for `name`: an object (new or the same file already loaded), or nullopt when there
  // is no file there or it is passed over (`stop` unset), or it stops the load (`stop` set).
  std::optional<std::size_t> take(const std::string& path, const std::string& name, std::size_t requester,
                                  Route route, const std::string& dir, bool* stop) {
    const auto* file = m_store.open(path);
    if (file == nullptr || file->skipped_because) {
      if (stop == nullptr) {
        m_closure.missing.push_back({name, requester, {path}});
      }
      return std::nullopt;
    }
    if (file->fails_because) {
      m_closure.broken.push_back({name, path, requester, *file->fails_because});
      if (file->crashes && !m_closure.crash) {
        m_closure.crash = path + ": " + *file->fails_because;
      }
      if (stop != nullptr) {
        *stop = true;
      }
      return std::nullopt;
    }
    return add_object(path, file, name, requester, route, dir);
  }

  // A relative path, as the process would open it: from its working directory (not cudadiag's).
  std::string in_cwd(const std::string& path) const {
    return path.empty() || path.front() == '/' ? path : fs::join(m_setting.cwd, path);
  }

  // The requester's own search directories: those glibc looks in before LD_LIBRARY_PATH (the
  // DT_RPATH of the requester and of the objects that loaded it, when it has no DT_RUNPATH) and
  // after it (its DT_RUNPATH).
  std::pair<std::vector<SearchDir>, std::vector<SearchDir>> own_search_dirs(std::size_t requester) const {
    std::vector<SearchDir> before;
    std::vector<SearchDir> after;
    const auto& object = m_closure.objects[requester];
    const auto& elf = *object.file->elf;
    const auto add_list = [&](std::vector<SearchDir>& dirs, const std::string& list,
                              const LoadedObject& owner, Route route) {
      if (list.empty()) {
        return; // glibc 2.36, measured: an empty DT_RUNPATH / DT_RPATH names no directory (an empty entry in
                // a list is the cwd)
      }
      for (const auto& entry : split_entries(list, ":")) {
        dirs.push_back(
            {in_cwd(entry.empty() ? m_setting.cwd : expand_dynamic_tokens(entry, owner.path, m_setting)),
             route});
      }
    };
    if (!elf.runpath) {
      for (std::optional<std::size_t> at = requester; at; at = m_closure.objects[*at].needed_by) {
        if (const auto& rpath = m_closure.objects[*at].file->elf->rpath) {
          add_list(before, *rpath, m_closure.objects[*at], Route::rpath);
        }
      }
    }
    if (elf.runpath) {
      add_list(after, *elf.runpath, object, Route::runpath);
    }
    return {std::move(before), std::move(after)};
  }

  const SearchSetting& m_setting;
  ObjectStore& m_store;
  std::vector<SearchDir> m_ld_library_path; // LD_LIBRARY_PATH's directories, from the process's cwd
  std::vector<SearchDir> m_default_dirs;    // the loader's default directories
  Closure m_closure;
  std::vector<bool> m_expanded;
};

} // namespace

std::string_view to_string(Route route) {
  switch (route) {
  case Route::root: return "root";
  case Route::preloaded: return "preloaded";
  case Route::ld_preload: return "LD_PRELOAD";
  case Route::ld_so_preload: return "/etc/ld.so.preload";
  case Route::path_in_name: return "DT_NEEDED path";
  case Route::rpath: return "DT_RPATH";
  case Route::ld_library_path: return "LD_LIBRARY_PATH";
  case Route::runpath: return "DT_RUNPATH";
  case Route::ld_so_cache: return "ld.so.cache";
  case Route::default_dirs: return "default-dirs";
  }
  return "";
}

std::string expand_dynamic_tokens(std::string_view entry, std::string_view object_path,
                                  const SearchSetting& setting) {
  std::string out;
  out.reserve(entry.size());
  for (std::size_t i = 0; i < entry.size();) {
    if (entry[i] != '$') {
      out += entry[i++];
      continue;
    }
    const auto token = [&](std::string_view name) -> std::size_t {
      const auto rest = entry.substr(i + 1);
      if (rest.substr(0, name.size()) == name &&
          (rest.size() == name.size() ||
           !(std::isalnum(static_cast<unsigned char>(rest[name.size()])) || rest[name.size()] == '_'))) {
        return name.size() + 1;
      }
      if (rest.size() >= name.size() + 2 && rest[0] == '{' && rest.substr(1, name.size()) == name &&
          rest[name.size() + 1] == '}') {
        return name.size() + 3;
      }
      return 0;
    };
    if (const auto length = token("ORIGIN")) {
      out += fs::parent(object_path);
      i += length;
    } else if (const auto lib_length = token("LIB")) {
      out += setting.lib_token;
      i += lib_length;
    } else if (const auto platform_length = token("PLATFORM")) {
      out += setting.platform_token;
      i += platform_length;
    } else {
      out += entry[i++];
    }
  }
  return out;
}

SearchSetting search_setting(const Environment& env, const SystemLayout& layout,
                             const loader::LdSoCache* cache) {
  SearchSetting setting;
  setting.preloads = loader::system_preloads(env, layout);
  if (const auto value = env.get("LD_LIBRARY_PATH"); value && !value->empty()) {
    setting.ld_library_path = split_entries(*value, ":;");
  }
  setting.cwd = env.cwd.empty() ? "." : env.cwd;
  setting.cache = cache;
  setting.default_dirs = layout.default_lib_dirs;
  setting.lib_token = "lib/" + layout.multiarch;
  return setting;
}

std::string Closure::failure() const {
  if (crash) {
    return *crash;
  }
  if (root_error) {
    return *root_error;
  }
  const auto who = [&](std::size_t index) {
    return index < objects.size() ? objects[index].path : std::string("?");
  };
  if (!missing.empty()) {
    return missing.front().name + ": cannot open shared object file: No such file or directory (needed by " +
           who(missing.front().needed_by) + ")";
  }
  if (!broken.empty()) {
    return broken.front().path + ": " + broken.front().error + " (needed by " +
           who(broken.front().needed_by) + ")";
  }
  if (!missing_versions.empty()) {
    const auto& first = missing_versions.front();
    return who(first.bound) + ": version `" + first.version + "' not found (required by " +
           who(first.needed_by) + ")";
  }
  if (!unresolved.empty()) {
    const auto& first = unresolved.front();
    return who(first.needed_by) + ": undefined symbol: " + first.symbol +
           (first.version.empty() ? std::string() : ", version " + first.version);
  }
  return "";
}

Closure build_closure(const std::string& root, Route root_route, const std::string& root_dir,
                      const std::vector<std::string>& preloads, const SearchSetting& setting,
                      ObjectStore& store, SymbolCheck symbols) {
  return ClosureBuilder(setting, store).build(root, root_route, root_dir, preloads, symbols);
}

} // namespace cudadiag::loader
