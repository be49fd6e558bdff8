#pragma once
// Bounded random access to the bytes of an ELF file or image, shared by the ELF readers
// (elf_file.cpp: headers and the dynamic section; elf_symbols.cpp: the dynamic symbol tables).
// Internal to src/elf.

#include "core/expected.hpp"
#include "core/unique_fd.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstring>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace cudadiag::elf::detail {

// Random access to the bytes of one file or image.
class ByteSource {
public:
  virtual ~ByteSource() = default;
  [[nodiscard]] virtual std::uint64_t size() const = 0;
  // Fills `out` with the bytes at `offset`; false unless the whole range exists and was read.
  [[nodiscard]] virtual bool read(std::uint64_t offset, std::span<std::byte> out) const = 0;
  // The `length` bytes at `offset`, checked against the size before anything is allocated;
  // nullopt when the range is not inside the source or cannot be read.
  [[nodiscard]] std::optional<std::vector<std::byte>> bytes(std::uint64_t offset, std::uint64_t length) const {
    if (!contains(offset, length)) {
      return std::nullopt;
    }
    std::vector<std::byte> out(static_cast<std::size_t>(length));
    if (!read(offset, out)) {
      return std::nullopt;
    }
    return out;
  }

protected:
  [[nodiscard]] bool contains(std::uint64_t offset, std::uint64_t length) const {
    return offset <= size() && length <= size() - offset;
  }
};

class SpanSource final : public ByteSource {
public:
  explicit SpanSource(std::span<const std::byte> image) : m_image(image) {}
  [[nodiscard]] std::uint64_t size() const override { return m_image.size(); }
  [[nodiscard]] bool read(std::uint64_t offset, std::span<std::byte> out) const override {
    if (!contains(offset, out.size())) {
      return false;
    }
    std::copy_n(m_image.begin() + static_cast<std::ptrdiff_t>(offset), out.size(), out.begin());
    return true;
  }

private:
  std::span<const std::byte> m_image;
};

// Reads through pread() on an open descriptor it does not own.
class FileSource final : public ByteSource {
public:
  FileSource(int fd, std::uint64_t size) : m_fd(fd), m_size(size) {}
  [[nodiscard]] std::uint64_t size() const override { return m_size; }
  [[nodiscard]] bool read(std::uint64_t offset, std::span<std::byte> out) const override {
    if (!contains(offset, out.size()) || offset > static_cast<std::uint64_t>(std::numeric_limits<off_t>::max())) {
      return false;
    }
    std::size_t done = 0;
    while (done < out.size()) {
      const ssize_t got = ::pread(m_fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
      if (got < 0 && errno == EINTR) {
        continue;
      }
      if (got <= 0) {
        return false; // error, or the file shrank under us
      }
      done += static_cast<std::size_t>(got);
    }
    return true;
  }

private:
  int m_fd;
  std::uint64_t m_size;
};

// Opens `path` (symlinks followed) and returns `read(source)` over its bytes; an Error naming why
// when it cannot be opened or is not a regular file ("cannot open: No such file or directory",
// "not a regular file").
template <class Read>
auto with_file_source(const std::string& path, Read read) -> decltype(read(std::declval<const FileSource&>())) {
  const UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
  if (fd.get() < 0) {
    return Error{std::string("cannot open: ") + std::strerror(errno)};
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) {
    return Error{std::string("cannot stat: ") + std::strerror(errno)};
  }
  if (!S_ISREG(st.st_mode)) {
    return Error{"not a regular file"};
  }
  const FileSource source(fd.get(), static_cast<std::uint64_t>(std::max<off_t>(st.st_size, 0)));
  return read(source);
}

// An unsigned field of `width` bytes at `at`, in the file's byte order; 0 if out of bounds.
inline std::uint64_t load(std::span<const std::byte> bytes, std::size_t at, std::size_t width, bool little_endian) {
  if (at > bytes.size() || width > bytes.size() - at) {
    return 0;
  }
  if constexpr (std::endian::native == std::endian::little) {
    if (little_endian && width <= 8) { // the common case, one copy: a symbol table is read field by field
      std::uint64_t value = 0;
      std::memcpy(&value, bytes.data() + at, width);
      return value;
    }
  }
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < width; ++i) {
    const std::size_t index = little_endian ? at + width - 1 - i : at + i;
    value = (value << 8U) | std::to_integer<std::uint64_t>(bytes[index]);
  }
  return value;
}

} // namespace cudadiag::elf::detail
