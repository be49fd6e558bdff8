#include "bundle/atomic_file.hpp"

#include "core/filesystem.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sys/stat.h>

namespace cudadiag::bundle {
namespace {

Error failure(const std::string& path, int error_number) {
  return Error{"cannot write " + path + ": " + std::strerror(error_number)};
}

bool write_all(int fd, std::string_view content) {
  while (!content.empty()) {
    const ssize_t written = ::write(fd, content.data(), content.size());
    if (written < 0 && errno == EINTR) {
      continue;
    }
    if (written <= 0) {
      return false;
    }
    content.remove_prefix(static_cast<std::size_t>(written));
  }
  return true;
}

} // namespace

std::optional<Error> write_file_atomically(const std::string& path, std::string_view content, unsigned mode) {
  if (path.empty()) {
    return Error{"cannot write an empty path"};
  }
  if (fs::is_directory(path)) {
    return failure(path, EISDIR);
  }
  std::string temp = fs::join(fs::parent(path), "." + fs::basename(path) + ".tmp-XXXXXX");
  const int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) {
    return failure(path, errno);
  }
  int error_number = 0;
  if (::fchmod(fd, static_cast<mode_t>(mode)) != 0 || !write_all(fd, content) || ::fsync(fd) != 0) {
    error_number = errno != 0 ? errno : EIO;
  }
  if (::close(fd) != 0 && error_number == 0) {
    error_number = errno;
  }
  if (error_number == 0 && ::rename(temp.c_str(), path.c_str()) != 0) {
    error_number = errno;
  }
  if (error_number != 0) {
    ::unlink(temp.c_str());
    return failure(path, error_number);
  }
  return std::nullopt;
}

} // namespace cudadiag::bundle
