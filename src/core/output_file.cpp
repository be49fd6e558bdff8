#include "core/output_file.hpp"

#include "core/filesystem.hpp"
#include "core/unique_fd.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <optional>
#include <sys/stat.h>
#include <thread>

namespace cudadiag::output {
namespace {

// As many links as the kernel follows in one path lookup (MAXSYMLINKS).
constexpr int k_max_links = 40;

Error failure(const std::string& path, const std::string& reason) {
  return Error{"cannot write " + path + ": " + reason};
}
Error failure(const std::string& path, int error_number) {
  return failure(path, std::strerror(error_number));
}

bool all_digits(std::string_view text) {
  return !text.empty() && text.find_first_not_of("0123456789") == std::string_view::npos;
}

// The descriptor number a path names through the kernel's per-process links (/dev/fd/N,
// /proc/self/fd/N, /proc/thread-self/fd/N, /proc/PID/fd/N), and whose process that is; nullopt for
// any other path. /dev/stdout and /dev/stderr are links to /proc/self/fd/N and are followed first.
struct DescriptorPath {
  int fd = -1;
  bool own_process = false;
};
std::optional<DescriptorPath> descriptor_path(std::string_view path) {
  std::string_view process = "self";
  if (path.starts_with("/dev/fd/")) {
    path.remove_prefix(std::string_view("/dev/fd/").size());
  } else if (path.starts_with("/proc/")) {
    path.remove_prefix(std::string_view("/proc/").size());
    const auto slash = path.find('/');
    if (slash == std::string_view::npos || !path.substr(slash).starts_with("/fd/")) {
      return std::nullopt;
    }
    process = path.substr(0, slash);
    path.remove_prefix(slash + std::string_view("/fd/").size());
  } else {
    return std::nullopt;
  }
  if (!all_digits(path) || path.size() > 9) {
    return std::nullopt;
  }
  const bool own = process == "self" || process == "thread-self" || process == std::to_string(::getpid());
  if (!own && !all_digits(process)) {
    return std::nullopt;
  }
  return DescriptorPath{std::stoi(std::string(path)), own};
}

// Where a path's symbolic links lead: the last name of the chain (which may not exist), or the
// first descriptor path met on the way (the kernel resolves those itself: a pipe's or a socket's
// link text is no path).
struct Target {
  std::string path;
  std::optional<DescriptorPath> descriptor;
};
Expected<Target> follow_links(const std::string& path) {
  std::string current = path;
  for (int followed = 0; followed <= k_max_links; ++followed) {
    if (const auto descriptor = descriptor_path(current)) {
      return Target{current, descriptor};
    }
    struct stat info {};
    if (::lstat(current.c_str(), &info) != 0 || !S_ISLNK(info.st_mode)) {
      return Target{current, std::nullopt}; // absent (or unreadable: the write says why), or no link
    }
    std::string text(static_cast<std::size_t>(info.st_size > 0 ? info.st_size : 4096) + 1, '\0');
    const ssize_t length = ::readlink(current.c_str(), text.data(), text.size());
    if (length < 0) {
      return failure(path, errno);
    }
    text.resize(static_cast<std::size_t>(length));
    current = text.starts_with('/') ? text : fs::join(fs::parent(current), text);
  }
  return failure(path, ELOOP);
}

// Writes while SIGPIPE is blocked, so that a reader that goes away (a FIFO's, a pipe's) is an EPIPE
// error here rather than the end of the process; a SIGPIPE the write raised is consumed.
Expected<void> write_all(int fd, std::string_view content, const std::string& path) {
  sigset_t pipe_only;
  sigset_t previous;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_only, &previous);
  int error_number = 0;
  while (!content.empty()) {
    const ssize_t written = ::write(fd, content.data(), content.size());
    if (written < 0 && errno == EINTR) {
      continue;
    }
    if (written <= 0) {
      error_number = written < 0 ? errno : EIO;
      break;
    }
    content.remove_prefix(static_cast<std::size_t>(written));
  }
  if (error_number == EPIPE && sigismember(&previous, SIGPIPE) == 0) {
    const timespec no_wait{0, 0};
    ::sigtimedwait(&pipe_only, nullptr, &no_wait);
  }
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (error_number != 0) {
    return failure(path, error_number);
  }
  return {};
}

// Opens a FIFO for writing once a reader has it open (an open without a reader would block for
// ever, or fail with ENXIO without O_NONBLOCK's wait); blocking writes after that.
Expected<UniqueFd> open_fifo(const std::string& open_path, std::chrono::milliseconds reader_wait,
                             const std::string& path) {
  const auto give_up = std::chrono::steady_clock::now() + reader_wait;
  while (true) {
    UniqueFd fd(::open(open_path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    if (fd.get() >= 0) {
      const int flags = ::fcntl(fd.get(), F_GETFL);
      if (flags < 0 || ::fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK) != 0) {
        return failure(path, errno);
      }
      return fd;
    }
    if (errno != ENXIO) {
      return failure(path, errno);
    }
    if (std::chrono::steady_clock::now() >= give_up) {
      return failure(path, "it is a FIFO and no process opened it for reading within " +
                               std::to_string(reader_wait.count()) + " ms");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

Expected<void> write_through(const std::string& open_path, int flags, std::string_view content,
                             const std::string& path) {
  UniqueFd fd(::open(open_path.c_str(), flags | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) {
    // A socket (stdout of a systemd service) cannot be opened by path: say what it is.
    return failure(path, errno == ENXIO ? std::string("it is a socket, which cannot be opened by its path")
                                        : std::string(std::strerror(errno)));
  }
  CUDADIAG_TRY(write_all(fd.get(), content, path));
  return {};
}

// Creates or replaces the regular file at `target` (no links left to follow) through a temporary
// file beside it. `existing` is the file being replaced, when there is one.
Expected<void> replace_atomically(const std::string& target, const struct stat* existing,
                                  std::string_view content, const OutputFileOptions& options,
                                  const std::string& path) {
  std::string temp = fs::join(fs::parent(target), "." + fs::basename(target) + ".tmp-XXXXXX");
  UniqueFd fd(::mkostemp(temp.data(), O_CLOEXEC));
  if (fd.get() < 0) {
    return failure(path, errno);
  }
  auto mode = static_cast<mode_t>(options.mode & 07777U);
  if (existing != nullptr) {
    const auto kept = static_cast<mode_t>(existing->st_mode & 07777U);
    mode = options.private_content ? static_cast<mode_t>(kept & mode) : kept;
  }
  int error_number = 0;
  if (::fchmod(fd.get(), mode) != 0) {
    error_number = errno;
  }
  if (error_number == 0 && existing != nullptr &&
      (existing->st_uid != ::geteuid() || existing->st_gid != ::getegid())) {
    // Keep the owner where this process may (root, or a group it is in); otherwise the new file is
    // this user's, as any editor's save would make it.
    if (::fchown(fd.get(), existing->st_uid, existing->st_gid) != 0) {
      errno = 0; // not permitted: the file becomes this user's
    }
  }
  if (error_number == 0) {
    if (auto written = write_all(fd.get(), content, path); !written) {
      ::unlink(temp.c_str());
      return written.error();
    }
    if (::fsync(fd.get()) != 0) {
      error_number = errno;
    }
  }
  if (::close(fd.release()) != 0 && error_number == 0) {
    error_number = errno;
  }
  if (error_number == 0 && ::rename(temp.c_str(), target.c_str()) != 0) {
    error_number = errno;
  }
  if (error_number != 0) {
    ::unlink(temp.c_str());
    return failure(path, error_number);
  }
  return {};
}

} // namespace

Expected<void> write_output_file(const std::string& path, std::string_view content,
                                 const OutputFileOptions& options) {
  if (path.empty()) {
    return Error{"cannot write an empty path"};
  }
  auto target = follow_links(path);
  if (!target) {
    return target.error();
  }
  struct stat info {};
  if (::stat(target->path.c_str(), &info) != 0) {
    if (errno != ENOENT || target->descriptor) {
      return failure(path, errno);
    }
    return replace_atomically(target->path, nullptr, content, options, path);
  }
  if (S_ISDIR(info.st_mode)) {
    return failure(path, EISDIR);
  }
  if (S_ISBLK(info.st_mode)) {
    return failure(path, "it is a block device; cudadiag never writes over one");
  }
  if (S_ISSOCK(info.st_mode)) {
    return failure(path, "it is a socket, which cannot be opened by its path");
  }
  if (S_ISFIFO(info.st_mode)) {
    auto fd = open_fifo(target->path, options.fifo_reader_wait, path);
    if (!fd) {
      return fd.error();
    }
    return write_all(fd->get(), content, path);
  }
  if (S_ISCHR(info.st_mode)) {
    return write_through(target->path, O_WRONLY, content, path);
  }
  if (target->descriptor) {
    // A file some process holds open (a shell's `> log`): after what was already written to it.
    return write_through(target->path, O_WRONLY | O_APPEND, content, path);
  }
  return replace_atomically(target->path, &info, content, options, path);
}

bool is_standard_output(const std::string& path) {
  const auto target = follow_links(path);
  if (target && target->descriptor) {
    if (target->descriptor->own_process && target->descriptor->fd == STDOUT_FILENO) {
      return true;
    }
  }
  struct stat named {};
  struct stat standard {};
  if (::stat(path.c_str(), &named) != 0 || ::fstat(STDOUT_FILENO, &standard) != 0) {
    return false;
  }
  return !S_ISCHR(named.st_mode) && named.st_dev == standard.st_dev && named.st_ino == standard.st_ino;
}

} // namespace cudadiag::output
