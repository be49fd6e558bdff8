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
  UniqueFd(UniqueFd&& other) noexcept : m_fd(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) {
      reset(other.release());
    }
    return *this;
  }
  // The descriptor, or -1 when none is held (open() failed).
  [[nodiscard]] int get() const { return m_fd; }
  // Closes the held descriptor and holds `fd` instead.
  void reset(int fd = -1) {
    if (m_fd >= 0) {
      ::close(m_fd);
    }
    m_fd = fd;
  }
  // Gives the descriptor up without closing it (the caller closes it, e.g. to see close()'s error).
  [[nodiscard]] int release() {
    const int fd = m_fd;
    m_fd = -1;
    return fd;
  }

private:
  int m_fd;
};

} // namespace cudadiag
