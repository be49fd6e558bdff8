#pragma once
// The files a process has mapped: parsed from /proc/<pid>/maps for another process, or listed by
// the dynamic loader for this one. Nothing here loads, ptrace-attaches to or signals a process;
// reading another user's process needs that user's rights (or root), as for `cat /proc/PID/maps`.

#include "core/expected.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::inspect {

// One file mapped into a process.
struct MappedFile {
  std::string path;        // as the kernel (or the loader) names it, without the " (deleted)" suffix
  bool deleted = false;    // the file was removed or replaced on disk after it was mapped
  std::uint64_t inode = 0; // 0 when unknown
  // "major:minor" in hexadecimal, as /proc/PID/maps writes it ("08:01"); "" when unknown.
  std::string device;
};

// The file-backed mappings in the text of a /proc/PID/maps file, one entry per distinct file
// (path, device and inode), in first-seen order. Lines are "address perms offset dev inode
// [pathname]"; the pathname is everything after the inode's padding, so paths with spaces are
// kept whole, the kernel's "\012" escape for a newline is decoded and a trailing " (deleted)" sets
// `deleted`. Anonymous and pseudo mappings ([heap], [stack], [vdso], [anon:…]) are not files and
// are left out, as is any line whose five leading fields do not parse. A final line without its
// newline is incomplete (the read was cut short) and is ignored.
std::vector<MappedFile> parse_proc_maps(std::string_view text);

// The largest /proc/PID/maps read_process_maps reads; mappings beyond it are ignored.
inline constexpr std::size_t k_max_maps_bytes = 16U << 20U;

// The files mapped into process `pid`, read from /proc/<pid>/maps (at most k_max_maps_bytes).
// Errors, as messages a user can act on (123 stands for the PID):
//   "no process with PID 123"
//   "permission denied reading /proc/123/maps (the process belongs to another user; run as that
//    user or root)" (one line; the parenthesis names the cause the facts support: access_denial.hpp)
//   "process 123 has exited (a zombie waiting for its parent to reap it); its mappings are gone"
//   "process 123 exited while being read"
//   "invalid PID 0 (expected a positive process id)"
//   "cannot read /proc/123/maps: <strerror>" for anything else.
// A kernel thread maps no files and gives an empty list, not an error.
Expected<std::vector<MappedFile>> read_process_maps(int pid);

// The shared objects loaded into this process, as the dynamic loader lists them
// (dl_iterate_phdr), in load order. The main program and the vDSO (names without a '/') are left
// out. Paths are as the loader recorded them (possibly through symlinks); inode and device come
// from stat() and stay unknown when the file cannot be stat'ed.
std::vector<MappedFile> loaded_in_this_process();

} // namespace cudadiag::inspect
