#pragma once
// What a computation read from the file system, kept so that its answer can be reused while none of
// it changed (quick_check()'s kept answer, issue 52). Every function in src that looks at a path
// (stat, open, opendir, readlink, realpath, glob) calls note_path() first; while a ReadRecorder is
// alive anywhere in the process, the path is added to every live recorder (a superset of what each
// computation read: extra paths only make a kept answer expire sooner, never answer stale).
//
// A ReadSnapshot holds the identity (lstat: device, inode, mode, owner, size, mtime, ctime; for a
// symbolic link also the stat of its target) of every recorded path and every directory above it.
// A path that does not exist is covered by its nearest existing ancestor (a directory's mtime and
// ctime change when an entry is added, removed or renamed). unchanged() compares them with stats
// alone, reading nothing.

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::fs {

namespace detail {
extern std::atomic<int> g_live_recorders;
void note_path_recorded(std::string_view path);
void note_unrecordable();
} // namespace detail

// Called with every path a file-system query or read is about to look at: costs one atomic load
// while no recorder is alive.
inline void note_path(std::string_view path) {
  if (detail::g_live_recorders.load(std::memory_order_acquire) != 0) {
    detail::note_path_recorded(path);
  }
}
// Called where what was read cannot be named by paths (a glob whose directories hold wildcards):
// the live recorders' snapshots are then not kept.
inline void note_unrecordable_read() {
  if (detail::g_live_recorders.load(std::memory_order_acquire) != 0) {
    detail::note_unrecordable();
  }
}

// The identity of one path as lstat (and, for a link, stat) gave it.
struct PathIdentity {
  int error = 0; // errno of lstat, 0 when it succeeded
  std::uint64_t device = 0;
  std::uint64_t inode = 0;
  std::uint32_t mode = 0;
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
  std::uint64_t size = 0;
  std::int64_t mtime_ns = 0;
  std::int64_t ctime_ns = 0;
  bool operator==(const PathIdentity&) const = default;
};

// stat(2) of `path` (symbolic links followed) as a PathIdentity; `error` is set when it fails.
PathIdentity followed_identity(const std::string& path);

// Whether a file with this identity may still change without its mtime or ctime changing (they
// are within the file system's timestamp granularity of `now_ns`, CLOCK_REALTIME): an answer read
// from it then is not kept.
bool recently_changed(const PathIdentity& identity, std::int64_t now_ns);

class ReadSnapshot {
public:
  // Whether every path still has the identity it had when the snapshot was taken (stats only).
  [[nodiscard]] bool unchanged() const;
  [[nodiscard]] std::size_t size() const { return m_entries.size(); }

private:
  friend class ReadRecorder;
  struct Entry {
    std::string path;
    PathIdentity self;                  // lstat
    std::optional<PathIdentity> target; // stat, for a symbolic link
  };
  std::vector<Entry> m_entries;
};

// Records the paths read from construction to finish(), in this thread and every other (the helper
// threads of a parallel section included).
class ReadRecorder {
public:
  ReadRecorder();
  ~ReadRecorder();
  ReadRecorder(const ReadRecorder&) = delete;
  ReadRecorder& operator=(const ReadRecorder&) = delete;

  // Stops recording and takes the snapshot; nullopt when it cannot be trusted: a read that paths do
  // not name, a path under /proc or /sys (whose files change without changing their stat), or a path
  // changed less than 2 s before the recorder started (a change in the same timestamp tick as the
  // read could leave the identity as it was: git's "racy" files).
  std::optional<ReadSnapshot> finish();

private:
  friend void detail::note_path_recorded(std::string_view path);
  friend void detail::note_unrecordable();
  std::vector<std::string> m_paths;
  bool m_unrecordable = false;
  bool m_finished = false;
  std::int64_t m_started_ns = 0; // CLOCK_REALTIME at construction
};

} // namespace cudadiag::fs
