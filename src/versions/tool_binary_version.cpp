#include "versions/tool_binary_version.hpp"

#include "core/read_record.hpp"
#include "core/system_root.hpp"
#include "core/unique_fd.hpp"
#include "elf/elf_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>
#include <sys/stat.h>
#include <vector>

namespace cudadiag::versions {
namespace {

constexpr std::string_view k_marker = "Cuda compilation tools, release ";
// Reads start small (the string lies 16 KB into ptxas 13.0's .rodata, where a first read of 1 MiB
// cost a fresh megabyte of memory and its copy for nothing) and double up to the largest.
constexpr std::size_t k_first_chunk = std::size_t{64} << 10U;
constexpr std::size_t k_chunk = std::size_t{1} << 20U;
// What may follow the marker: "12.8, V12.8.93" and a little slack.
constexpr std::size_t k_tail = 48;

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// Digits and dots, starting and ending with a digit, at most 31 characters; the length taken.
std::size_t dotted_number(std::string_view text) {
  std::size_t length = 0;
  while (length < text.size() && length < 32 && (is_digit(text[length]) || text[length] == '.')) {
    ++length;
  }
  if (length == 0 || length == 32 || !is_digit(text.front()) || !is_digit(text[length - 1])) {
    return 0;
  }
  return length;
}

// "12.8, V12.8.93" at the start of `text`.
std::optional<ToolRelease> parse_after_marker(std::string_view text) {
  const auto release = dotted_number(text);
  if (release == 0 || text.substr(release, 3) != ", V") {
    return std::nullopt;
  }
  const auto rest = text.substr(release + 3);
  const auto version = dotted_number(rest);
  if (version == 0) {
    return std::nullopt;
  }
  return ToolRelease{std::string(text.substr(0, release)), std::string(rest.substr(0, version))};
}

// The first well-formed release string in the bytes [begin, end) of `fd`, read in growing chunks
// (the string may straddle two reads); nullopt when there is none, an Error when a read fails.
Expected<std::optional<ToolRelease>> scan_for_release(int fd, std::uint64_t begin, std::uint64_t end) {
  // The buffer holds the end of the previous read (enough for a marker and what follows it that
  // straddle the boundary) and then the new read.
  const std::size_t keep = k_marker.size() + k_tail;
  std::size_t chunk = k_first_chunk;
  std::vector<char> buffer(keep + chunk);
  std::size_t held = 0;
  std::uint64_t at_offset = begin;
  while (true) {
    const auto wanted = static_cast<std::size_t>(std::min<std::uint64_t>(chunk, end - at_offset));
    const ssize_t got =
        wanted == 0 ? 0 : ::pread(fd, buffer.data() + held, wanted, static_cast<off_t>(at_offset));
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got < 0) {
      return Error{std::strerror(errno)};
    }
    const bool last = got == 0;
    held += static_cast<std::size_t>(got);
    at_offset += static_cast<std::uint64_t>(got);
    const std::string_view view(buffer.data(), held);
    for (auto at = view.find(k_marker); at != std::string_view::npos; at = view.find(k_marker, at + 1)) {
      const auto after = view.substr(at + k_marker.size());
      if (after.size() < k_tail && !last) {
        break; // what follows the marker is in the next read: keep it
      }
      if (auto found = parse_after_marker(after)) {
        return std::optional<ToolRelease>(std::move(*found));
      }
    }
    if (last) {
      return std::optional<ToolRelease>{};
    }
    const std::size_t carried = std::min(held, keep);
    std::memmove(buffer.data(), buffer.data() + held - carried, carried);
    held = carried;
    if (chunk < k_chunk) {
      chunk *= 2;
      buffer.resize(keep + chunk); // what is held stays at the front
    }
  }
}

} // namespace

Expected<ToolRelease> cuda_tool_release(const std::string& path) {
  fs::note_path(path);
  const UniqueFd fd(::open(fs::HostPath(path).c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (fd.get() < 0) {
    return Error{std::strerror(errno)};
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode)) {
    return Error{"not a regular file"};
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  const auto limit = std::min<std::uint64_t>(size, k_tool_release_read_limit);
  // The string is read-only data: an ELF binary's .rodata is searched first (ptxas 13.0's lies
  // 16 KB into it, 26 MB into the file), then, when it is not there, the whole file as before.
  if (const auto rodata = elf::section_in_file(path, ".rodata")) {
    const auto begin = std::min(rodata->offset, limit);
    const auto in_rodata = scan_for_release(fd.get(), begin, std::min(limit, begin + rodata->size + k_tail));
    if (!in_rodata) {
      return in_rodata.error();
    }
    if (*in_rodata) {
      return **in_rodata;
    }
  }
  auto whole = scan_for_release(fd.get(), 0, limit);
  if (!whole) {
    return whole.error();
  }
  if (*whole) {
    return **whole;
  }
  return Error{size > k_tool_release_read_limit
                   ? "no CUDA version string (\"Cuda compilation tools, release\") in its first " +
                         std::to_string(k_tool_release_read_limit >> 20U) + " MiB"
                   : std::string("no CUDA version string (\"Cuda compilation tools, release\") in it")};
}

} // namespace cudadiag::versions
