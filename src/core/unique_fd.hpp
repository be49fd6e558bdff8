#pragma once
// Owns one file descriptor: closes it when the owner goes out of scope (or on reset()).

#include <unistd.h>

namespace cudadiag {

class UniqueFd {
public:
  explicit UniqueFd(int fd = -1) : m_fd(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  // The descriptor, or -1 when none is held (open() failed).
  [[nodiscard]] int get() const { return m_fd; }
  // Closes the held descriptor and holds `fd` instead.
  void reset(int fd = -1) {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
    m_fd = fd;
  }

private:
  int m_fd;
};

} // namespace cudadiag
