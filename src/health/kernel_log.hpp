#pragma once
// The NVIDIA driver's error events in the kernel log: Xid (a GPU) and SXid (an NVSwitch) lines,
// read from /dev/kmsg (or a file in its format, or dmesg's, for tests and saved logs) without
// blocking and without running dmesg. Bounded: only the last `max_bytes` of the log are kept, so
// a log flooded with other messages costs a fixed amount of memory. "Since boot": /dev/kmsg holds
// what the kernel's ring buffer still has, oldest first.
//
// The lines (NVIDIA's Xid catalogue, docs.nvidia.com/deploy/xid-errors):
//   NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python3, GPU has fallen off the bus.
//   NVRM: Xid (PCI:0000:3b:00): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error ...
//   NVRM: Xid (0000:01:00): 13, Graphics Exception: ...          (older drivers: no "PCI:", no pid)
//   nvidia-nvswitch3: SXid (PCI:0000:86:00.0): 12028, Non-fatal, Link 33 egress non-posted PRIV error
// A reader never fails: a log it cannot open or read is a status with the reason, not an error.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::health {

enum class EventKind { xid, sxid };
std::string_view to_string(EventKind kind); // "Xid", "SXid"

struct KernelEvent {
  EventKind kind = EventKind::xid;
  int code = 0;
  std::string pci;                 // as the line names it: "0000:3b:00" (Xid), "0000:86:00.0" (SXid)
  std::optional<double> seconds;   // since boot (kmsg's microseconds, dmesg's "[ 123.456]")
  std::optional<long long> pid;    // pid=1234; nullopt when the line has none or '<unknown>'
  std::optional<std::string> name; // name=python3; nullopt when none or <unknown>
  std::string text;                // the rest of the line after the code (and pid/name): the driver's words
};

// One kernel log line (a /dev/kmsg record "PRI,SEQ,USEC,FLAGS;MESSAGE", a dmesg line
// "[ 12.345] MESSAGE", a journal line with a "kernel:" prefix, or a bare message): the event it
// reports, or nullopt for any other line.
std::optional<KernelEvent> parse_kernel_line(std::string_view line);

enum class KernelLogStatus {
  read,       // read (events may be empty)
  unreadable, // the source could not be opened or read: `reason` says why (no permission, absent)
  not_read,   // not asked for (--no-load, or an empty source): `reason` says why
};
std::string_view to_string(KernelLogStatus status); // "read", "unreadable", "not_read"

struct KernelLog {
  std::string source; // "/dev/kmsg", or the file named by --kmsg / CUDADIAG_KMSG
  KernelLogStatus status = KernelLogStatus::not_read;
  std::string reason;              // why it was not read (empty when read)
  std::size_t bytes = 0;           // how much of the log was examined
  bool truncated = false;          // older records were dropped to stay within the bound
  std::vector<KernelEvent> events; // oldest first
};

// The default bound: the last 4 MiB of the log (the kernel's ring buffer is 128 KiB to a few MiB).
inline constexpr std::size_t k_kernel_log_max_bytes = std::size_t{4} << 20;

// Reads `source`: a character device (/dev/kmsg: one record per read(), non-blocking, until it
// has nothing more) or a regular file (its last `max_bytes`, every line), keeping the events of
// the last `max_bytes` read.
KernelLog read_kernel_log(const std::string& source, std::size_t max_bytes = k_kernel_log_max_bytes);

// A KernelLog that was not read, with the reason.
KernelLog kernel_log_not_read(std::string source, std::string reason);

// The (domain, bus, device) a PCI id names ("0000:3b:00", "00000000:3B:00.0", "3b:00.0"), for
// matching an event to a device whatever the spelling; nullopt when it is not a PCI id.
struct PciAddress {
  unsigned domain = 0, bus = 0, device = 0;
  friend bool operator==(const PciAddress&, const PciAddress&) = default;
};
std::optional<PciAddress> parse_pci_address(std::string_view text);

} // namespace cudadiag::health
