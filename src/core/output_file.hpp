#pragma once
// Every file cudadiag writes on a user's behalf (--junit, --html, --markdown, --prometheus,
// bundle -o, fleet --html) goes through write_output_file: the one place that decides how a target
// is written, so that no output option can harm the machine it diagnoses.
//
// The contract, by what the target is once symbolic links are followed (docs/manual.md, "Output
// files"):
//   absent            created atomically in the directory the links lead to: a temporary file there,
//                     fsync, rename. A dangling link keeps pointing where it did, at the new file.
//   regular file      replaced atomically the same way; the file's mode is kept (a private output,
//                     such as the bundle, never becomes more readable than it asks for) and, where the
//                     caller may, its owner. The link itself is never replaced.
//   character device  written through: opened for writing, no rename, no truncation (/dev/null
//                     discards, /dev/full fails with "No space left on device", a terminal shows it).
//   FIFO              written through, once a reader has opened it (waits up to fifo_reader_wait).
//   reached through a process's descriptor (/dev/stdout, /dev/fd/N, /proc/PID/fd/N, or a link to one):
//                     written through that descriptor's file, appended, whatever it is.
//   directory, block device, socket, a link loop or a chain of more than 40 links
//                     refused: an Error naming the path and why; nothing is written or removed.
// On any failure nothing is left behind and the target is untouched (a write-through target may
// have received part of the content).

#include "core/expected.hpp"

#include <chrono>
#include <string>
#include <string_view>

namespace cudadiag::output {

struct OutputFileOptions {
  // Permissions of a file that does not exist yet.
  unsigned mode = 0644;
  // True for outputs that hold paths and environment (the bundle): a replaced file's mode is
  // narrowed to `mode` (existing & mode); otherwise a replaced file keeps its own mode.
  bool private_content = false;
  // How long a write to a FIFO waits for a process to open it for reading before it fails.
  std::chrono::milliseconds fifo_reader_wait{5000};
};

// Writes `content` to `path` as the contract above says. The Error's message starts with
// "cannot write PATH: " and gives the reason.
Expected<void> write_output_file(const std::string& path, std::string_view content,
                                 const OutputFileOptions& options = {});

// Whether `path` is this process's standard output: it names descriptor 1 (/dev/stdout, /dev/fd/1,
// /proc/self/fd/1 or /proc/<own pid>/fd/1, directly or through links), or it is the very file or
// pipe descriptor 1 has open (same device and inode; character devices such as /dev/null or a
// terminal only by name, since many descriptors share them harmlessly).
bool is_standard_output(const std::string& path);

} // namespace cudadiag::output
