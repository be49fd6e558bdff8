#pragma once
// What JAX's CUDA plugin opens before its PJRT library, as jax_plugins/xla_cudaNN/__init__.py's
// initialize() does it (run when JAX first sets up its backends, e.g. jax.devices()), predicted
// from the files. Read in jax-cuda12-pjrt and jax-cuda13-pjrt 0.11.2 (the same code): _load_nvidia_libraries
// calls _load(module, names) in a fixed order, and _load imports the Python package nvidia.<module> and opens
// <its first directory>/lib/<name> with ctypes; a module that is not installed, a file that is not
// there or fails to load is passed over silently. The plugin library (xla_cuda_plugin.so) is opened
// after them, and binds what they loaded by SONAME.
// nvidia.<module> is a namespace package: its first directory is <sys.path entry>/nvidia/<module>
// of the first sys.path entry that has one.

#include "linkage/framework_import.hpp"

#include <string>
#include <vector>

namespace cudadiag::linkage {

FrameworkImport model_jax_import(const std::string& plugin_package, const std::vector<std::string>& sys_path,
                                 const loader::SearchSetting& setting, loader::ObjectStore& store);

} // namespace cudadiag::linkage
