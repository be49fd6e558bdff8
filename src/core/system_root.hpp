#pragma once
// The system a pipeline run reads: this machine ("/"), or a directory that holds another system's
// files (--root DIR, --image REF). Every function in src that looks at a path (the ones that call
// fs::note_path) opens HostPath(path) instead of the path itself: the path is the one the system
// names (an ld.so.cache entry, a RUNPATH, LD_LIBRARY_PATH, a symbolic link's target), HostPath is
// where that file lies on this machine. Under a root, every component is resolved inside it as the
// kernel would after chroot(2): an absolute link target starts again at the root, ".." never climbs
// above it, and the path handed to the system call holds no symbolic link (the last component's
// excepted when it is not followed), so nothing outside the root is ever read.
//
// The root is the process's, for the length of one run: a RootScope installs it and holds it alone;
// runs on this machine take RootScope{""}, which many hold together. So a run under a root never
// overlaps another run. Known limit: a file-system read made outside any run (the API's option
// checks, `inspect`) while another thread's run under a root is active is read under that root too.

#include <memory>
#include <string>
#include <string_view>

namespace cudadiag::fs {

// The directory the running pipeline reads under (a real, absolute path without a trailing slash),
// "" when it reads this machine.
const std::string& system_root();
inline bool under_root() {
  return !system_root().empty();
}

// Installs `root` ("" = this machine) for the scope's lifetime. A scope with a root waits for every
// other scope to end and keeps others out until it ends; scopes without one only wait for it.
// `root` must be a real directory path (fs::real_path's answer).
class RootScope {
public:
  explicit RootScope(std::string root);
  ~RootScope();
  RootScope(const RootScope&) = delete;
  RootScope& operator=(const RootScope&) = delete;

private:
  struct State;
  std::unique_ptr<State> m_state;
};

enum class FollowLast { yes, no };

// Where the system's `path` lies on this machine: `path` itself when there is no root; else the
// root-resolved path described above ("" when resolving it meets more than 40 symbolic links: no
// file, as ELOOP). A relative path is taken from the root's "/".
class HostPath {
public:
  explicit HostPath(const std::string& path, FollowLast follow = FollowLast::yes);
  [[nodiscard]] const char* c_str() const { return m_owned ? m_resolved.c_str() : m_path->c_str(); }
  [[nodiscard]] const std::string& str() const { return m_owned ? m_resolved : *m_path; }

private:
  const std::string* m_path;
  std::string m_resolved;
  bool m_owned = false;
};

// The system's name for a path on this machine: `host` less the root ("/" for the root itself);
// `host` unchanged when there is no root or it lies outside it.
std::string system_path(std::string_view host);

// Resolves `path` inside `root` (the rule above) without installing anything: what HostPath does.
std::string resolve_in_root(const std::string& root, std::string_view path, FollowLast follow);

} // namespace cudadiag::fs
