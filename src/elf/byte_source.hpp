#pragma once
// Bounded random access to the bytes of an ELF file or image, shared by the ELF readers
// (elf_file.cpp: headers and the dynamic section; elf_symbols.cpp: the dynamic symbol tables).
// Internal to src/elf.

#include "core/expected.hpp"
#include "core/filesystem.hpp"
#include "core/read_record.hpp"
#include "core/system_root.hpp"
#include "core/unique_fd.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <sys/mman.h>
#include <sys/stat.h>
#include <utility>
#include <vector>

namespace cudadiag::elf::detail {

// An allocator whose elements start uninitialized: a buffer that a read fills at once is not
// zero-filled first (that cost as much as the read, and touched the pages twice).
template <class T> struct UninitializedAllocator : std::allocator<T> {
  template <class U> struct rebind { using other = UninitializedAllocator<U>; };
  UninitializedAllocator() = default;
  template <class U> UninitializedAllocator(const UninitializedAllocator<U>& /*other*/) noexcept {} // NOLINT
  template <class U> void construct(U* at) noexcept { ::new (static_cast<void*>(at)) U; }
  template <class U, class... Args> void construct(U* at, Args&&... args) {
    ::new (static_cast<void*>(at)) U(std::forward<Args>(args)...);
  }
};

// Bytes read from a source; their contents are only what the read put there.
using ByteBuffer = std::vector<std::byte, UninitializedAllocator<std::byte>>;

// A range of a source's bytes that outlives the source: a view into a read-only mapping of the
// file, or bytes read into memory of their own; `keep` holds either alive.
struct Bytes {
  std::span<const std::byte> view;
  std::shared_ptr<const void> keep;
  operator std::span<const std::byte>() const { return view; } // NOLINT: used where a span is read
  [[nodiscard]] std::size_t size() const { return view.size(); }
};

// Random access to the bytes of one file or image.
class ByteSource {
public:
  virtual ~ByteSource() = default;
  // The `length` bytes at `offset`, to keep: mapped when the source can map them (a file's large
  // tables: the kernel maps its cached pages instead of this process copying megabytes into fresh
  // memory), else read. nullopt when the range is not inside the source or cannot be read.
  [[nodiscard]] std::optional<Bytes> range(std::uint64_t offset, std::uint64_t length) const {
    if (!contains(offset, length)) {
      return std::nullopt;
    }
    if (auto mapped = map(offset, length)) {
      return mapped;
    }
    auto owned = std::make_shared<ByteBuffer>(static_cast<std::size_t>(length));
    if (!read(offset, *owned)) {
      return std::nullopt;
    }
    return Bytes{std::span<const std::byte>(*owned), owned};
  }
  [[nodiscard]] virtual std::uint64_t size() const = 0;
  // Fills `out` with the bytes at `offset`; false unless the whole range exists and was read.
  [[nodiscard]] virtual bool read(std::uint64_t offset, std::span<std::byte> out) const = 0;
  // The `length` bytes at `offset`, checked against the size before anything is allocated;
  // nullopt when the range is not inside the source or cannot be read.
  [[nodiscard]] std::optional<ByteBuffer> bytes(std::uint64_t offset, std::uint64_t length) const {
    if (!contains(offset, length)) {
      return std::nullopt;
    }
    ByteBuffer out(static_cast<std::size_t>(length));
    if (!read(offset, out)) {
      return std::nullopt;
    }
    return out;
  }

protected:
  // A mapping of the range inside the source, or nullopt (the default: read it).
  [[nodiscard]] virtual std::optional<Bytes> map(std::uint64_t /*offset*/, std::uint64_t /*length*/) const {
    return std::nullopt;
  }
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

// Reads through pread() on an open descriptor it does not own. Small reads (the headers, one string,
// one version entry) are served from a window of the file read in one call: a library's dynamic
// section, its strings and its version entries lie close together, and reading them field by
// field cost a system call each (about 70 per library). Not thread-safe: a FileSource belongs to
// the one reader that created it.
class FileSource final : public ByteSource {
public:
  FileSource(int fd, std::uint64_t size) : m_fd(fd), m_size(size) {}
  [[nodiscard]] std::uint64_t size() const override { return m_size; }
  [[nodiscard]] bool read(std::uint64_t offset, std::span<std::byte> out) const override {
    if (!contains(offset, out.size())) {
      return false;
    }
    if (out.size() > k_window_bytes / 2) {
      return read_directly(offset, out);
    }
    if (!window_holds(offset, out.size()) && !fill_window(offset)) {
      return false;
    }
    std::copy_n(m_window.begin() + static_cast<std::ptrdiff_t>(offset - m_window_offset), out.size(),
                out.begin());
    return true;
  }

protected:
  // Ranges of 64 KiB and more are mapped read-only and populated in one call: a C++ library's
  // string table runs to megabytes (libtorch_cpu.so's 5.5 MB), and copying it into fresh memory
  // costs a page fault per page, which in a virtual machine costs more than the copy. The mapping
  // is private and read-only; a file truncated by another process while it is mapped would fault
  // on access (SIGBUS), as with any reader that maps files (a library rewritten in place under a
  // running diagnosis is a torn installation either way).
  [[nodiscard]] std::optional<Bytes> map(std::uint64_t offset, std::uint64_t length) const override {
    constexpr std::uint64_t k_map_min_bytes = 64 * 1024;
    static const auto page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
    if (length < k_map_min_bytes || page == 0 ||
        offset > static_cast<std::uint64_t>(std::numeric_limits<off_t>::max())) {
      return std::nullopt;
    }
    const std::uint64_t start = offset - offset % page;
    const auto span = static_cast<std::size_t>(offset - start + length);
    void* address =
        ::mmap(nullptr, span, PROT_READ, MAP_PRIVATE | MAP_POPULATE, m_fd, static_cast<off_t>(start));
    if (address == MAP_FAILED) {
      return std::nullopt; // read it instead
    }
    std::shared_ptr<const void> mapping(address,
                                        [span](const void* at) { ::munmap(const_cast<void*>(at), span); });
    const auto* bytes = static_cast<const std::byte*>(address) + (offset - start);
    return Bytes{std::span<const std::byte>(bytes, static_cast<std::size_t>(length)), std::move(mapping)};
  }

private:
  static constexpr std::uint64_t k_window_bytes = 16 * 1024;
  static constexpr std::uint64_t k_window_alignment = 4096;

