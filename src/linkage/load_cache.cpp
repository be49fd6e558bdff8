#include "linkage/load_cache.hpp"

#include "core/bounded_json.hpp"
#include "core/filesystem.hpp"
#include "core/output_file.hpp"
#include "core/unique_fd.hpp"

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <set>
#include <sys/stat.h>

namespace cudadiag::linkage {
namespace {

using nlohmann::json;

constexpr std::string_view k_format = "cudadiag load-check cache";

std::string identity_text(const FileIdentity& id) {
  if (!id.exists) {
    return "absent";
  }
  return std::to_string(id.device) + ":" + std::to_string(id.inode) + ":" + std::to_string(id.size) + ":" +
         std::to_string(id.mtime_ns) + ":" + std::to_string(id.ctime_ns);
}

// The loader's configuration and the process as the key's context names them.
std::string context_of(const Environment& env, const std::string& executable, const SystemLayout& layout) {
  std::string out = "root=/\narch=" + std::string(k_host_multiarch) + "\n";
  out += "executable=" + executable + " " + identity_text(identity_of(executable)) + "\n";
  out += "ld.so.cache=" + layout.ld_so_cache + " " + identity_text(identity_of(layout.ld_so_cache)) + "\n";
  out +=
      "ld.so.preload=" + layout.ld_so_preload + " " + identity_text(identity_of(layout.ld_so_preload)) + "\n";
  for (const auto& [name, value] : env.variables()) {
    if (name.starts_with("LD_") || name == "GLIBC_TUNABLES") {
      out += "env " + name + "=" + value + "\n";
    }
  }
  // A file added to a directory the loader searches first for every name changes what it finds.
  if (const auto path = env.get("LD_LIBRARY_PATH")) {
    for (const auto& dir : split_search_path(*path)) {
      out += "searched " + dir + " " + identity_text(identity_of(dir.empty() ? env.cwd : dir)) + "\n";
    }
  }
  return out;
}

// The directory `path` is in, when it names one.
std::optional<std::string> directory_of(const std::string& path) {
  if (path.empty() || path.front() != '/') {
    return std::nullopt;
  }
  return fs::parent(path);
}

// Every file and directory a proof depends on: the prediction's objects (as opened and real), the
// directories they were found in and those a missing dependency was looked for in, the root and
// preloads as given, and every object of the worker's link map.
std::set<std::string> files_of(const loader::Closure& closure, const std::string& load_name,
                               const std::vector<std::string>& preloads, const LinkMapFacts* facts) {
  std::set<std::string> paths;
  const auto add = [&](const std::string& path) {
    if (path.empty() || path.front() != '/') {
      return;
    }
    paths.insert(path);
    if (auto dir = directory_of(path)) {
      paths.insert(*dir);
    }
  };
  add(load_name);
  for (const auto& preload : preloads) {
    add(preload);
  }
  for (const auto& object : closure.objects) {
    add(object.path);
    add(object.file->realpath);
    if (!object.search_dir.empty()) {
      paths.insert(object.search_dir);
    }
  }
  for (const auto& missing : closure.missing) {
    for (const auto& dir : missing.searched) {
      if (!dir.empty() && dir.front() == '/') {
        paths.insert(dir);
      }
    }
  }
  for (const auto& broken : closure.broken) {
    add(broken.path);
  }
  if (facts != nullptr) {
    for (const auto* list : {&facts->before, &facts->after}) {
      for (const auto& object : *list) {
        add(object.name);
        add(object.realpath);
      }
    }
  }
  return paths;
}

json entry_json(const std::string& key, const std::vector<std::pair<std::string, FileIdentity>>& files,
                const std::string& facts, std::int64_t proven_at, double elapsed_ms) {
  json list = json::array();
  for (const auto& [path, id] : files) {
    list.push_back(json::array({path, id.exists, id.device, id.inode, id.size, id.mtime_ns, id.ctime_ns}));
  }
  return {{"key", key},
          {"files", std::move(list)},
          {"facts", facts},
          {"proven_at", proven_at},
          {"elapsed_ms", elapsed_ms}};
}

// Ensures the cache's directory: created 0700 (with its missing parents, 0700 too) when `create`;
// an existing one must be a directory owned by this user, and is narrowed to 0700.
Expected<void> usable_directory(const std::string& dir, bool create) {
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    if (errno != ENOENT || !create) {
      return Error{dir + ": " + std::strerror(errno)};
    }
    const auto parent = fs::parent(dir);
    if (parent != dir && !parent.empty()) {
      if (struct stat up{}; ::stat(parent.c_str(), &up) != 0) {
        CUDADIAG_TRY(usable_directory(parent, create));
      }
    }
    if (::mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST) {
      return Error{"cannot create " + dir + ": " + std::strerror(errno)};
    }
    if (::stat(dir.c_str(), &st) != 0) {
      return Error{dir + ": " + std::strerror(errno)};
    }
  }
  if (!S_ISDIR(st.st_mode)) {
    return Error{dir + " is not a directory"};
  }
  if (st.st_uid != ::geteuid()) {
    return Error{dir + " belongs to uid " + std::to_string(st.st_uid) + ", not to this user"};
  }
  if ((st.st_mode & 077U) != 0 && ::chmod(dir.c_str(), 0700) != 0) {
    return Error{dir + " is open to others (mode " + std::to_string(st.st_mode & 0777U) +
                 ") and cannot be narrowed: " + std::strerror(errno)};
  }
  return {};
}

} // namespace

