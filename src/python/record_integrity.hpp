#pragma once
// RECORD integrity: the library files the CUDA distributions of one Python environment installed
// (nvidia-*, cuda-* and the frameworks), compared with what their dist-info RECORD says of each
// (PEP 376 / PEP 627: "path,sha256=<urlsafe base64>,size"). Sizes always (one stat per file);
// SHA-256 only when asked (every library file read whole). Nothing is loaded or run.

#include "python/distributions.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::python {

// Whether the RECORD of distribution `canonical` (a PEP 503 name) is checked: nvidia-*, cuda-*
// and the frameworks whose CUDA pins are checked (is_framework).
bool record_checked(std::string_view canonical);

// A library file: its name has ".so" at its end or before a version (libnccl.so.2,
// _C.cpython-311-x86_64-linux-gnu.so).
bool is_library_file_name(std::string_view name);

// One distribution's claim on a file, with how the file on disk compares with it.
struct RecordClaim {
  std::string distribution;          // PEP 503 name ("nvidia-nccl-cu11")
  std::string version;               // as its dist-info says ("2.14.3")
  std::string dist_info;             // its *.dist-info directory
  std::optional<std::uint64_t> size; // the RECORD's size; nullopt when the line has none
  std::string sha256;                // the RECORD's digest after "sha256=" ("" when none)
  bool size_matches = false;         // the file exists and has that size
  // false when conda installed the distribution (its INSTALLER says so): conda rewrites its prefix
  // inside binaries, so their digests differ from the RECORD's though the files are the same.
  bool digest_comparable = true;
  // The file's digest against the RECORD's: nullopt when hashes were not asked for, the file is
  // missing, the RECORD has no sha256 or the digest is not comparable.
  std::optional<bool> hash_matches;
  // Whether this claim describes the file on disk: its size matches and, when hashed, its digest.
  [[nodiscard]] bool matches() const { return size_matches && hash_matches.value_or(true); }
};

struct RecordedFile {
  std::string path;                  // absolute: the site directory joined with the RECORD path
  std::string relative;              // as the RECORD writes it ("nvidia/nccl/lib/libnccl.so.2")
  std::optional<std::uint64_t> size; // on disk; nullopt when the file is missing
  std::string sha256;                // on disk, RECORD's encoding; "" when not hashed
  std::vector<RecordClaim> claims;   // in the order the distributions are listed
};

struct RecordCheck {
  bool hashes = false;           // whether digests were compared
  std::size_t distributions = 0; // RECORDs read
  std::size_t files = 0;         // library files compared
  // Files two or more distributions claim, whatever the file on disk matches.
  std::vector<RecordedFile> shared;
  // Files one distribution claims that differ from its RECORD (size, digest) or are missing.
  std::vector<RecordedFile> differing;
};

// The library files of the distributions in `installed` that record_checked() accepts, compared
// with their RECORDs; `hashes`: also their SHA-256. RECORDs over 64 MiB are not read.
RecordCheck check_records(const std::vector<Distribution>& installed, bool hashes);

} // namespace cudadiag::python
