#pragma once
// pyenv shims (internal to src/python): which installed version a shim would exec, resolved the way
// pyenv-exec, pyenv-version-name and pyenv-latest do, without running pyenv.

#include "python/path_search.hpp"
#include "python/python_environments.hpp"
#include "python/search_context.hpp"

#include <cstddef>
#include <optional>
#include <string>

namespace cudadiag::python {

// Whether the python3 found on PATH at `exe` is a pyenv shim (a "#!" script naming pyenv, or an
// unreadable file in a shims/ directory beside versions/); `content` receives its first 64 KiB.
bool is_pyenv_shim(const Context& ctx, const std::string& exe, std::string& content);

// What the shim at `shim` (found at PATH index `index`) would exec, as pyenv-exec/pyenv-which
// resolve it: each selected version's bin/python3 (PYENV_VERSION, else .python-version from
// PYENV_DIR or the working directory up to /, else $PYENV_ROOT/version), then "system" (the next
// python3 on PATH past the shims). nullopt, traced, when none of them runs.
std::optional<PythonEnvironment> pyenv_environment(const Context& ctx, PathSearch& path, std::size_t index,
                                                   const std::string& shim, const std::string& content);

} // namespace cudadiag::python