std::string_view to_string(CacheMode mode) {
  switch (mode) {
  case CacheMode::off: return "off";
  case CacheMode::read: return "read";
  case CacheMode::read_write: return "read_write";
  }
  return "off";
}

FileIdentity identity_of(const std::string& path) {
  struct stat st {};
  if (path.empty() || ::stat(path.c_str(), &st) != 0) {
    return {};
  }
  return FileIdentity{true,
                      static_cast<std::uint64_t>(st.st_dev),
                      static_cast<std::uint64_t>(st.st_ino),
                      static_cast<std::uint64_t>(st.st_size),
                      static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec,
                      static_cast<std::int64_t>(st.st_ctim.tv_sec) * 1000000000 + st.st_ctim.tv_nsec};
}

std::string utc_time(std::int64_t unix_seconds) {
  const auto seconds = static_cast<std::time_t>(unix_seconds);
  std::tm parts{};
  char text[32] = "";
  if (::gmtime_r(&seconds, &parts) == nullptr ||
      std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &parts) == 0) {
    return std::to_string(unix_seconds);
  }
  return text;
}

std::string default_cache_path(const Environment& env) {
  if (auto xdg = env.non_empty("XDG_CACHE_HOME"); xdg && xdg->front() == '/') {
    return fs::join(fs::join(*xdg, "cudadiag"), "load-check.json");
  }
  const auto home = env.home();
  if (home.empty() || home.front() != '/') {
    return {};
  }
  return fs::join(fs::join(fs::join(home, ".cache"), "cudadiag"), "load-check.json");
}

LoadCache LoadCache::open(CacheMode mode, const Environment& env, const std::string& executable,
                          const SystemLayout& layout) {
  if (mode == CacheMode::off) {
    return LoadCache{};
  }
  const auto path = default_cache_path(env);
  if (path.empty()) {
    LoadCache cache;
    cache.m_use.mode = CacheMode::off;
    cache.m_use.problem = "not used: neither XDG_CACHE_HOME nor a home directory names where it goes";
    return cache;
  }
  return open_at(mode, path, env, executable, layout);
}

LoadCache LoadCache::open_at(CacheMode mode, const std::string& path, const Environment& env,
                             const std::string& executable, const SystemLayout& layout) {
  LoadCache cache;
  cache.m_use.mode = mode;
  if (mode == CacheMode::off) {
    return cache;
  }
  cache.m_use.path = path;
  cache.m_context = context_of(env, executable, layout);
  const auto dir = fs::parent(path);
  if (mode == CacheMode::read && !fs::exists(dir)) {
    return cache; // only reading: a directory that is not there yet is an empty cache, not a problem
  }
  if (auto usable = usable_directory(dir, mode == CacheMode::read_write); !usable) {
    cache.m_use.problem = "not used: " + usable.error().message;
    cache.m_use.mode = CacheMode::off;
    return cache;
  }
  if (auto entries = read_entries(path)) {
    cache.m_entries = std::move(*entries);
  } else {
    cache.m_use.problem = entries.error().message;
  }
  return cache;
}

