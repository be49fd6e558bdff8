#include "health/kernel_log.hpp"

#include "core/unique_fd.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <sys/stat.h>

namespace cudadiag::health {
namespace {

// A /dev/kmsg record is at most ~1 KiB of text plus its dictionary; a larger buffer never gets EINVAL.
constexpr std::size_t k_record_buffer = 16384;
// However fast the kernel logs, a read stops after this many bytes (the ring buffer is far smaller).
constexpr std::size_t k_kmsg_read_limit = std::size_t{64} << 20;

std::string_view trim_left(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
    text.remove_prefix(1);
  }
  return text;
}

template <typename T> std::optional<T> number(std::string_view text, int base = 10) {
  T value{};
  const auto* end = text.data() + text.size();
  const auto [at, error] = std::from_chars(text.data(), end, value, base);
  if (error != std::errc() || at != end) {
    return std::nullopt;
  }
  return value;
}

// "[ 1843.308145]" somewhere before `end`: seconds since boot.
std::optional<double> bracketed_seconds(std::string_view prefix) {
  const auto open = prefix.rfind('[');
  if (open == std::string_view::npos) {
    return std::nullopt;
  }
  const auto close = prefix.find(']', open);
  if (close == std::string_view::npos) {
    return std::nullopt;
  }
  const std::string inner(trim_left(prefix.substr(open + 1, close - open - 1)));
  if (inner.empty() || inner.find_first_not_of("0123456789.") != std::string::npos) {
    return std::nullopt;
  }
  return std::strtod(inner.c_str(), nullptr);
}

// Takes "KEY=VALUE, " off the front of `rest` when it starts with `key`; the value without quotes,
// nullopt for <unknown>.
bool take_field(std::string_view& rest, std::string_view key, std::optional<std::string>& value) {
  if (rest.substr(0, key.size()) != key) {
    return false;
  }
  const auto comma = rest.find(", ", key.size());
  auto field =
      rest.substr(key.size(), comma == std::string_view::npos ? std::string_view::npos : comma - key.size());
  rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 2);
  while (!field.empty() && (field.front() == '\'' || field.front() == '"')) {
    field.remove_prefix(1);
  }
  while (!field.empty() && (field.back() == '\'' || field.back() == '"')) {
    field.remove_suffix(1);
  }
  if (field.empty() || field == "<unknown>") {
    value.reset();
  } else {
    value = std::string(field);
  }
  return true;
}

} // namespace

std::string_view to_string(EventKind kind) {
  return kind == EventKind::xid ? "Xid" : "SXid";
}

std::string_view to_string(KernelLogStatus status) {
  switch (status) {
  case KernelLogStatus::read: return "read";
  case KernelLogStatus::unreadable: return "unreadable";
  case KernelLogStatus::not_read: return "not_read";
  }
  return "not_read";
}

std::optional<KernelEvent> parse_kernel_line(std::string_view line) {
  if (const auto newline = line.find('\n'); newline != std::string_view::npos) {
    line = line.substr(0, newline); // a kmsg record's dictionary lines follow its message
  }
  std::optional<double> seconds;
  // A /dev/kmsg record: "PRI,SEQ,USEC,FLAGS;MESSAGE".
  if (const auto semicolon = line.find(';'); semicolon != std::string_view::npos) {
    const auto header = line.substr(0, semicolon);
    const auto first = header.find(',');
    const auto second = first == std::string_view::npos ? first : header.find(',', first + 1);
    const auto third = second == std::string_view::npos ? second : header.find(',', second + 1);
    if (third != std::string_view::npos && number<unsigned>(header.substr(0, first))) {
      if (const auto usec = number<unsigned long long>(header.substr(second + 1, third - second - 1))) {
        seconds = static_cast<double>(*usec) / 1e6;
        line = line.substr(semicolon + 1);
      }
    }
  }
  KernelEvent event;
  auto at = line.find("NVRM: Xid (");
  std::size_t open = 0;
  if (at != std::string_view::npos) {
    event.kind = EventKind::xid;
    open = at + std::string_view("NVRM: Xid (").size();
  } else if (at = line.find("SXid ("); at != std::string_view::npos) {
    event.kind = EventKind::sxid;
    open = at + std::string_view("SXid (").size();
  } else {
    return std::nullopt;
  }
  if (!seconds) {
    seconds = bracketed_seconds(line.substr(0, at));
  }
  const auto close = line.find("): ", open);
  if (close == std::string_view::npos) {
    return std::nullopt;
  }
  auto pci = line.substr(open, close - open);
  if (pci.substr(0, 4) == "PCI:") {
    pci.remove_prefix(4);
  }
  auto rest = line.substr(close + 3);
  const auto digits = rest.find_first_not_of("0123456789");
  const auto code = number<int>(rest.substr(0, digits));
  if (!code) {
    return std::nullopt;
  }
  rest = digits == std::string_view::npos ? std::string_view() : rest.substr(digits);
  if (rest.substr(0, 2) == ", ") {
    rest.remove_prefix(2);
  }
  std::optional<std::string> pid;
  take_field(rest, "pid=", pid);
  take_field(rest, "name=", event.name);
  if (pid) {
    event.pid = number<long long>(*pid);
  }
  event.code = *code;
  event.pci = std::string(pci);
  event.seconds = seconds;
  while (!rest.empty() && (rest.back() == '\r' || rest.back() == ' ')) {
    rest.remove_suffix(1);
  }
  event.text = std::string(rest);
  return event;
}

