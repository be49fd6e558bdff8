#pragma once
// The site directories of a Python environment as CPython's site.py and getpath would compute
// them, without running Python (internal to src/python).

#include "python/python_environments.hpp"
#include "python/search_context.hpp"

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cudadiag::python {

// How the base interpreter's site.getsitepackages() builds its list.
struct SiteFlavor {
  bool debian = false; // Debian/Ubuntu's patched site.py: dist-packages
  bool lib64 = false;  // sys.platlibdir == "lib64" (Fedora, RHEL, openSUSE)
};

// The flavour of the installation at `base_prefix` (its lib64/pythonX.Y/os.py, its site.py's text).
SiteFlavor detect_flavor(const Context& ctx, const std::string& base_prefix, const PyVersion& version);

// cuda-pathfinder's parent dirs: getsitepackages() with the user site inserted at index 0 outside
// a venv and 1 inside, then (as its find_sub_dirs does) only the existing directories. A directory
// reached twice is kept once. `who` labels the trace line.
std::vector<std::string> order_site_dirs(const Context& ctx, const std::string& who,
                                         std::vector<std::string> site_packages, const std::string& user_site,
                                         bool is_venv);

// Fills pe.site_dirs for sys.prefix/base_prefix `prefixes` from pe.version, pe.is_venv and
// pe.user_site_enabled; an unknown version gives none (traced).
void fill_site_dirs(const Context& ctx, PythonEnvironment& pe, const std::vector<std::string>& prefixes,
                    SiteFlavor flavor);

// CPython's getpath: the first directory at or above `start` holding lib/pythonX.Y/os.py (or
// lib64/…). With the version unknown, any pythonX.Y is accepted. Returns the prefix and version.
std::optional<std::pair<std::string, PyVersion>> find_prefix_by_landmark(const std::string& start,
                                                                         std::optional<PyVersion> version);

} // namespace cudadiag::python