Expected<std::map<std::string, LoadCache::Entry>> LoadCache::read_entries(const std::string& path) {
  std::map<std::string, Entry> entries;
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (fd.get() < 0) {
    if (errno != ENOENT) {
      return Error{std::string("ignored (") + std::strerror(errno) + "); rebuilt"};
    }
    return entries;
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid()) {
    return Error{"ignored (not a regular file of this user); rebuilt"};
  }
  if (static_cast<std::uint64_t>(st.st_size) > k_max_bytes) {
    return Error{"ignored (larger than " + std::to_string(k_max_bytes) + " bytes); rebuilt"};
  }
  std::string text(static_cast<std::size_t>(st.st_size), '\0');
  const auto read = fs::read_at(fd.get(), 0, text.data(), text.size());
  if (!read || *read != text.size()) {
    return Error{"ignored (cannot be read whole); rebuilt"};
  }
  const auto parsed = bounded_json::parse(text, {.max_depth = 8, .max_bytes = k_max_bytes});
  const auto* doc = std::get_if<json>(&parsed);
  const auto corrupt = [](const std::string& why) { return Error{"ignored (" + why + "); rebuilt"}; };
  if (doc == nullptr) {
    return corrupt("not JSON: " + std::get<bounded_json::Failure>(parsed).message());
  }
  if (!doc->is_object() || doc->value("format", json()) != json(k_format)) {
    return corrupt("not a cudadiag cache");
  }
  if (doc->value("version", json()) != json(k_format_version)) {
    return corrupt("format version " + doc->value("version", json()).dump() + ", not " +
                   std::to_string(k_format_version));
  }
  const auto list = doc->find("entries");
  if (list == doc->end() || !list->is_array() || list->size() > k_max_entries) {
    return corrupt("no entry list of at most " + std::to_string(k_max_entries));
  }
  for (const auto& item : *list) {
    Entry entry;
    if (!item.is_object() || !item.contains("key") || !item["key"].is_string() || !item.contains("facts") ||
        !item["facts"].is_string() || !item.contains("proven_at") || !item["proven_at"].is_number_integer() ||
        !item.contains("elapsed_ms") || !item["elapsed_ms"].is_number() || !item.contains("files") ||
        !item["files"].is_array()) {
      return corrupt("a malformed entry");
    }
    entry.key = item["key"].get<std::string>();
    entry.facts = item["facts"].get<std::string>();
    entry.proven_at = item["proven_at"].get<std::int64_t>();
    entry.elapsed_ms = item["elapsed_ms"].get<double>();
    for (const auto& file : item["files"]) {
      if (!file.is_array() || file.size() != 7 || !file[0].is_string() || !file[1].is_boolean() ||
          !file[2].is_number_unsigned() || !file[3].is_number_unsigned() || !file[4].is_number_unsigned() ||
          !file[5].is_number_integer() || !file[6].is_number_integer()) {
        return corrupt("a malformed file identity");
      }
      entry.files.emplace_back(file[0].get<std::string>(),
                               FileIdentity{file[1].get<bool>(), file[2].get<std::uint64_t>(),
                                            file[3].get<std::uint64_t>(), file[4].get<std::uint64_t>(),
                                            file[5].get<std::int64_t>(), file[6].get<std::int64_t>()});
    }
    const bool fact = entry.key.find("\nverify ") != std::string::npos;
    if (fact ? !bounded_json::parse_or_error(entry.facts, "fact") : !decode_link_map(entry.facts)) {
      return corrupt(fact ? "an entry whose answer is not JSON" : "an entry whose answer is not a link map");
    }
    auto key = entry.key;
    entries[std::move(key)] = std::move(entry);
  }
  return entries;
}

std::string LoadCache::key_for(const std::string& load_name, const std::vector<std::string>& preloads) const {
  std::string key = m_context + "load " + load_name + "\n";
  for (const auto& preload : preloads) {
    key += "preload " + preload + "\n";
  }
  return key;
}

std::optional<const LoadCache::Entry*> LoadCache::valid_entry(const std::string& key) const {
  const auto found = m_entries.find(key);
  if (found == m_entries.end()) {
    return std::nullopt;
  }
  for (const auto& [path, id] : found->second.files) {
    if (identity_of(path) != id) {
      return std::nullopt;
    }
  }
  return &found->second;
}

std::optional<std::pair<std::string, std::int64_t>> LoadCache::find_fact(const std::string& kind,
                                                                         const std::string& path) {
  if (m_use.mode == CacheMode::off) {
    return std::nullopt;
  }
  const auto entry = valid_entry(m_context + "verify " + kind + " " + path + "\n");
  if (!entry) {
    return std::nullopt;
  }
  ++m_use.facts;
  return std::pair{(*entry)->facts, (*entry)->proven_at};
}

