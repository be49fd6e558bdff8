#pragma once
// The environment an interpreter file belongs to (internal to src/python), found without running it.

#include "python/python_environments.hpp"
#include "python/search_context.hpp"

#include <optional>
#include <string>

namespace cudadiag::python {

// An interpreter at `exe` (absolute, as found, symlinks unresolved): a venv's when a pyvenv.cfg sits
// next to it or one level up, else a plain installation whose prefix is found from its realpath
// (the lib/pythonX.Y/os.py landmark, else the parent of its bin directory). nullopt, traced, when
// it is neither.
std::optional<PythonEnvironment> interpreter_environment(const Context& ctx, std::string label,
                                                         const std::string& exe);

} // namespace cudadiag::python
