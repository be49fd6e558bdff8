#pragma once
// Virtual environments (internal to src/python): pyvenv.cfg as CPython's site.py reads it, and the
// environment a venv directory describes.

#include "python/python_environments.hpp"
#include "python/search_context.hpp"

#include <optional>
#include <string>

namespace cudadiag::python {

struct VenvConfig {
  std::string home;           // "" when absent
  bool include_system = true; // CPython's site.py: a missing key means true
  bool include_key_present = false;
  std::optional<PyVersion> version;
  std::string version_text;
};

// The keys of the pyvenv.cfg at `path` (lines "key = value", keys case-insensitive); nullopt,
// traced, when it cannot be read. Garbage lines, non-UTF-8 text and bad versions are trace lines.
std::optional<VenvConfig> read_venv_config(const Context& ctx, const std::string& path);

// The pyvenv.cfg that CPython's site.py would use for an interpreter in `exe_dir`: next to it,
// else one level up. "" if none.
std::string venv_config_for(const std::string& exe_dir);

// The realpath of `prefix`/bin/python3 (else bin/python) when executable; "" if neither is.
std::string interpreter_in(const std::string& prefix);

// The venv at `venv` described by `cfg_path`: its base prefix (from home), version, whether system
// and user site packages are included, and its site directories. nullopt when the cfg is unreadable.
std::optional<PythonEnvironment> venv_environment(const Context& ctx, std::string label,
                                                  const std::string& venv, const std::string& cfg_path);

// The venv $VIRTUAL_ENV names (label "VIRTUAL_ENV"); nullopt, traced, when unset, empty, not a
// directory or without pyvenv.cfg. Python itself ignores the variable: see python3_on_path().
std::optional<PythonEnvironment> from_virtual_env(const Context& ctx);

} // namespace cudadiag::python
