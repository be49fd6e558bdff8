#include "python/interpreter_probe.hpp"

#include "core/command_capture.hpp"
#include "python/path_search.hpp"
#include "python/site_dirs.hpp"
#include "python/venv.hpp"

namespace cudadiag::python {
namespace {

constexpr std::string_view k_probe_marker = "cudadiag:";

constexpr std::string_view k_probe_script = R"PY(import os, site, sys
if sys.version_info[0] < 3:
    sys.stdout.write('cudadiag:python2:%d.%d\n' % sys.version_info[:2])
    sys.exit(0)
def w(k, v=''):
    if not isinstance(v, bytes):
        v = os.fsencode(v)
    sys.stdout.write('cudadiag:' + k + ':' + v.hex() + '\n')
w('prefix', sys.prefix)
w('base_prefix', getattr(sys, 'base_prefix', sys.prefix))
w('version', '%d.%d' % sys.version_info[:2])
w('full_version', '%d.%d.%d' % sys.version_info[:3])
w('executable', sys.executable or '')
try:
    for p in site.getsitepackages():
        w('site', p)
except Exception as e:
    w('problem', 'site.getsitepackages() failed: %r' % (e,))
w('enable_user_site', repr(getattr(site, 'ENABLE_USER_SITE', None)))
try:
    w('user_site', site.getusersitepackages() or '')
except Exception as e:
    w('problem', 'site.getusersitepackages() failed: %r' % (e,))
w('end')
sys.stdout.flush()
)PY";

struct ProbeOutput {
  std::string prefix;
  std::string base_prefix;
  std::string version;
  std::string full_version;
  std::string executable;
  std::vector<std::string> site;
  std::string enable_user_site;
  std::string user_site;
  std::vector<std::string> problems;
  std::string python2; // "2.7" when the interpreter is Python 2 (the script stops there)
  bool complete = false;
};

ProbeOutput parse_probe_output(std::string_view text) {
  ProbeOutput out;
  for (const auto line : split_lines(text)) {
    if (line.substr(0, k_probe_marker.size()) != k_probe_marker) {
      continue;
    }
    const auto rest = line.substr(k_probe_marker.size());
    if (rest.starts_with("python2:")) { // a plain version, not hex: Python 2 has no bytes.hex()
      out.python2 = std::string(trim(rest.substr(8)));
      continue;
    }
    const auto colon = rest.find(':');
    if (colon == std::string_view::npos) {
      continue;
    }
    const auto key = rest.substr(0, colon);
    auto value = hex_decode(trim(rest.substr(colon + 1)));
    if (!value) {
      continue;
    }
    if (key == "prefix") {
      out.prefix = *value;
    } else if (key == "base_prefix") {
      out.base_prefix = *value;
    } else if (key == "version") {
      out.version = *value;
    } else if (key == "full_version") {
      out.full_version = *value;
    } else if (key == "executable") {
      out.executable = *value;
    } else if (key == "site") {
      out.site.push_back(*value);
    } else if (key == "enable_user_site") {
      out.enable_user_site = *value;
    } else if (key == "user_site") {
      out.user_site = *value;
    } else if (key == "problem") {
      out.problems.push_back(*value);
    } else if (key == "end") {
      out.complete = true;
    }
  }
  return out;
}

std::string last_line(std::string_view text) {
  const auto lines = split_lines(text);
  for (auto it = lines.rbegin(); it != lines.rend(); ++it) {
    if (!trim(*it).empty()) {
      return printable(trim(*it));
    }
  }
  return {};
}

std::string seconds_text(std::chrono::milliseconds timeout) {
  const auto ms = timeout.count();
  if (ms % 1000 == 0) {
    return std::to_string(ms / 1000) + " s";
  }
  return std::to_string(ms) + " ms";
}

} // namespace