KernelLog kernel_log_not_read(std::string source, std::string reason) {
  KernelLog log;
  log.source = std::move(source);
  log.status = KernelLogStatus::not_read;
  log.reason = std::move(reason);
  return log;
}

namespace {

struct Collected {
  std::size_t offset = 0; // bytes of the log before this record
  KernelEvent event;
};

// Keeps the events of the last `max_bytes` of `total`.
void keep_last(KernelLog& log, std::vector<Collected>& collected, std::size_t total, std::size_t max_bytes) {
  const std::size_t start = total > max_bytes ? total - max_bytes : 0;
  log.truncated = log.truncated || start > 0;
  log.bytes = total - start;
  for (auto& item : collected) {
    if (item.offset >= start) {
      log.events.push_back(std::move(item.event));
    }
  }
}

std::string unreadable_reason(int error, const std::string& source) {
  std::string reason = std::strerror(error);
  if ((error == EACCES || error == EPERM) && source == "/dev/kmsg") {
    reason += " (the kernel log is readable by root only where kernel.dmesg_restrict is 1, or in a "
              "container without CAP_SYSLOG)";
  }
  return reason;
}

} // namespace

KernelLog read_kernel_log(const std::string& source, std::size_t max_bytes) {
  KernelLog log;
  log.source = source;
  if (source.empty()) {
    return kernel_log_not_read(source, "no kernel log named");
  }
  const UniqueFd fd(::open(source.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
  if (fd.get() < 0) {
    log.status = KernelLogStatus::unreadable;
    log.reason = unreadable_reason(errno, source);
    return log;
  }
  struct stat info {};
  if (::fstat(fd.get(), &info) != 0) {
    log.status = KernelLogStatus::unreadable;
    log.reason = unreadable_reason(errno, source);
    return log;
  }
  std::vector<Collected> collected;
  std::size_t total = 0;
  if (S_ISCHR(info.st_mode)) {
    // /dev/kmsg: each read() returns one record; EAGAIN: no more now; EPIPE: the record we were
    // at was overwritten (the reader moves on to the oldest one left).
    std::string buffer(k_record_buffer, '\0');
    while (total < k_kmsg_read_limit) {
      const auto got = ::read(fd.get(), buffer.data(), buffer.size());
      if (got < 0) {
        if (errno == EINTR) {
          continue;
        }
        if (errno == EPIPE) {
          log.truncated = true;
          continue;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
          break;
        }
        if (total == 0) {
          log.status = KernelLogStatus::unreadable;
          log.reason = unreadable_reason(errno, source);
          return log;
        }
        break;
      }
      if (got == 0) {
        break;
      }
      const std::string_view record(buffer.data(), static_cast<std::size_t>(got));
      if (auto event = parse_kernel_line(record)) {
        collected.push_back({total, std::move(*event)});
      }
      total += static_cast<std::size_t>(got);
    }
  } else if (S_ISREG(info.st_mode)) {
    const auto size = static_cast<std::size_t>(info.st_size);
    const auto start = size > max_bytes ? size - max_bytes : 0;
    std::string text(size - start, '\0');
    std::size_t have = 0;
    while (have < text.size()) {
      const auto got =
          ::pread(fd.get(), text.data() + have, text.size() - have, static_cast<off_t>(start + have));
      if (got < 0 && errno == EINTR) {
        continue;
      }
      if (got < 0) {
        log.status = KernelLogStatus::unreadable;
        log.reason = unreadable_reason(errno, source);
        return log;
      }
      if (got == 0) {
        break;
      }
      have += static_cast<std::size_t>(got);
    }
    text.resize(have);
    std::size_t line_start = 0;
    if (start > 0) { // the first line is cut: skip it
      const auto newline = text.find('\n');
      line_start = newline == std::string::npos ? text.size() : newline + 1;
      log.truncated = true;
    }
    while (line_start < text.size()) {
      const auto newline = text.find('\n', line_start);
      const auto end = newline == std::string::npos ? text.size() : newline;
      if (auto event = parse_kernel_line(std::string_view(text).substr(line_start, end - line_start))) {
        collected.push_back({start + line_start, std::move(*event)});
      }
      line_start = end + 1;
    }
    total = start + text.size();
  } else {
    log.status = KernelLogStatus::unreadable;
    log.reason = "not a character device or a regular file";
    return log;
  }
  log.status = KernelLogStatus::read;
  keep_last(log, collected, total, max_bytes);
  return log;
}

std::optional<PciAddress> parse_pci_address(std::string_view text) {
  if (text.substr(0, 4) == "PCI:") {
    text.remove_prefix(4);
  }
  // [domain:]bus:device[.function]
  if (const auto dot = text.rfind('.'); dot != std::string_view::npos) {
    text = text.substr(0, dot);
  }
  const auto last = text.rfind(':');
  if (last == std::string_view::npos) {
    return std::nullopt;
  }
  PciAddress address;
  const auto device = number<unsigned>(text.substr(last + 1), 16);
  const auto head = text.substr(0, last);
  const auto middle = head.rfind(':');
  const auto bus = number<unsigned>(middle == std::string_view::npos ? head : head.substr(middle + 1), 16);
  if (!device || !bus) {
    return std::nullopt;
  }
  if (middle != std::string_view::npos) {
    const auto domain = number<unsigned>(head.substr(0, middle), 16);
    if (!domain) {
      return std::nullopt;
    }
    address.domain = *domain;
  }
  address.bus = *bus;
  address.device = *device;
  return address;
}

} // namespace cudadiag::health
