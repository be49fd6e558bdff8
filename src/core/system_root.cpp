#include "core/system_root.hpp"

#include "core/read_record.hpp"

#include <unistd.h>

#include <atomic>
#include <deque>
#include <mutex>
#include <shared_mutex>
#include <sys/stat.h>
#include <unordered_map>
#include <vector>

namespace cudadiag::fs {
namespace {

constexpr int k_max_links = 40; // the kernel's limit on symbolic links in one lookup

const std::string k_no_root;

// Runs share it on this machine; a run under a root holds it alone.
std::shared_mutex& run_lock() {
  static std::shared_mutex lock;
  return lock;
}

// The installed root, and the directories resolved in it so far (system name -> host path).
struct Installed {
  std::string root;
  std::shared_mutex cache_lock;
  std::unordered_map<std::string, std::string> directories;
};
std::atomic<Installed*> g_installed{nullptr};

void split_into(std::string_view path, std::deque<std::string>& out, bool front) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= path.size()) {
    const auto end = std::min(path.find('/', start), path.size());
    if (end > start) {
      parts.emplace_back(path.substr(start, end - start));
    }
    start = end + 1;
  }
  if (front) {
    out.insert(out.begin(), parts.begin(), parts.end());
  } else {
    out.insert(out.end(), parts.begin(), parts.end());
  }
}

std::string joined(const std::string& root, const std::vector<std::string>& done) {
  std::string out = root;
  for (const auto& part : done) {
    out += '/';
    out += part;
  }
  return out.empty() ? "/" : out;
}

} // namespace

std::string resolve_in_root(const std::string& root, std::string_view path, FollowLast follow) {
  std::deque<std::string> pending;
  split_into(path, pending, false);
  std::vector<std::string> done;
  int links = 0;
  while (!pending.empty()) {
    auto part = std::move(pending.front());
    pending.pop_front();
    if (part == ".") {
      continue;
    }
    if (part == "..") {
      if (!done.empty()) {
        done.pop_back();
      }
      continue;
    }
    done.push_back(std::move(part));
    if (pending.empty() && follow == FollowLast::no) {
      break;
    }
    const auto host = joined(root, done);
    struct stat st {};
    note_path(host);
    if (::lstat(host.c_str(), &st) != 0) {
      // A missing directory: the rest is appended as written, so that the path names no file
      // (as the kernel's ENOENT) and a later ".." cannot step back out of it.
      std::string rest = host;
      for (const auto& left : pending) {
        rest += "/" + left;
      }
      return rest;
    }
    if (!S_ISLNK(st.st_mode)) {
      continue;
    }
    if (++links > k_max_links) {
      return {};
    }
    std::string target(static_cast<std::size_t>(st.st_size > 0 ? st.st_size : 255) + 1, '\0');
    note_path(host);
    const auto length = ::readlink(host.c_str(), target.data(), target.size());
    if (length < 0 || static_cast<std::size_t>(length) >= target.size()) {
      return {};
    }
    target.resize(static_cast<std::size_t>(length));
    done.pop_back();
    if (!target.empty() && target.front() == '/') {
      done.clear();
    }
    split_into(target, pending, true);
  }
  return joined(root, done);
}

const std::string& system_root() {
  const auto* installed = g_installed.load(std::memory_order_acquire);
  return installed == nullptr ? k_no_root : installed->root;
}

struct RootScope::State {
  std::shared_lock<std::shared_mutex> shared;
  std::unique_lock<std::shared_mutex> alone;
  std::unique_ptr<Installed> installed;
};

RootScope::RootScope(std::string root) : m_state(std::make_unique<State>()) {
  while (root.size() > 1 && root.back() == '/') {
    root.pop_back();
  }
  if (root.empty() || root == "/") {
    m_state->shared = std::shared_lock(run_lock());
    return;
  }
  m_state->alone = std::unique_lock(run_lock());
  m_state->installed = std::make_unique<Installed>();
  m_state->installed->root = std::move(root);
  g_installed.store(m_state->installed.get(), std::memory_order_release);
}

RootScope::~RootScope() {
  if (m_state->installed) {
    g_installed.store(nullptr, std::memory_order_release);
  }
}

HostPath::HostPath(const std::string& path, FollowLast follow) : m_path(&path) {
  auto* installed = g_installed.load(std::memory_order_acquire);
  if (installed == nullptr) {
    return;
  }
  m_owned = true;
  // The directory part resolved once per run; the last component each time.
  const auto slash = path.find_last_of('/');
  std::string directory = slash == std::string::npos ? "/" : path.substr(0, slash);
  if (directory.empty() || directory.front() != '/') {
    directory.insert(0, "/");
  }
  const std::string_view last =
      slash == std::string::npos ? std::string_view(path) : std::string_view(path).substr(slash + 1);
  std::string host_directory;
  {
    const std::shared_lock lock(installed->cache_lock);
    if (const auto found = installed->directories.find(directory); found != installed->directories.end()) {
      host_directory = found->second;
    }
  }
  if (host_directory.empty()) {
    host_directory = resolve_in_root(installed->root, directory, FollowLast::yes);
    if (host_directory.empty()) {
      return; // a link loop: m_resolved stays "", which names no file
    }
    const std::unique_lock lock(installed->cache_lock);
    installed->directories.emplace(directory, host_directory);
  }
  if (last.empty() || last == "." || last == "..") {
    m_resolved = resolve_in_root(installed->root, path, follow);
    return;
  }
  m_resolved = host_directory == "/" ? "/" + std::string(last) : host_directory + "/" + std::string(last);
  struct stat st {};
  note_path(m_resolved);
  if (follow == FollowLast::yes && ::lstat(m_resolved.c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    m_resolved = resolve_in_root(installed->root, directory + "/" + std::string(last), follow);
  }
}

std::string system_path(std::string_view host) {
  const auto& root = system_root();
  if (root.empty() || host.substr(0, root.size()) != root) {
    return std::string(host);
  }
  if (host.size() == root.size()) {
    return "/";
  }
  if (host[root.size()] != '/') {
    return std::string(host);
  }
  return std::string(host.substr(root.size()));
}

} // namespace cudadiag::fs
