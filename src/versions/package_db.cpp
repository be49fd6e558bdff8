#include "versions/package_db.hpp"

#include "core/filesystem.hpp"
#include "core/mapped_file.hpp"
#include "core/once_flag.hpp"
#include "core/parallel.hpp"
#include "core/timeline.hpp"
#include "versions/sqlite_api.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

namespace cudadiag::versions {
namespace {

constexpr std::size_t k_list_max_bytes = 16u << 20;
constexpr std::size_t k_status_max_bytes = 64u << 20;
constexpr std::size_t k_rpm_header_max_bytes = 16u << 20;
constexpr std::size_t k_max_lists = 4096; // hinted .list files read at most

// Package names that can ship what the catalog finds (NVIDIA's apt/yum repositories, Debian's and
// Fedora's own packages of cuDNN/NCCL/NVSHMEM).
constexpr std::array<std::string_view, 20> k_package_hints = {
    "cuda",   "nvidia",    "cudnn", "nccl",   "cublas",   "cufft", "curand",  "cusolver", "cusparse", "npp",
    "nvjpeg", "nvjitlink", "nvrtc", "cufile", "cutensor", "cudss", "nvshmem", "nsight",   "libnv",    "nvvm"};

bool hinted(std::string_view package) {
  for (const auto hint : k_package_hints) {
    if (package.find(hint) != std::string_view::npos) {
      return true;
    }
  }
  return false;
}

template <class Visit> void for_each_line(std::string_view text, Visit&& visit) {
  while (!text.empty()) {
    const auto end = text.find('\n');
    visit(text.substr(0, end));
    if (end == std::string_view::npos) {
      return;
    }
    text.remove_prefix(end + 1);
  }
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t' || text.front() == '\r')) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

struct Stanza {
  std::string version;
  std::string status;
  std::string architecture;
};

// The stanza that starts at `at` in a dpkg status file's text, when it is installed, has a version
// and is for `arch` (any, when empty).
std::optional<Stanza> installed_stanza_at(std::string_view status, std::size_t at, std::string_view arch) {
  const auto end = status.find("\n\n", at);
  const auto block = status.substr(at, end == std::string_view::npos ? std::string_view::npos : end - at);
  Stanza stanza;
  for_each_line(block, [&](std::string_view line) {
    const auto colon = line.find(':');
    if (colon == std::string_view::npos || line.front() == ' ') {
      return;
    }
    const auto key = line.substr(0, colon);
    const auto value = std::string(trim(line.substr(colon + 1)));
    if (key == "Version") {
      stanza.version = value;
    } else if (key == "Status") {
      stanza.status = value;
    } else if (key == "Architecture") {
      stanza.architecture = value;
    }
  });
  const bool installed = stanza.status.ends_with(" installed");
  // An arch-qualified list (libfoo:amd64.list) belongs to the stanza of that architecture.
  const bool same_arch = arch.empty() || stanza.architecture.empty() || stanza.architecture == arch;
  if (installed && !stanza.version.empty() && same_arch) {
    return stanza;
  }
  return std::nullopt;
}

// The stanza of `name` in a dpkg status file's text (the installed one for `arch` when given),
// looked for among `starts` (where the stanzas of that name begin).
std::optional<Stanza> find_stanza(std::string_view status, std::span<const std::size_t> starts,
                                  std::string_view arch) {
  for (const auto at : starts) {
    if (auto stanza = installed_stanza_at(status, at, arch)) {
      return stanza;
    }
  }
  return std::nullopt;
}

// Calls visit(package, architecture, start) for every stanza of a dpkg status file's text whose
// package name `wanted` accepts, in file order (architecture empty when the stanza has none; start:
// the offset of its "Package:" line). A "Package:"
// line starts a stanza only at the start of a line; continuation lines (" Package: ...") are
// description text. The other stanzas are skipped unread: a status file holds thousands.
template <class Wanted, class Visit>
void for_each_package(std::string_view status, Wanted&& wanted, Visit&& visit) {
  constexpr std::string_view k_package = "Package: ";
  constexpr std::string_view k_next_package = "\nPackage: ";
  constexpr std::string_view k_architecture = "\nArchitecture: ";
  std::size_t at = status.starts_with(k_package) ? 0 : status.find(k_next_package);
  while (at != std::string_view::npos) {
    const std::size_t name_start = at + (status[at] == '\n' ? 1 : 0) + k_package.size();
    const auto name_end = std::min(status.find('\n', name_start), status.size());
    const auto name = trim(status.substr(name_start, name_end - name_start));
    if (wanted(name)) {
      const auto stanza_end = std::min(status.find("\n\n", name_end), status.size());
      const auto stanza = status.substr(name_end, stanza_end - name_end);
      std::string_view architecture;
      if (const auto field = stanza.find(k_architecture); field != std::string_view::npos) {
        const auto value = stanza.substr(field + k_architecture.size());
        architecture = trim(value.substr(0, value.find('\n')));
      }
      visit(name, architecture, name_start - k_package.size());
    }
    at = status.find(k_next_package, name_end);
  }
}

// The architecture dpkg names this machine's own packages with (the multi-arch suffix of their
// .list files): Debian's name for the architecture this program was built for.
std::string_view dpkg_native_architecture() {
#if defined(__x86_64__)
  return "amd64";
#elif defined(__aarch64__)
  return "arm64";
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  return "ppc64el";
#else
  return {};
#endif
}

// --- RPM headers ----------------------------------------------------------------------------------

std::uint32_t be32(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

// An RPM header blob (as rpmdb.sqlite stores it: il, dl, il index entries, dl bytes of data;
// optionally after the 8-byte header magic), read with every offset checked.
class RpmHeader {
public:
  static std::optional<RpmHeader> parse(const unsigned char* data, std::size_t size) {
    if (size >= 8 && data[0] == 0x8e && data[1] == 0xad && data[2] == 0xe8 && data[3] == 0x01) {
      data += 8;
      size -= 8;
    }
    if (size < 8) {
      return std::nullopt;
    }
    const auto il = be32(data);
    const auto dl = be32(data + 4);
    if (il > 100000 || std::uint64_t{il} * 16 + dl + 8 > size) {
      return std::nullopt;
    }
    return RpmHeader{data + 8, il, data + 8 + std::size_t{il} * 16, dl};
  }

  // The strings of a STRING (6), I18NSTRING (9) or STRING_ARRAY (8) tag.
  [[nodiscard]] std::vector<std::string_view> strings(std::uint32_t tag) const {
    const auto* entry = find(tag);
    if (entry == nullptr) {
      return {};
    }
    const auto type = be32(entry + 4);
    const auto offset = be32(entry + 8);
    const auto count = be32(entry + 12);
    if ((type != 6 && type != 8 && type != 9) || offset >= m_dl) {
      return {};
    }
    std::vector<std::string_view> out;
    std::size_t at = offset;
    const auto wanted = type == 6 ? 1U : count;
    for (std::uint32_t i = 0; i < wanted && at < m_dl; ++i) {
      const auto* start = reinterpret_cast<const char*>(m_store + at);
      const auto* end = static_cast<const char*>(std::memchr(start, '\0', m_dl - at));
      if (end == nullptr) {
        break;
      }
      out.emplace_back(start, static_cast<std::size_t>(end - start));
      at += out.back().size() + 1;
    }
    return out;
  }

  // The values of an INT32 (4) tag.
  [[nodiscard]] std::vector<std::uint32_t> ints(std::uint32_t tag) const {
    const auto* entry = find(tag);
    if (entry == nullptr || be32(entry + 4) != 4) {
      return {};
    }
    const auto offset = be32(entry + 8);
    const auto count = be32(entry + 12);
    if (offset % 4 != 0 || std::uint64_t{offset} + std::uint64_t{count} * 4 > m_dl) {
      return {};
    }
    std::vector<std::uint32_t> out(count);
    for (std::uint32_t i = 0; i < count; ++i) {
      out[i] = be32(m_store + offset + 4 * i);
    }
    return out;
  }

private:
  RpmHeader(const unsigned char* index, std::uint32_t il, const unsigned char* store, std::uint32_t dl)
      : m_index(index), m_il(il), m_store(store), m_dl(dl) {}

  [[nodiscard]] const unsigned char* find(std::uint32_t tag) const {
    for (std::uint32_t i = 0; i < m_il; ++i) {
      if (be32(m_index + 16 * i) == tag) {
        return m_index + 16 * i;
      }
    }
    return nullptr;
  }

  const unsigned char* m_index;
  std::uint32_t m_il;
  const unsigned char* m_store;
  std::uint32_t m_dl;
};

constexpr std::uint32_t k_tag_name = 1000;
constexpr std::uint32_t k_tag_version = 1001;
constexpr std::uint32_t k_tag_release = 1002;
constexpr std::uint32_t k_tag_dirindexes = 1116;
constexpr std::uint32_t k_tag_basenames = 1117;
constexpr std::uint32_t k_tag_dirnames = 1118;

// The paths one package list names: open addressing over views into the list's text, so that the
// tens of thousands of paths a CUDA installation's lists hold cost no allocation each (a node-based
// map spent more time allocating and chasing nodes than reading the files).
class PathIndex {
public:
  // Room for `count` paths without growing.
  void reserve(std::size_t count) {
    if (count * 2 > m_slots.size()) {
      rehash(std::bit_ceil(std::max<std::size_t>(16, count * 2)));
    }
  }
  // Adds `path` (a view that must outlive the index) unless it is there.
  void insert(std::string_view path) {
    if ((m_used + 1) * 2 > m_slots.size()) {
      rehash(std::max<std::size_t>(16, m_slots.size() * 2));
    }
    auto& slot = probe(path);
    if (slot.data == nullptr) {
      slot = Slot{path.data(), path.size()};
      ++m_used;
    }
  }
  [[nodiscard]] bool contains(std::string_view path) const {
    return !m_slots.empty() && const_cast<PathIndex*>(this)->probe(path).data != nullptr;
  }

private:
  struct Slot {
    const char* data = nullptr;
    std::size_t size = 0;
  };

  // The paths of one package share long prefixes: the hash mixes the length and the last 16 bytes.
  static std::uint64_t hash(std::string_view path) {
    std::uint64_t h = (path.size() + 1) * 0x9E3779B97F4A7C15ULL;
    if (path.size() >= 16) {
      std::uint64_t words[2];
      std::memcpy(words, path.data() + path.size() - 16, 16);
      h = (h ^ words[0]) * 0xFF51AFD7ED558CCDULL;
      h = (h ^ words[1] ^ (h >> 29)) * 0xC4CEB9FE1A85EC53ULL;
    } else {
      for (const char c : path) {
        h = (h ^ static_cast<unsigned char>(c)) * 0x100000001B3ULL;
      }
    }
    return h ^ (h >> 32);
  }
  Slot& probe(std::string_view path) {
    const std::size_t mask = m_slots.size() - 1;
    for (std::size_t at = hash(path) & mask;; at = (at + 1) & mask) {
      auto& slot = m_slots[at];
      if (slot.data == nullptr ||
          (slot.size == path.size() && std::memcmp(slot.data, path.data(), path.size()) == 0)) {
        return slot;
      }
    }
  }
  void rehash(std::size_t size) {
    auto old = std::exchange(m_slots, std::vector<Slot>(size));
    for (const auto& slot : old) {
      if (slot.data != nullptr) {
        probe(std::string_view(slot.data, slot.size)) = slot;
      }
    }
  }

  std::vector<Slot> m_slots; // a power of two in size, at most half full
  std::size_t m_used = 0;
};

struct SqliteCloser {
  const SqliteApi* api = nullptr;
  void operator()(sqlite3* db) const { api->close_v2(db); }
};
struct StatementCloser {
  const SqliteApi* api = nullptr;
  void operator()(sqlite3_stmt* statement) const { api->finalize(statement); }
};

} // namespace

std::string upstream_version(std::string_view version) {
  if (const auto colon = version.find(':'); colon != std::string_view::npos) {
    version.remove_prefix(colon + 1);
  }
  if (const auto dash = version.rfind('-'); dash != std::string_view::npos) {
    version = version.substr(0, dash);
  }
  return std::string(version);
}

struct PackageDatabase::State {
  OnceFlag dpkg_once;
  OnceFlag status_once;
  OnceFlag rpm_once;
  // The hinted packages' .list files in name order, mapped whole, each with the index of its paths
  // (views into the mapping) and its owner, "name[:arch]".
  std::vector<fs::MappedFile> lists;
  std::vector<PathIndex> list_paths;
  std::vector<std::string> list_owners;
  fs::MappedFile status_file;
  std::string_view status; // status_file's text
  bool status_read = false;
  // Where the hinted packages' stanzas start in `status` (a package has one per architecture),
  // found while their .list names are gathered: an owner's version is then read without a search
  // through the whole file.
  std::unordered_map<std::string_view, std::vector<std::size_t>> stanza_starts;
  const SqliteApi* sql = nullptr; // set with rpm and rpm_query
  std::unique_ptr<sqlite3, SqliteCloser> rpm;
  std::unique_ptr<sqlite3_stmt, StatementCloser> rpm_query;
  std::mutex rpm_mutex;
  std::mutex problems_mutex;
  std::vector<std::string> problems;

  void problem(std::string line) {
    const std::lock_guard lock(problems_mutex);
    problems.push_back(std::move(line));
  }
};

PackageDatabase::PackageDatabase(PackageDbPaths paths)
    : m_paths(std::move(paths)), m_state(std::make_shared<State>()) {}

std::vector<std::string> PackageDatabase::problems() const {
  const std::lock_guard lock(m_state->problems_mutex);
  return m_state->problems;
}

void PackageDatabase::read_dpkg_lists() const {
  auto& state = *m_state;
  state.dpkg_once.call([&] {
    read_dpkg_status();
    if (!state.status_read) {
      return; // no dpkg here, or a status file that cannot be read (a problem line says why)
    }
    // The .list files of the CUDA-like packages the status file names, in name order: a few dozen
    // of the thousands of files in info/, found without listing it.
    const auto info = fs::join(m_paths.dpkg_dir, "info");
    std::vector<std::string> names;
    for_each_package(state.status, hinted,
                     [&](std::string_view package, std::string_view architecture, std::size_t start) {
                       state.stanza_starts[package].push_back(start);
                       names.push_back(std::string(package) + ".list");
                       // A Multi-Arch: same package's list carries its architecture ("libnccl2:amd64.list").
                       for (const auto arch : {architecture, dpkg_native_architecture()}) {
                         if (!arch.empty() && arch != "all") {
                           names.push_back(std::string(package) + ":" + std::string(arch) + ".list");
                         }
                       }
                     });
    std::sort(names.begin(), names.end());
    names.erase(std::unique(names.begin(), names.end()), names.end());
    for (const auto& name : names) {
      const auto file = fs::join(info, name);
      auto list = fs::map_file(file, k_list_max_bytes);
      if (!list) {
        continue; // not this package's list name
      }
      if (!list->complete()) {
        state.problem("dpkg: " + file + " is over 16 MiB; not read");
        continue;
      }
      if (state.lists.size() == k_max_lists) {
        state.problem("dpkg: more than " + std::to_string(k_max_lists) +
                      " CUDA-like .list files; the rest not read");
        break;
      }
      state.list_owners.push_back(name.substr(0, name.size() - 5));
      state.lists.push_back(std::move(*list));
    }
    // Each list indexed on its own, in parallel: a CUDA installation's lists hold tens of thousands
    // of paths (nsight-compute's alone thousands).
    state.list_paths.resize(state.lists.size());
    parallel_for_each_index(state.lists.size(), parallel_threads(state.lists.size()), [&](std::size_t i) {
      const auto text = state.lists[i].text();
      auto& paths = state.list_paths[i];
      paths.reserve(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
      for_each_line(text, [&](std::string_view line) {
        if (!line.empty() && line.front() == '/') {
          paths.insert(line);
        }
      });
    });
  });
}

void PackageDatabase::read_dpkg_status() const {
  auto& state = *m_state;
  state.status_once.call([&] {
    const auto file = fs::join(m_paths.dpkg_dir, "status");
    if (!fs::exists(file)) {
      return; // not a dpkg system
    }
    auto mapped = fs::map_file(file, k_status_max_bytes);
    if (!mapped) {
      state.problem("dpkg: " + file + ": " + mapped.error().message);
      return;
    }
    if (!mapped->complete()) {
      state.problem("dpkg: " + file + " is over 64 MiB; not read");
      return;
    }
    state.status_file = std::move(*mapped);
    state.status = state.status_file.text();
    state.status_read = true;
  });
}

void PackageDatabase::open_rpm() const {
  auto& state = *m_state;
  state.rpm_once.call([&] {
    if (!fs::exists(m_paths.rpm_db)) {
      return;
    }
    const auto api = sqlite_api();
    if (!api) {
      state.problem("rpm: " + m_paths.rpm_db + ": not read: " + api.error().message);
      return;
    }
    const SqliteApi* sql = *api;
    sqlite3* raw = nullptr;
    const auto uri = "file:" + m_paths.rpm_db + "?mode=ro";
    const int opened = sql->open_v2(uri.c_str(), &raw, sqlite::k_open_readonly | sqlite::k_open_uri, nullptr);
    std::unique_ptr<sqlite3, SqliteCloser> db(raw, SqliteCloser{sql});
    if (opened != sqlite::k_ok) {
      state.problem("rpm: " + m_paths.rpm_db + ": " + (raw ? sql->errmsg(raw) : sql->errstr(opened)));
      return;
    }
    sql->busy_timeout(db.get(), 100);
    sqlite3_stmt* statement = nullptr;
    constexpr const char* k_query =
        "SELECT p.blob FROM Basenames b JOIN Packages p ON p.hnum = b.hnum WHERE b.key = ?1 LIMIT 64";
    if (sql->prepare_v2(db.get(), k_query, -1, &statement, nullptr) != sqlite::k_ok) {
      state.problem("rpm: " + m_paths.rpm_db + ": " + sql->errmsg(db.get()));
      return;
    }
    state.sql = sql;
    state.rpm_query = std::unique_ptr<sqlite3_stmt, StatementCloser>(statement, StatementCloser{sql});
    state.rpm = std::move(db);
  });
}

void PackageDatabase::read_ahead() const {
  read_dpkg_lists(); // the bulk: one .list per CUDA package, tens of thousands of lines
}

bool PackageDatabase::lists_read() const {
  return m_state->dpkg_once.done();
}

std::optional<FoundVersion>
PackageDatabase::version_of_file(const std::string& path, const std::optional<std::string>& realpath) const {
  auto& state = *m_state;
  std::vector<std::string> paths{path};
  if (realpath && *realpath != path) {
    paths.push_back(*realpath);
  }
  // Debian.
  const timeline::Span span("dpkg_lookup", path);
  read_dpkg_lists();
  for (const auto& candidate : paths) {
    // The first list (in name order) that names the file owns it.
    const auto owner = std::find_if(state.list_paths.begin(), state.list_paths.end(),
                                    [&](const PathIndex& listed) { return listed.contains(candidate); });
    if (owner == state.list_paths.end()) {
      continue;
    }
    const auto& key = state.list_owners[static_cast<std::size_t>(owner - state.list_paths.begin())];
    const auto colon = key.find(':');
    const auto name = std::string_view(key).substr(0, colon);
    const auto arch =
        colon == std::string::npos ? std::string_view{} : std::string_view(key).substr(colon + 1);
    const auto starts = state.stanza_starts.find(name);
    const auto stanza =
        starts == state.stanza_starts.end() ? std::nullopt : find_stanza(state.status, starts->second, arch);
    if (!stanza) {
      state.problem("dpkg: " + std::string(name) + " lists " + candidate +
                    " but has no installed stanza in the status file");
      return std::nullopt;
    }
    auto version = upstream_version(stanza->version);
    if (!is_dotted_digits(version)) {
      return std::nullopt;
    }
    return FoundVersion{std::move(version), VersionSource::dpkg_status,
                        std::string(name) + " " + stanza->version + " (" +
                            fs::join(m_paths.dpkg_dir, "status") + ")"};
  }

  // RPM.
  open_rpm();
  if (!state.rpm_query) {
    return std::nullopt;
  }
  const std::lock_guard lock(state.rpm_mutex);
  for (const auto& candidate : paths) {
    const auto dir = fs::parent(candidate) + "/";
    const auto base = fs::basename(candidate);
    auto* query = state.rpm_query.get();
    const SqliteApi& sql = *state.sql;
    sql.reset(query);
    sql.bind_text(query, 1, base.c_str(), static_cast<int>(base.size()), sqlite::transient());
    while (true) {
      const int step = sql.step(query);
      if (step != sqlite::k_row) {
        if (step != sqlite::k_done) {
          state.problem("rpm: " + m_paths.rpm_db + ": " + sql.errmsg(state.rpm.get()));
        }
        break;
      }
      const auto size = static_cast<std::size_t>(sql.column_bytes(query, 0));
      const auto* blob = static_cast<const unsigned char*>(sql.column_blob(query, 0));
      if (blob == nullptr || size > k_rpm_header_max_bytes) {
        continue;
      }
      const auto header = RpmHeader::parse(blob, size);
      if (!header) {
        state.problem("rpm: a header for " + base + " is malformed");
        continue;
      }
      // The file must be this package's: basename i with dirnames[dirindexes[i]] == dir.
      const auto basenames = header->strings(k_tag_basenames);
      const auto dirnames = header->strings(k_tag_dirnames);
      const auto indexes = header->ints(k_tag_dirindexes);
      bool owns = false;
      for (std::size_t i = 0; i < basenames.size() && i < indexes.size() && !owns; ++i) {
        owns = basenames[i] == base && indexes[i] < dirnames.size() && dirnames[indexes[i]] == dir;
      }
      const auto name = header->strings(k_tag_name);
      const auto version = header->strings(k_tag_version);
      const auto release = header->strings(k_tag_release);
      if (!owns || name.empty() || version.empty() || !is_dotted_digits(version.front())) {
        continue;
      }
      const std::string full =
          std::string(version.front()) + (release.empty() ? "" : "-" + std::string(release.front()));
      return FoundVersion{std::string(version.front()), VersionSource::rpm_db,
                          std::string(name.front()) + " " + full + " (" + m_paths.rpm_db + ")"};
    }
  }
  return std::nullopt;
}

} // namespace cudadiag::versions