Expected<std::string> resolve_interpreter(const Context& ctx, const std::string& python_exe) {
  if (python_exe.empty()) {
    return Error{"--python: no interpreter given"};
  }
  std::string exe;
  if (python_exe.find('/') != std::string::npos) {
    auto absolute = absolute_path(ctx, "--python", python_exe);
    if (!absolute) {
      return Error{"--python " + printable(python_exe) +
                   ": relative path and the working directory is unknown"};
    }
    exe = *absolute;
  } else {
    std::vector<std::string> ignored;
    const Context quiet{ctx.env, ignored};
    PathSearch path(quiet, ctx.env.get("PATH").value_or(""));
    auto found = path.find(python_exe);
    if (!found) {
      return Error{"--python " + printable(python_exe) + ": not found on PATH"};
    }
    exe = found->second;
    ctx.note("--python " + python_exe + ": found on PATH at " + exe);
  }
  if (!fs::exists(exe)) {
    return Error{"--python " + printable(exe) + ": does not exist"};
  }
  if (!fs::is_executable_file(exe)) {
    return Error{"--python " + printable(exe) + ": not an executable file"};
  }
  return exe;
}

Expected<PythonEnvironment> ask_interpreter(const Context& ctx, const std::string& exe,
                                            std::chrono::milliseconds timeout) {
  auto run = capture_command(ctx.env, {exe, "-c", std::string(k_probe_script)}, timeout);
  if (!run) {
    return Error{"--python " + printable(exe) + ": " + run.error().message};
  }
  if (run->timed_out) {
    return Error{"--python " + printable(exe) + ": did not finish within " + seconds_text(timeout) +
                 "; killed"};
  }
  const std::string stderr_tail = last_line(run->err);
  const std::string stderr_note = stderr_tail.empty() ? "" : ": " + stderr_tail;
  if (run->signal) {
    return Error{"--python " + printable(exe) + ": killed by signal " + std::to_string(*run->signal) +
                 stderr_note};
  }
  if (run->exit_code.value_or(0) != 0) {
    return Error{"--python " + printable(exe) + ": exited with status " + std::to_string(*run->exit_code) +
                 stderr_note};
  }
  const auto probe = parse_probe_output(run->out);
  if (!probe.python2.empty()) {
    return Error{"--python " + printable(exe) + " is Python " + printable(probe.python2) +
                 "; cudadiag needs Python 3 (CUDA Python and the CUDA wheels are Python 3 only)"};
  }
  if (!probe.complete || probe.prefix.empty()) {
    return Error{"--python " + printable(exe) + ": printed no usable answer (is it Python 3?)" + stderr_note};
  }
  for (const auto& problem : probe.problems) {
    ctx.note("--python " + exe + ": " + problem);
  }

  PythonEnvironment pe;
  pe.label = "--python";
  pe.interpreter = real_or_same(probe.executable.empty() ? exe : probe.executable);
  pe.prefix = probe.prefix;
  pe.base_prefix = probe.base_prefix;
  pe.version = probe.version;
  pe.is_venv = probe.prefix != probe.base_prefix;
  if (pe.is_venv) {
    const auto cfg = venv_config_for(fs::join(pe.prefix, "bin"));
    std::vector<std::string> ignored;
    const Context quiet{ctx.env, ignored};
    if (auto parsed = cfg.empty() ? std::nullopt : read_venv_config(quiet, cfg)) {
      pe.include_system_site_packages = parsed->include_system;
    }
  }
  pe.user_site_enabled = probe.enable_user_site == "True";
  pe.primary = true;
  pe.how = "ran " + exe + ": Python " + (probe.full_version.empty() ? probe.version : probe.full_version) +
           ", sys.prefix " + probe.prefix + (pe.is_venv ? ", sys.base_prefix " + probe.base_prefix : "") +
           ", ENABLE_USER_SITE " + (probe.enable_user_site.empty() ? "?" : probe.enable_user_site);
  pe.site_dirs =
      order_site_dirs(ctx, pe.label, probe.site, pe.user_site_enabled ? probe.user_site : "", pe.is_venv);
  ctx.note("--python: accepted " + pe.prefix + " (primary)");
  return pe;
}

} // namespace cudadiag::python
