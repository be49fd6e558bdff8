#pragma once
// Conda environments (internal to src/python): the Python that $CONDA_PREFIX holds, found from its
// lib/pythonX.Y/site-packages or its conda-meta records, without running it.

#include "python/python_environments.hpp"
#include "python/search_context.hpp"

#include <optional>

namespace cudadiag::python {

// The environment $CONDA_PREFIX names (label "CONDA_PREFIX"); nullopt, traced, when unset, empty,
// not a directory or holding no Python.
std::optional<PythonEnvironment> from_conda_prefix(const Context& ctx);

} // namespace cudadiag::python
