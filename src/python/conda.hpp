#pragma once
// Conda environments (internal to src/python): the Python that $CONDA_PREFIX holds, found from its
// lib/pythonX.Y/site-packages or its conda-meta records, without running it.

#include "python/python_environments.hpp"
#include "python/search_context.hpp"

#include <optional>
#include <string>

namespace cudadiag::python {

// The environment $CONDA_PREFIX names (label "CONDA_PREFIX"); nullopt, traced, when unset, empty,
// not a directory or holding no Python.
std::optional<PythonEnvironment> from_conda_prefix(const Context& ctx);

// The conda package whose record in <prefix>/conda-meta lists `relative` (a path under the prefix,
// e.g. "lib/libnvrtc.so.13"): the record's "name", else its file name without version and build.
// Records over 4 MiB are read only that far. nullopt when no record lists it.
std::optional<std::string> owning_conda_package(const std::string& prefix, const std::string& relative);

} // namespace cudadiag::python
