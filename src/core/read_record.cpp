#include "core/read_record.hpp"

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <mutex>
#include <sys/stat.h>
#include <unordered_set>

namespace cudadiag::fs {
namespace detail {

std::atomic<int> g_live_recorders{0};

namespace {
std::mutex& recorders_mutex() {
  static std::mutex mutex;
  return mutex;
}
std::vector<ReadRecorder*>& live_recorders() {
  static std::vector<ReadRecorder*> recorders;
  return recorders;
}
} // namespace

} // namespace detail

namespace {

constexpr std::int64_t k_racy_ns = 2'000'000'000; // timestamps of 1 s granularity (ext3, NFS) and less

std::int64_t nanoseconds(const timespec& time) {
  return static_cast<std::int64_t>(time.tv_sec) * 1'000'000'000 + time.tv_nsec;
}

PathIdentity identity_of(int result, const struct stat& st) {
  PathIdentity out;
  if (result != 0) {
    out.error = errno;
    return out;
  }
  out.device = st.st_dev;
  out.inode = st.st_ino;
  out.mode = st.st_mode;
  out.uid = st.st_uid;
  out.gid = st.st_gid;
  out.size = static_cast<std::uint64_t>(st.st_size);
  out.mtime_ns = nanoseconds(st.st_mtim);
  out.ctime_ns = nanoseconds(st.st_ctim);
  return out;
}

PathIdentity lstat_identity(const std::string& path) {
  struct stat st {};
  const int result = ::lstat(path.c_str(), &st);
  return identity_of(result, st);
}

PathIdentity stat_identity(const std::string& path) {
  struct stat st {};
  const int result = ::stat(path.c_str(), &st);
  return identity_of(result, st);
}

// `path` and every directory above it ("/a/b/c": "/", "/a", "/a/b", "/a/b/c"; "a/b": ".", "a", "a/b").
void add_with_ancestors(std::string_view path, std::unordered_set<std::string>& out) {
  if (path.empty()) {
    return;
  }
  out.emplace(path.front() == '/' ? "/" : ".");
  for (std::size_t at = path.find('/', 1); at != std::string_view::npos; at = path.find('/', at + 1)) {
    out.emplace(path.substr(0, at));
  }
  out.emplace(path);
}

bool pseudo_file_system(std::string_view path) {
  return path == "/proc" || path == "/sys" || path.starts_with("/proc/") || path.starts_with("/sys/");
}

bool racy(const PathIdentity& identity, std::int64_t started_ns) {
  return identity.error == 0 &&
         (identity.mtime_ns >= started_ns - k_racy_ns || identity.ctime_ns >= started_ns - k_racy_ns);
}

} // namespace

void detail::note_path_recorded(std::string_view path) {
  const std::lock_guard lock(recorders_mutex());
  for (auto* recorder : live_recorders()) {
    recorder->m_paths.emplace_back(path);
  }
}

void detail::note_unrecordable() {
  const std::lock_guard lock(recorders_mutex());
  for (auto* recorder : live_recorders()) {
    recorder->m_unrecordable = true;
  }
}

ReadRecorder::ReadRecorder() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  m_started_ns = nanoseconds(now);
  const std::lock_guard lock(detail::recorders_mutex());
  detail::live_recorders().push_back(this);
  detail::g_live_recorders.fetch_add(1, std::memory_order_acq_rel);
}

ReadRecorder::~ReadRecorder() {
  if (!m_finished) {
    (void)finish();
  }
}

std::optional<ReadSnapshot> ReadRecorder::finish() {
  {
    const std::lock_guard lock(detail::recorders_mutex());
    if (m_finished) {
      return std::nullopt;
    }
    m_finished = true;
    auto& live = detail::live_recorders();
    live.erase(std::remove(live.begin(), live.end(), this), live.end());
    detail::g_live_recorders.fetch_sub(1, std::memory_order_acq_rel);
  }
  if (m_unrecordable) {
    return std::nullopt;
  }
  std::unordered_set<std::string> paths;
  for (const auto& path : m_paths) {
    if (pseudo_file_system(path)) {
      return std::nullopt;
    }
    add_with_ancestors(path, paths);
  }
  std::vector<std::string> sorted(paths.begin(), paths.end());
  std::sort(sorted.begin(), sorted.end());
  ReadSnapshot snapshot;
  snapshot.m_entries.reserve(sorted.size());
  for (auto& path : sorted) {
    auto self = lstat_identity(path);
    // A missing path is covered by its nearest existing ancestor, which is in the list too.
    if (self.error == ENOENT || self.error == ENOTDIR) {
      continue;
    }
    std::optional<PathIdentity> target;
    if (self.error == 0 && S_ISLNK(self.mode)) {
      target = stat_identity(path);
      if (racy(*target, m_started_ns)) {
        return std::nullopt;
      }
    }
    if (racy(self, m_started_ns)) {
      return std::nullopt;
    }
    snapshot.m_entries.push_back({std::move(path), self, target});
  }
  return snapshot;
}

bool ReadSnapshot::unchanged() const {
  return std::all_of(m_entries.begin(), m_entries.end(), [](const Entry& entry) {
    const auto self = lstat_identity(entry.path);
    if (!(self == entry.self)) {
      return false;
    }
    return !entry.target || stat_identity(entry.path) == *entry.target;
  });
}

PathIdentity followed_identity(const std::string& path) {
  return stat_identity(path);
}

bool recently_changed(const PathIdentity& identity, std::int64_t now_ns) {
  return racy(identity, now_ns);
}

} // namespace cudadiag::fs
