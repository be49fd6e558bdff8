#pragma once
// The GPU code a library carries: the SASS and PTX entries of the fatbinaries in its .nv_fatbin
// section, read from the entry headers alone (no payload is read or decompressed, nothing is run:
// the answer `cuobjdump --list-elf --list-ptx` gives). A framework's kernels run on a GPU only when
// one of them fits its compute capability; torch's libtorch_cuda.so answers "which GPUs can this
// torch use" without importing it.
//
// The layout (checked against cuobjdump on nvcc's output for sm_80, sm_90a, sm_100f, sm_121 and
// compute_75/90/103f/120a): a fatbinary is a 16-byte header (magic 0xBA55ED50, version 1, header
// size, payload size) followed by entries; each entry header has its kind at byte 0 (1 PTX, 2 SASS),
// its own size at 4, the padded payload size at 8, the PTX ISA (minor, major) at 24, the
// architecture at 28 (90 for sm_90) and flags at 40 (0x100000: arch-specific "a", 0x200000:
// family "f"); the next entry follows its payload. A section holds many fatbinaries back to back.

#include "core/expected.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace cudadiag::elf {

enum class GpuCodeKind { sass, ptx };

// One kind of GPU code (all kernels compiled for it count once).
struct GpuCode {
  GpuCodeKind kind = GpuCodeKind::sass;
  int arch = 0;     // 90 for sm_90 and compute_90, 121 for sm_121
  char variant = 0; // 0, 'a' (arch-specific: that GPU only) or 'f' (family: that major, this minor or newer)
  int ptx_isa = 0;  // PTX only: the newest PTX ISA among its entries, major * 10 + minor (90 = ISA 9.0)

  // "sm_90a", "compute_90", "sm_100f".
  [[nodiscard]] std::string name() const;
  // Whether a GPU of compute capability major.minor can run it: SASS runs on its own major at this
  // minor or newer ("a": exactly that GPU); PTX is compiled by the driver for this architecture or
  // any newer one ("a": exactly that GPU, "f": its own major).
  [[nodiscard]] bool runs_on(int major, int minor) const;

  friend bool operator==(const GpuCode&, const GpuCode&) = default;
};

struct GpuCodeList {
  std::vector<GpuCode> codes;    // distinct kinds, SASS first, then by architecture and variant
  std::uint64_t fatbinaries = 0; // how many were read
  std::uint64_t entries = 0;     // SASS and PTX entries (other kinds are not counted)
  // Set when the section ends in a truncated or unrecognisable fatbinary: what came before it is
  // in `codes`, the rest is unknown.
  std::optional<std::string> problem;

  // The codes that can run on a GPU of compute capability major.minor (runs_on).
  [[nodiscard]] std::vector<GpuCode> for_gpu(int major, int minor) const;
};

// The GPU code of `path` (symlinks followed). An ELF without .nv_fatbin has none (an empty list).
// Errors are user-facing sentences: "cannot open: ...", "not an ELF file (bad magic)", ...
Expected<GpuCodeList> read_gpu_code(const std::string& path);

// The same over an in-memory image (the whole file).
Expected<GpuCodeList> parse_gpu_code(std::span<const std::byte> image);

} // namespace cudadiag::elf
