#pragma once
// What `import torch` loads before torch's CUDA library, as torch/__init__.py's _load_global_deps
// does it, predicted from the files (nothing is loaded, Python is not run).
//
// The model was read from the released torch/__init__.py of torch 2.8.0, 2.9.0, 2.9.1, 2.10.0 and
// 2.11.0 (the wheels on PyPI):
//  1. ctypes.CDLL(torch/lib/libtorch_global_deps.so, RTLD_GLOBAL).
//  2. When that succeeds and /proc/self/maps then names a cudart, _preload_cuda_deps runs anyway,
//     its exceptions swallowed (the first library it cannot find or load ends it):
//       torch < 2.9: only when the mapped path has "nvidia/cuda_runtime/lib/libcudart.so";
//                    preloads nvrtc, nvJitLink;
//       torch 2.9:   "libcudart.so" mapped; preloads nvrtc, nvrtc-builtins, nvJitLink;
//       torch 2.10:  "libcudart.so" mapped; preloads the whole list below (nvToolsExt optional);
//       torch 2.11+: the same with libcublasLt first.
//  3. When it fails with an error that names one of the listed libraries, every library of the list
//     is preloaded (one not found raises ValueError: `import torch` fails), then step 1 again; an
//     error naming none of them is raised as it is.
// Each preload is a glob, "libcudart.so.*[0-9]", tried per sys.path entry in
// <entry>/nvidia/<folder>/lib, <entry>/nvidia/cu<CUDA major>/lib (torch 2.9+) and <entry>/<folder>/lib;
// the first entry with a match wins, and within it the first match in that order, each directory
// in the order the file system lists it (os.scandir, unsorted): the order that let a CUDA 11
// libcudart.so.11.0 be picked before CUDA 12's (pytorch/pytorch#147001). The pick is opened by its
// path (ctypes.CDLL): another file with the same SONAME as one already loaded is loaded beside it.
// Whether a preload opens is judged by its dependencies alone; the symbols of everything loaded are
// checked once, in the framework's closure. Not modelled: sys.path entries with glob characters,
// the '' entry (the working directory).

#include "linkage/framework_import.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::linkage {

// The modelled import of the torch whose global-deps library is `global_deps`, version
// `torch_version` (its dist-info's), built for CUDA `cuda` ("13.0"; "" when torch/version.py has
// none), in a process whose sys.path is `sys_path`.
FrameworkImport model_torch_import(const std::string& global_deps, std::string_view torch_version,
                                   std::string_view cuda, const std::vector<std::string>& sys_path,
                                   const loader::SearchSetting& setting, loader::ObjectStore& store);

// The names in `directory` matching the glob `pattern` (Python's glob: fnmatch, names starting with
// '.' left out), in the order the file system lists them; empty when it cannot be read.
std::vector<std::string> glob_in_directory_order(const std::string& directory, std::string_view pattern);

} // namespace cudadiag::linkage