  [[nodiscard]] bool read_directly(std::uint64_t offset, std::span<std::byte> out) const {
    const auto got = fs::read_at(m_fd, offset, out.data(), out.size());
    return got && *got == out.size(); // an error, or the file shrank under us
  }
  [[nodiscard]] bool window_holds(std::uint64_t offset, std::size_t length) const {
    return offset >= m_window_offset && offset - m_window_offset <= m_window.size() &&
           length <= m_window.size() - (offset - m_window_offset);
  }
  // Reads the window that starts at the aligned offset at or below `offset`: it holds any read of
  // up to half a window there, since the caller checked that the read lies inside the file.
  [[nodiscard]] bool fill_window(std::uint64_t offset) const {
    const std::uint64_t start = offset - offset % k_window_alignment;
    m_window.resize(static_cast<std::size_t>(std::min(k_window_bytes, m_size - start)));
    if (!read_directly(start, m_window)) {
      m_window.clear();
      return false;
    }
    m_window_offset = start;
    return true;
  }

  int m_fd;
  std::uint64_t m_size;
  mutable ByteBuffer m_window; // the bytes at m_window_offset, read by fill_window
  mutable std::uint64_t m_window_offset = 0;
};

// Opens `path` (symlinks followed) and returns `read(source)` over its bytes; an Error naming why
// when it cannot be opened or is not a regular file ("cannot open: No such file or directory",
// "not a regular file").
template <class Read>
auto with_file_source(const std::string& path, Read read)
    -> decltype(read(std::declval<const FileSource&>())) {
  fs::note_path(path);
  const UniqueFd fd(::open(fs::HostPath(path).c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY));
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
inline std::uint64_t load(std::span<const std::byte> bytes, std::size_t at, std::size_t width,
                          bool little_endian) {
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
