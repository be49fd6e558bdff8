#pragma once
// Turns sightings into candidates: groups sightings of the same file, then inspects each file
// (realpath, ELF facts, version without loading, stub, usability). Reads headers only.

#include "core/environment.hpp"
#include "discovery/candidate.hpp"
#include "probes/catalog.hpp"

#include <vector>

namespace cudadiag::discovery {

// Groups `sightings` (in search order) by file identity, then inspects each distinct file.
std::vector<Candidate> build_candidates(const probes::ComponentSpec& spec, const std::vector<Sighting>& sightings,
                                        const SystemLayout& layout);

// The version of a candidate, read without loading it: the real file name, wheel metadata, a
// toolkit's version.json or dist-info folder, conda-meta, or header macros, in that order.
std::optional<versions::FoundVersion> find_version(const probes::ComponentSpec& spec, const Sighting& sighting,
                                                   const std::optional<std::string>& realpath,
                                                   const SystemLayout& layout);

// Whether a library file is the toolkit's link-time stub rather than the real library: `path` or
// `realpath` has a stubs/ directory component. (A stub copied elsewhere is caught at verification,
// when cuInit returns 34; file size is no rule: test doubles and shims are small too.)
bool looks_like_stub(const std::string& path, const std::string& realpath);

} // namespace cudadiag::discovery
