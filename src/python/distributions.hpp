#pragma once
// The distributions installed in a Python environment, read from their `*.dist-info/METADATA`
// files (no Python is run): name, version and Requires-Dist, as importlib.metadata sees them —
// the first site directory that has a name wins, as on sys.path.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::python {

struct Distribution {
  std::string name;                       // as METADATA spells it ("nvidia-cudnn-cu13")
  std::string canonical_name;             // PEP 503 ("nvidia-cudnn-cu13")
  std::string version;                    // as written
  std::string dist_info;                  // the *.dist-info directory
  std::vector<std::string> requires_dist; // every Requires-Dist value, in order
};

// Every distribution in `site_dirs` (in order; a name seen in an earlier directory hides later
// ones). METADATA is read (its Requires-Dist with it) for the names `read_requirements` accepts
// (PEP 503 names; every name when it is empty); the others are known by their dist-info directory's
// name alone ("<name>-<version>.dist-info"), so a large environment costs a directory listing.
// METADATA files over 4 MiB and dist-info directories without a Name and Version are skipped.
std::vector<Distribution>
installed_distributions(const std::vector<std::string>& site_dirs,
                        const std::function<bool(std::string_view)>& read_requirements = {});

// One PEP 508 requirement: "nvidia-cudnn-cu13==9.19.0.56; platform_system == \"Linux\"".
struct Requirement {
  std::string name; // as written
  std::vector<std::string> extras;
  std::string specifier; // "==9.19.0.56" ("" for any version; the old "(>=1.0)" form unwrapped)
  std::string marker;    // "" when none
};
// nullopt when `text` is not a requirement this reader understands (a URL requirement, say).
std::optional<Requirement> parse_requirement(std::string_view text);

} // namespace cudadiag::python
