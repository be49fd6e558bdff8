#include "python/interpreter.hpp"

#include "python/site_dirs.hpp"
#include "python/venv.hpp"

namespace cudadiag::python {

std::optional<PythonEnvironment> interpreter_environment(const Context& ctx, std::string label,
                                                         const std::string& exe) {
  const auto exe_dir = fs::parent(exe);
  if (const auto cfg = venv_config_for(exe_dir); !cfg.empty()) {
    auto pe = venv_environment(ctx, std::move(label), fs::parent(exe_dir), cfg);
    if (pe) {
      pe->how = exe + " is in " + pe->how;
    }
    return pe;
  }
  auto real = fs::real_path(exe);
  if (!real) {
    ctx.note("cannot resolve " + exe + ": " + real.error().message);
    return std::nullopt;
  }
  PythonEnvironment pe;
  pe.label = std::move(label);
  pe.interpreter = *real;
  auto version = version_from_exe_name(fs::basename(exe));
  if (!version) {
    version = version_from_exe_name(fs::basename(*real));
  }
  const auto real_dir = fs::parent(*real);
  if (auto landmark = find_prefix_by_landmark(real_dir, version)) {
    pe.prefix = landmark->first;
    version = landmark->second;
  } else if (fs::basename(real_dir) == "bin") {
    pe.prefix = fs::parent(real_dir);
    ctx.note(*real + ": no lib/pythonX.Y/os.py landmark above it; prefix taken as " + pe.prefix);
    if (!version) {
      version = newest_python_entry(fs::join(pe.prefix, "lib"),
                                    [](const std::string& p) { return fs::is_directory(p); });
    }
  } else {
    ctx.note(
        *real +
        ": no lib/pythonX.Y/os.py landmark above it and not in a bin directory; not a Python installation");
    return std::nullopt;
  }
  pe.base_prefix = pe.prefix;
  if (version) {
    pe.version = version->text();
  }
  pe.user_site_enabled = !ctx.no_user_site;
  pe.how = exe + (*real != exe ? " -> " + *real : std::string()) + ", prefix " + pe.prefix + ", Python " +
           (pe.version.empty() ? "version unknown" : pe.version);
  SiteFlavor flavor;
  if (version) {
    flavor = detect_flavor(ctx, pe.prefix, *version);
  }
  fill_site_dirs(ctx, pe, {pe.prefix}, flavor);
  return pe;
}

} // namespace cudadiag::python
