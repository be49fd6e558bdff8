#pragma once
// Turns sightings into candidates: groups sightings of the same file, then inspects each file
// (realpath, ELF facts, version without loading, stub, usability). Reads headers only.

#include "core/environment.hpp"
#include "discovery/candidate.hpp"
#include "probes/catalog.hpp"
#include "probes/search_strategies.hpp"
#include "versions/package_db.hpp"

#include <vector>

namespace cudadiag::discovery {

// Groups `sightings` (in search order) by file identity, then inspects each distinct file.
// `packages` (may be null) answers which system package installed a file.
// `dirs` (may be null) is the run's shared directory listings (site-packages read once, not per
// candidate). With `packages_when_read`, a package database still being read is not waited for:
// the candidates that would ask it are marked (Candidate::version_awaits_packages) for
// complete_versions.
std::vector<Candidate> build_candidates(const probes::ComponentSpec& spec,
                                        const std::vector<Sighting>& sightings, const SystemLayout& layout,
                                        const versions::PackageDatabase* packages = nullptr,
                                        const probes::DirectoryCache* dirs = nullptr,
                                        bool packages_when_read = false);

// The versions build_candidates left to the package database (version_awaits_packages), asked now
// (waiting for its read); the marks are cleared.
void complete_versions(const probes::ComponentSpec& spec, std::vector<Candidate>& candidates,
                       const SystemLayout& layout, const versions::PackageDatabase* packages,
                       const probes::DirectoryCache* dirs);

// The version of a candidate, read without loading it: the real file name when it extends the
// SONAME's number, header macros, wheel metadata, a toolkit's version.json or dist-info folder,
// conda-meta, the system package database (dpkg, RPM) when `packages` is given, and last any other
// number in the real file name, in that order.
std::optional<versions::FoundVersion> find_version(const probes::ComponentSpec& spec,
                                                   const Sighting& sighting,
                                                   const std::optional<std::string>& realpath,
                                                   const SystemLayout& layout,
                                                   const versions::PackageDatabase* packages = nullptr,
                                                   const probes::DirectoryCache* dirs = nullptr);

// Whether a library file is the CUDA Toolkit's link-time stub of a driver library rather than the
// driver itself: `path` or `realpath` has a stubs/ directory component, or, wherever it lives and
// whatever it is called, its ELF facts say so (stub_by_elf_facts). Reads the file's ELF facts
// when `elf` is null.
bool looks_like_stub(const std::string& path, const std::string& realpath, const elf::ElfInfo* elf = nullptr);

// The stub's ELF facts: the SONAME of a driver library (libcuda.so.1, libnvidia-ml.so.1), no
// DT_NEEDED entry at all and a size under k_stub_max_bytes. The toolkit's stubs only return
// CUDA_ERROR_STUB_LIBRARY and are linked without libc; a real driver needs libc, libm, libdl,
// libpthread and librt and is tens of megabytes. A test double or shim links libc, so it is no stub
// however small it is.
bool stub_by_elf_facts(const elf::ElfInfo& elf, std::uintmax_t file_size);
inline constexpr std::uintmax_t k_stub_max_bytes = std::uintmax_t{4} << 20U;

} // namespace cudadiag::discovery
