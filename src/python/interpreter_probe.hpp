#pragma once
// Running an interpreter to ask it for its site directories (internal to src/python): what
// `--python X` does, once.

#include "core/expected.hpp"
#include "python/python_environments.hpp"
#include "python/search_context.hpp"

#include <chrono>
#include <string>

namespace cudadiag::python {

// `python_exe` as a file to run: a path (relative to env.cwd) or a bare name searched on the
// snapshot's PATH. Error, naming it, when it is empty, not found, does not exist or is not an
// executable file.
Expected<std::string> resolve_interpreter(const Context& ctx, const std::string& python_exe);

// Runs `exe` (resolve_interpreter's answer) with the snapshot's variables, in env.cwd, stdin on
// /dev/null, no shell, in its own process group, to print sys.prefix, sys.base_prefix, the
// version, site.getsitepackages(), site.ENABLE_USER_SITE and site.getusersitepackages(). Returns
// that environment (label "--python", primary). An Error says what went wrong: could not be
// started, exited with a status or a signal (with the last line of its stderr), printed nothing
// usable, or did not finish within `timeout` (its process group is then killed).
Expected<PythonEnvironment> ask_interpreter(const Context& ctx, const std::string& exe,
                                            std::chrono::milliseconds timeout);

} // namespace cudadiag::python
