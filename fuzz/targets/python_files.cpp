// The files Python discovery reads without running Python: part 1 is a venv's pyvenv.cfg, part 2 a
// pyenv shim (the python3 first on PATH), part 3 the .python-version of the working directory,
// part 4 $PYENV_ROOT/version. Parts 1 and 4 are also read as the frameworks' build files
// (torch/version.py's `cuda`, TensorFlow's build_info.py `cuda_compute_capabilities`).
#include "core/environment.hpp"
#include "python/framework_builds.hpp"
#include "python/python_environments.hpp"
#include "targets.hpp"

#include <sys/stat.h>

namespace cudadiag::fuzz {

int python_files(const std::uint8_t* data, std::size_t size) {
  const auto parts = split_input(data, size, 4);
  for (const auto& text : {parts[0], parts[3]}) {
    static_cast<void>(python::python_string_assignment(text, "cuda"));
    if (const auto names = python::python_string_list_assignment(text, "cuda_compute_capabilities")) {
      for (const auto& name : *names) {
        if (const auto code = python::gpu_code_from_name(name)) {
          check(python::gpu_code_from_name(code->name()) == code,
                "a GPU code name that reads back differently");
        }
      }
    }
  }
  const auto root = fresh_dir("python");
  write_file(root + "/venv/pyvenv.cfg", parts[0]);
  write_file(root + "/venv/lib/python3.12/site-packages/.keep", "");
  write_file(root + "/pyenv/shims/python3", parts[1]);
  ::chmod((root + "/pyenv/shims/python3").c_str(), 0755);
  write_file(root + "/pyenv/versions/3.12.1/bin/python3", "#!/bin/sh\n");
  ::chmod((root + "/pyenv/versions/3.12.1/bin/python3").c_str(), 0755);
  write_file(root + "/pyenv/versions/3.12.1/lib/python3.12/os.py", "");
  write_file(root + "/work/.python-version", parts[2]);
  write_file(root + "/pyenv/version", parts[3]);

  python::PythonSearchOptions options;
  options.system_interpreters.clear();
  Environment with_venv;
  with_venv.cwd = root + "/work";
  with_venv.set("VIRTUAL_ENV", root + "/venv");
  static_cast<void>(python::discover_python_environments(with_venv, options));
  Environment with_pyenv;
  with_pyenv.cwd = root + "/work";
  with_pyenv.set("PATH", root + "/pyenv/shims:" + root + "/pyenv/versions/3.12.1/bin");
  with_pyenv.set("PYENV_ROOT", root + "/pyenv");
  static_cast<void>(python::discover_python_environments(with_pyenv, options));
  return 0;
}

} // namespace cudadiag::fuzz