void LoadCache::store_fact(const std::string& kind, const std::string& path,
                           const std::vector<std::string>& also, std::string outcome) {
  if (m_use.mode != CacheMode::read_write) {
    return;
  }
  std::set<std::string> paths(m_default_dirs.begin(), m_default_dirs.end());
  for (const auto& file : also) {
    if (!file.empty() && file.front() == '/') {
      paths.insert(file);
      paths.insert(fs::parent(file));
    }
  }
  const auto real = fs::real_path(path);
  for (const auto& file : {path, real ? *real : path}) {
    if (!file.empty() && file.front() == '/') {
      paths.insert(file);
      paths.insert(fs::parent(file));
    }
  }
  Entry entry;
  entry.key = m_context + "verify " + kind + " " + path + "\n";
  for (const auto& file : paths) {
    entry.files.emplace_back(file, identity_of(file));
  }
  entry.facts = std::move(outcome);
  entry.proven_at = static_cast<std::int64_t>(std::time(nullptr));
  auto key = entry.key;
  m_new[std::move(key)] = std::move(entry);
}

std::optional<CachedLoad> LoadCache::find(const loader::Closure& closure, const std::string& load_name,
                                          const std::vector<std::string>& preloads) {
  if (m_use.mode == CacheMode::off) {
    return std::nullopt;
  }
  const auto found = m_entries.find(key_for(load_name, preloads));
  if (found == m_entries.end()) {
    return std::nullopt;
  }
  const auto& entry = found->second;
  std::set<std::string> proven;
  for (const auto& [path, id] : entry.files) {
    if (identity_of(path) != id) {
      return std::nullopt;
    }
    proven.insert(path);
  }
  // A prediction that now names a file the proof did not see is not answered by it.
  for (const auto& path : files_of(closure, load_name, preloads, nullptr)) {
    if (proven.count(path) == 0) {
      return std::nullopt;
    }
  }
  auto facts = decode_link_map(entry.facts);
  if (!facts) {
    return std::nullopt;
  }
  ++m_use.hits;
  return CachedLoad{std::move(*facts), entry.proven_at, entry.elapsed_ms};
}

void LoadCache::store(const loader::Closure& closure, const std::string& load_name,
                      const std::vector<std::string>& preloads, const LinkMapFacts& facts,
                      double elapsed_ms) {
  if (m_use.mode != CacheMode::read_write) {
    return;
  }
  Entry entry;
  entry.key = key_for(load_name, preloads);
  for (const auto& path : files_of(closure, load_name, preloads, &facts)) {
    entry.files.emplace_back(path, identity_of(path));
  }
  entry.facts = encode(facts);
  entry.proven_at = static_cast<std::int64_t>(std::time(nullptr));
  entry.elapsed_ms = elapsed_ms;
  auto key = entry.key;
  m_new[std::move(key)] = std::move(entry);
}

void LoadCache::save() {
  if (m_use.mode != CacheMode::read_write || m_new.empty()) {
    return;
  }
  // Another run may have written meanwhile: its entries are kept, this run's proofs win.
  auto read = read_entries(m_use.path);
  auto merged = read ? std::move(*read) : std::map<std::string, Entry>{};
  for (auto& [key, entry] : m_new) {
    merged[key] = entry;
  }
  std::vector<const Entry*> newest;
  newest.reserve(merged.size());
  for (const auto& [key, entry] : merged) {
    newest.push_back(&entry);
  }
  std::stable_sort(newest.begin(), newest.end(),
                   [](const Entry* a, const Entry* b) { return a->proven_at > b->proven_at; });
  if (newest.size() > k_max_entries) {
    newest.resize(k_max_entries);
  }
  json entries = json::array();
  for (const auto* entry : newest) {
    entries.push_back(
        entry_json(entry->key, entry->files, entry->facts, entry->proven_at, entry->elapsed_ms));
  }
  const json doc = {{"format", k_format}, {"version", k_format_version}, {"entries", std::move(entries)}};
  const auto text = doc.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
  if (text.size() > k_max_bytes) {
    m_use.problem = "not written: " + std::to_string(text.size()) + " bytes is over the bound";
    return;
  }
  output::OutputFileOptions options;
  options.mode = 0600;
  options.private_content = true;
  if (auto written = output::write_output_file(m_use.path, text, options); !written) {
    m_use.problem = "not written: " + written.error().message;
    return;
  }
  m_use.stored = m_new.size();
}

} // namespace cudadiag::linkage
