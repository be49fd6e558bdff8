#include "python/venv.hpp"

#include "python/site_dirs.hpp"

namespace cudadiag::python {

std::optional<VenvConfig> read_venv_config(const Context& ctx, const std::string& path) {
  auto content = read_bounded(ctx, path);
  if (!content) {
    ctx.note("cannot read " + path + ": " + content.error().message);
    return std::nullopt;
  }
  if (!is_valid_utf8(*content)) {
    ctx.note(path + " is not valid UTF-8 (CPython's site.py reads it as UTF-8 and would fail)");
  }
  VenvConfig cfg;
  std::string version;
  std::string version_info;
  size_t keys = 0;
  for (const auto line : split_lines(*content)) {
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) {
      continue;
    }
    ++keys;
    const auto key = to_lower(trim(line.substr(0, eq)));
    const auto value = std::string(trim(line.substr(eq + 1)));
    if (key == "home") {
      cfg.home = value;
    } else if (key == "include-system-site-packages") {
      cfg.include_system = to_lower(value) == "true";
      cfg.include_key_present = true;
    } else if (key == "version") {
      version = value;
    } else if (key == "version_info") {
      version_info = value;
    }
  }
  if (keys == 0) {
    ctx.note(path + " has no key = value lines");
  }
  cfg.version_text = !version.empty() ? version : version_info;
  if (!cfg.version_text.empty()) {
    cfg.version = parse_major_minor(cfg.version_text);
    if (!cfg.version) {
      ctx.note(path + ": version \"" + cfg.version_text + "\" is not X.Y[.Z]; ignored");
    }
  }
  return cfg;
}

std::string venv_config_for(const std::string& exe_dir) {
  for (const auto& candidate :
       {fs::join(exe_dir, "pyvenv.cfg"), fs::join(fs::parent(exe_dir), "pyvenv.cfg")}) {
    if (fs::is_regular_file(candidate)) {
      return candidate;
    }
  }
  return {};
}

std::string interpreter_in(const std::string& prefix) {
  for (const char* name : {"bin/python3", "bin/python"}) {
    const auto exe = fs::join(prefix, name);
    if (fs::is_executable_file(exe)) {
      return real_or_same(exe);
    }
  }
  return {};
}

std::optional<PythonEnvironment> venv_environment(const Context& ctx, std::string label,
                                                  const std::string& venv, const std::string& cfg_path) {
  auto cfg = read_venv_config(ctx, cfg_path);
  if (!cfg) {
    return std::nullopt;
  }
  PythonEnvironment pe;
  pe.label = std::move(label);
  pe.prefix = venv;
  pe.is_venv = true;
  pe.include_system_site_packages = cfg->include_system;
  pe.interpreter = interpreter_in(venv);

  std::optional<PyVersion> version = cfg->version;
  std::string version_from = version ? "pyvenv.cfg" : "";
  if (!version) {
    version = newest_python_entry(fs::join(venv, "lib"), [](const std::string& p) {
      return fs::is_directory(fs::join(p, "site-packages"));
    });
    version_from = version ? "lib/pythonX.Y/site-packages" : "";
  }

  if (cfg->home.empty()) {
    ctx.note(cfg_path + " has no home key; the base interpreter is unknown");
  } else if (cfg->home.front() != '/') {
    ctx.note(cfg_path + ": home = " + cfg->home + " is not absolute; ignored");
  } else if (!fs::is_directory(cfg->home)) {
    ctx.note(cfg_path + ": home = " + cfg->home + " is not a directory; the base interpreter is unknown");
  } else {
    if (!version) {
      version =
          newest_python_entry(cfg->home, [](const std::string& p) { return fs::is_executable_file(p); });
      version_from = version ? "the interpreters in home" : "";
    }
    if (auto landmark = find_prefix_by_landmark(cfg->home, version)) {
      pe.base_prefix = landmark->first;
      if (!version) {
        version = landmark->second;
        version_from = "the base's lib/pythonX.Y";
      }
    } else if (fs::basename(cfg->home) == "bin") {
      pe.base_prefix = fs::parent(cfg->home);
      ctx.note(cfg_path + ": no lib/pythonX.Y/os.py above home; base prefix taken as " + pe.base_prefix);
    } else {
      ctx.note(cfg_path + ": no lib/pythonX.Y/os.py above home = " + cfg->home + "; base prefix unknown");
    }
  }
  if (version) {
    pe.version = version->text();
  }
  pe.user_site_enabled = !ctx.no_user_site && pe.include_system_site_packages;

  pe.how = "a venv (" + cfg_path + ": home = " + (cfg->home.empty() ? "?" : cfg->home) +
           ", include-system-site-packages = " + (pe.include_system_site_packages ? "true" : "false") +
           (cfg->include_key_present ? "" : " (key absent)") + ", version " +
           (pe.version.empty() ? "unknown" : pe.version + " from " + version_from) + ")";

  std::vector<std::string> prefixes = {pe.prefix};
  SiteFlavor flavor;
  if (pe.include_system_site_packages) {
    if (pe.base_prefix.empty()) {
      ctx.note(pe.label + ": system site packages are included but the base prefix is unknown");
    } else {
      prefixes.push_back(pe.base_prefix);
    }
  }
  if (!pe.base_prefix.empty() && version) {
    flavor = detect_flavor(ctx, pe.base_prefix, *version);
  }
  fill_site_dirs(ctx, pe, prefixes, flavor);
  return pe;
}

std::optional<PythonEnvironment> from_virtual_env(const Context& ctx) {
  const auto value = ctx.env.get("VIRTUAL_ENV");
  if (!value) {
    ctx.note("VIRTUAL_ENV is not set");
    return std::nullopt;
  }
  if (value->empty()) {
    ctx.note("VIRTUAL_ENV is set but empty; ignored");
    return std::nullopt;
  }
  const auto venv = absolute_path(ctx, "VIRTUAL_ENV", *value);
  if (!venv) {
    return std::nullopt;
  }
  if (!fs::is_directory(*venv)) {
    ctx.note("VIRTUAL_ENV=" + *venv + " is not a directory; ignored");
    return std::nullopt;
  }
  const auto cfg = fs::join(*venv, "pyvenv.cfg");
  if (!fs::is_regular_file(cfg)) {
    ctx.note("VIRTUAL_ENV=" + *venv + " has no pyvenv.cfg; ignored");
    return std::nullopt;
  }
  auto pe = venv_environment(ctx, "VIRTUAL_ENV", *venv, cfg);
  if (pe) {
    pe->how = "$VIRTUAL_ENV=" + *venv + " is " + pe->how;
  }
  return pe;
}

} // namespace cudadiag::python
