#pragma once
// The Python environments whose site-packages cuda-pathfinder would search, and their site
// directories in cuda-pathfinder's order (`_utils/find_sub_dirs.py`): site.getsitepackages(), with
// the user site inserted at index 0 outside a venv and at index 1 inside one, when
// site.ENABLE_USER_SITE. By default nothing is run: the interpreter, its prefix, version and
// site.py flavour (generic CPython, Debian's dist-packages, lib64 platlibdir) are read from the
// Environment snapshot and the file system, following what CPython's getpath/site.py and pyenv's
// shims would do. Every problem met on the way (unset or bad variables, broken symlinks, garbled
// pyvenv.cfg, missing pyenv versions) is a trace line, never a failure or an exception.

#include "core/environment.hpp"
#include "core/expected.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace cudadiag::python {

struct PythonEnvironment {
  // How it was found: "VIRTUAL_ENV", "CONDA_PREFIX", "python3 on PATH", "system python3",
  // "--python".
  std::string label;
  // One line saying why this is the environment, e.g. "/root/.pyenv/shims/python3 is a pyenv shim;
  // version 3.11.7 from /root/.pyenv/version".
  std::string how;
  std::string interpreter; // the interpreter binary, realpath where possible; "" if unknown
  std::string prefix;      // sys.prefix
  std::string base_prefix; // sys.base_prefix; equals prefix outside a venv, "" if a venv's is unknown
  std::string version;     // "3.11" (major.minor); "" if unknown
  bool is_venv = false;
  // pyvenv.cfg's include-system-site-packages; as in CPython's site.py a missing key means true.
  bool include_system_site_packages = false;
  // site.ENABLE_USER_SITE: false in a venv without system site packages and when PYTHONNOUSERSITE
  // is set non-empty.
  bool user_site_enabled = false;
  // The existing directories among getsitepackages() plus the user site, in cuda-pathfinder's
  // order; a directory reached twice (by a symlink such as a venv's lib64 -> lib) is listed once.
  std::vector<std::string> site_dirs;
  // site.getusersitepackages() when the user site is enabled (it need not exist), else "". CPython's
  // sys.path holds it before the other site directories (site.main adds it first).
  std::string user_site;
  // Whether this is the interpreter cuda-pathfinder would run in; at most one per discovery.
  bool primary = false;
};

// $VIRTUAL_ENV names a venv that `python3` does not run (a shell where the venv was activated, then
// PATH changed, or the variable was exported by hand): Python ignores the variable, so its site
// directories are not searched by CUDA Python.
struct InactiveVirtualEnv {
  std::string virtual_env; // the venv the variable names (absolute)
  std::string interpreter; // what `python3` on PATH runs
  std::string prefix;      // that interpreter's sys.prefix
  std::string how;         // how PATH led there (PythonEnvironment::how)
};

struct PythonDiscovery {
  // Deduplicated by prefix (compared by realpath); the primary environment, if any, first.
  std::vector<PythonEnvironment> environments;
  // Set when $VIRTUAL_ENV and `python3` on PATH disagree (not when an interpreter was named: the
  // answers are then for that one).
  std::optional<InactiveVirtualEnv> virtual_env_inactive;
  // What was looked at and why it was accepted or rejected, one printable line each (bytes that
  // are not UTF-8 and control characters appear as \xNN).
  std::vector<std::string> trace;
};

struct PythonSearchOptions {
  // Interpreters listed after the snapshot's own (never primary) when their prefix is new, so that
  // e.g. Debian's dist-packages are searched and reported too. Tests replace them.
  std::vector<std::string> system_interpreters = {"/usr/bin/python3"};
};

// Finds the environments described by the snapshot, spawning no process. Sources:
//   1. $VIRTUAL_ENV holding a pyvenv.cfg;
//   2. $CONDA_PREFIX holding a Python (lib/python3.X/site-packages or conda-meta/python-3.X*.json);
//   3. the first `python3` on $PATH: a venv's (pyvenv.cfg next to it or one level up, checked
//      before symlinks are resolved), a pyenv shim (resolved as pyenv would: PYENV_VERSION, else
//      .python-version from PYENV_DIR or the working directory up to /, else $PYENV_ROOT/version,
//      each name falling back to the next and finally to "system", the next python3 on PATH past
//      the shims), or a plain interpreter (realpath; prefix found by the lib/python3.X/os.py
//      landmark above its directory);
//   4. options.system_interpreters whose prefix is not already listed.
// The primary environment, listed first, is the one `python3` runs (3.; listed under the label of
// 1. or 2. when it is the same environment); the others follow in source order. Only when PATH has
// no python3 does the first of 1., 2. and 4. lead.
// Relative values (VIRTUAL_ENV, CONDA_PREFIX, PATH entries, an empty PATH entry) are taken
// relative to env.cwd and the trace says so. Files are read at most 64 KiB each.
PythonDiscovery discover_python_environments(const Environment& env, const PythonSearchOptions& options = {});

// Runs `python_exe` (a path, relative to env.cwd, or a bare name searched on the snapshot's PATH)
// with the snapshot's variables, in env.cwd, stdin on /dev/null, no shell, in its own process
// group, to print sys.prefix, sys.base_prefix, the version, site.getsitepackages(),
// site.ENABLE_USER_SITE and site.getusersitepackages(). That environment is primary (label
// "--python"); the snapshot's others with different prefixes follow, and the snapshot's trace is
// appended. An Error says what went wrong: not found, not executable, could not be started,
// exited with a status or a signal (with the last line of its stderr), printed nothing usable, or
// did not finish within `timeout` (its process group is then killed).
Expected<PythonDiscovery>
discover_python_environments_with(const Environment& env, const std::string& python_exe,
                                  std::chrono::milliseconds timeout = std::chrono::seconds{5},
                                  const PythonSearchOptions& options = {});

} // namespace cudadiag::python
