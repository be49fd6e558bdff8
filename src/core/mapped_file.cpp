#include "core/mapped_file.hpp"

#include "core/filesystem.hpp"
#include "core/read_record.hpp"
#include "core/system_root.hpp"
#include "core/unique_fd.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <sys/stat.h>
#include <utility>

namespace cudadiag::fs {

MappedFile::MappedFile(MappedFile&& other) noexcept
    : m_address(std::exchange(other.m_address, nullptr)), m_length(std::exchange(other.m_length, 0)),
      m_file_size(std::exchange(other.m_file_size, 0)), m_on_heap(std::exchange(other.m_on_heap, false)) {}

MappedFile& MappedFile::operator=(MappedFile&& other) noexcept {
  if (this != &other) {
    MappedFile old(std::move(*this));
    m_address = std::exchange(other.m_address, nullptr);
    m_length = std::exchange(other.m_length, 0);
    m_file_size = std::exchange(other.m_file_size, 0);
    m_on_heap = std::exchange(other.m_on_heap, false);
  }
  return *this;
}

MappedFile::~MappedFile() {
  if (m_on_heap) {
    std::free(m_address);
  } else if (m_address != nullptr) {
    ::munmap(m_address, m_length);
  }
}

Expected<MappedFile> map_file(const std::string& path, std::uint64_t max_bytes) {
  fs::note_path(path);
  const UniqueFd fd(::open(fs::HostPath(path).c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) {
    return Error{std::strerror(errno)};
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return Error{std::strerror(errno)};
  }
  if (!S_ISREG(st.st_mode)) {
    return Error{"not a regular file"};
  }
  MappedFile mapped;
  mapped.m_file_size = static_cast<std::uint64_t>(std::max<off_t>(st.st_size, 0));
  if (mapped.m_file_size == 0 || mapped.m_file_size > max_bytes) {
    return mapped; // nothing to map, or too large to read
  }
  const auto length = static_cast<std::size_t>(mapped.m_file_size);
  if (length <= k_read_max_bytes) {
    // Read into the heap: no mapping to set up and tear down (munmap interrupts every CPU the
    // process's threads ran on, dear in a virtual machine), no page fault beyond the buffer's own.
    void* buffer = std::malloc(length);
    if (buffer == nullptr) {
      return Error{"out of memory"};
    }
    const auto done = read_at(fd.get(), 0, buffer, length); // fewer bytes: the file shrank since fstat
    if (!done) {
      std::free(buffer);
      return done.error();
    }
    mapped.m_address = buffer;
    mapped.m_length = *done;
    mapped.m_file_size = *done;
    mapped.m_on_heap = true;
    return mapped;
  }
  void* address = ::mmap(nullptr, length, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd.get(), 0);
  if (address == MAP_FAILED) {
    return Error{std::strerror(errno)};
  }
  mapped.m_address = address;
  mapped.m_length = length;
  return mapped;
}

} // namespace cudadiag::fs
