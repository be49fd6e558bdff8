#include "python/python_environments.hpp"

#include "core/command_capture.hpp"
#include "core/filesystem.hpp"
#include "core/text.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <compare>
#include <cstring>
#include <optional>
#include <set>
#include <string_view>
#include <utility>

namespace cudadiag::python {
namespace {

constexpr size_t k_max_file_bytes = size_t{64} * 1024; // pyvenv.cfg, shims, version files, site.py
constexpr size_t k_max_path_notes = 8;                 // PATH oddities traced one by one, then counted
constexpr size_t k_max_walk_up = 256;                  // directory levels climbed looking for a file
constexpr size_t k_max_child_stdout = size_t{1024} * 1024;
constexpr size_t k_max_child_stderr = size_t{64} * 1024;
constexpr std::string_view k_probe_marker = "cudadiag:";

// ---------------------------------------------------------------------------------------------
// Text

size_t utf8_sequence_length(std::string_view text, size_t at) {
  const auto byte = [&](size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  size_t length = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    low = lead == 0xE0 ? 0xA0 : 0x80;
    high = lead == 0xED ? 0x9F : 0xBF;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    low = lead == 0xF0 ? 0x90 : 0x80;
    high = lead == 0xF4 ? 0x8F : 0xBF;
  } else {
    return 0;
  }
  if (at + length > text.size() || byte(at + 1) < low || byte(at + 1) > high) {
    return 0;
  }
  for (size_t i = 2; i < length; ++i) {
    if (byte(at + i) < 0x80 || byte(at + i) > 0xBF) {
      return 0;
    }
  }
  return length;
}

bool is_valid_utf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t length = utf8_sequence_length(text, i);
    if (length == 0) {
      return false;
    }
    i += length;
  }
  return true;
}

// The text with control characters and bytes that are not UTF-8 written as \xNN.
std::string printable(std::string_view text) {
  static constexpr std::string_view k_hex = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  const auto escape = [&](unsigned char c) {
    out += "\\x";
    out.push_back(k_hex[c >> 4U]);
    out.push_back(k_hex[c & 0xFU]);
  };
  for (size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7F) {
        escape(c);
      } else {
        out.push_back(text[i]);
      }
      ++i;
      continue;
    }
    const size_t length = utf8_sequence_length(text, i);
    if (length == 0) {
      escape(c);
      ++i;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

std::string_view trim(std::string_view text) {
  constexpr std::string_view k_space = " \t\r\n\f\v";
  const auto first = text.find_first_not_of(k_space);
  if (first == std::string_view::npos) {
    return {};
  }
  const auto last = text.find_last_not_of(k_space);
  return text.substr(first, last - first + 1);
}

std::string lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return out;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

std::string join_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    out += (i == 0 ? "" : ", ") + items[i];
  }
  return out + "]";
}

// ---------------------------------------------------------------------------------------------
// Python versions

struct PyVersion {
  unsigned major = 0;
  unsigned minor = 0;
  auto operator<=>(const PyVersion&) const = default;
  [[nodiscard]] std::string text() const { return std::to_string(major) + "." + std::to_string(minor); }
};

// Reads up to four digits at `at`, advancing it; nullopt if there is no digit.
std::optional<unsigned> read_number(std::string_view text, size_t& at) {
  unsigned value = 0;
  size_t digits = 0;
  while (at < text.size() && text[at] >= '0' && text[at] <= '9' && digits < 4) {
    value = value * 10U + static_cast<unsigned>(text[at] - '0');
    ++at;
    ++digits;
  }
  if (digits == 0 || (at < text.size() && text[at] >= '0' && text[at] <= '9')) {
    return std::nullopt;
  }
  return value;
}

// "3.11", "3.11.7", "3.11.7.final.0" -> 3.11. With `whole`, nothing may follow the minor number.
std::optional<PyVersion> parse_major_minor(std::string_view text, bool whole = false) {
  size_t at = 0;
  const auto major = read_number(text, at);
  if (!major || at >= text.size() || text[at] != '.') {
    return std::nullopt;
  }
  ++at;
  const auto minor = read_number(text, at);
  if (!minor) {
    return std::nullopt;
  }
  if (at < text.size() && (whole || text[at] != '.')) {
    return std::nullopt;
  }
  return PyVersion{*major, *minor};
}

// "python3.11" -> 3.11; "python3", "python3.11-config", "python3.13t" -> nullopt.
std::optional<PyVersion> version_from_exe_name(std::string_view name) {
  constexpr std::string_view k_stem = "python";
  if (name.substr(0, k_stem.size()) != k_stem) {
    return std::nullopt;
  }
  return parse_major_minor(name.substr(k_stem.size()), true);
}

// The newest X.Y with a <dir>/pythonX.Y entry that satisfies `accept`.
template <class Accept> std::optional<PyVersion> newest_python_entry(const std::string& dir, Accept accept) {
  auto names = fs::list_directory(dir);
  if (!names) {
    return std::nullopt;
  }
  std::optional<PyVersion> best;
  for (const auto& name : *names) {
    const auto version = version_from_exe_name(name);
    if (version && (!best || *version > *best) && accept(fs::join(dir, name))) {
      best = version;
    }
  }
  return best;
}

std::string python_dir_name(const PyVersion& version) { return "python" + version.text(); }

// ---------------------------------------------------------------------------------------------
// Context shared by the discovery steps

struct Context {
  const Environment& env;
  std::vector<std::string>& trace;
  bool no_user_site = false;

  void note(std::string_view line) const { trace.push_back(printable(line)); }
};

// `value` as an absolute, lexically normal path; a relative one is taken relative to env.cwd and
// the trace says so.
std::optional<std::string> absolute_path(const Context& ctx, std::string_view what, const std::string& value,
                                         bool quiet = false) {
  if (!value.empty() && value.front() == '/') {
    return fs::lexically_normal(value);
  }
  if (ctx.env.cwd.empty()) {
    ctx.note(std::string(what) + "=" + value + " is relative and the working directory is unknown; ignored");
    return std::nullopt;
  }
  auto absolute = fs::lexically_normal(fs::join(ctx.env.cwd, value));
  if (!quiet) {
    ctx.note(std::string(what) + "=" + value +
             " is relative; taken relative to the working directory: " + absolute);
  }
  return absolute;
}

std::string real_or_same(const std::string& path) {
  auto real = fs::real_path(path);
  return real ? *real : path;
}

// Reads at most k_max_file_bytes, noting in the trace when the file is larger.
Expected<std::string> read_bounded(const Context& ctx, const std::string& path) {
  auto content = fs::read_file_prefix(path, k_max_file_bytes);
  if (content && content->size() == k_max_file_bytes) {
    const auto size = fs::file_size(path);
    if (size && *size > k_max_file_bytes) {
      ctx.note(path + " is larger than 64 KiB; only its first 64 KiB were read");
    }
  }
  return content;
}

// ---------------------------------------------------------------------------------------------
// site.py model

// How the base interpreter's site.getsitepackages() builds its list.
struct SiteFlavor {
  bool debian = false; // Debian/Ubuntu's patched site.py: dist-packages
  bool lib64 = false;  // sys.platlibdir == "lib64" (Fedora, RHEL, openSUSE)
};

SiteFlavor detect_flavor(const Context& ctx, const std::string& base_prefix, const PyVersion& version) {
  SiteFlavor flavor;
  const auto stdlib = fs::join(base_prefix, "lib/" + python_dir_name(version));
  const auto stdlib64 = fs::join(base_prefix, "lib64/" + python_dir_name(version));
  if (fs::is_regular_file(fs::join(stdlib64, "os.py")) && real_or_same(stdlib64) != real_or_same(stdlib)) {
    flavor.lib64 = true;
  }
  const auto site_py = fs::join(flavor.lib64 ? stdlib64 : stdlib, "site.py");
  if (auto content = fs::read_file_prefix(site_py, k_max_file_bytes)) {
    flavor.debian = content->find("dist-packages") != std::string::npos;
  }
  if (flavor.debian || flavor.lib64) {
    ctx.note(base_prefix + ": " + (flavor.debian ? "Debian site.py (dist-packages)" : "") +
             (flavor.debian && flavor.lib64 ? ", " : "") + (flavor.lib64 ? "platlibdir lib64" : ""));
  }
  return flavor;
}

// site.getsitepackages() for PREFIXES = `prefixes`, as CPython's (or Debian's) site.py builds it.
std::vector<std::string> model_getsitepackages(const std::vector<std::string>& prefixes,
                                               const PyVersion& version, SiteFlavor flavor, bool is_venv) {
  std::vector<std::string> libdirs;
  if (flavor.lib64) {
    libdirs.emplace_back("lib64");
  }
  libdirs.emplace_back("lib");
  const auto pyname = python_dir_name(version);
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& prefix : prefixes) {
    if (prefix.empty() || !seen.insert(prefix).second) {
      continue;
    }
    if (flavor.debian) {
      if (is_venv) {
        out.push_back(fs::join(prefix, "lib/" + pyname + "/site-packages"));
      }
      out.push_back(fs::join(prefix, "local/lib/" + pyname + "/dist-packages"));
      out.push_back(fs::join(prefix, "lib/python3/dist-packages"));
      for (const auto& libdir : libdirs) {
        out.push_back(fs::join(prefix, libdir + "/" + pyname + "/dist-packages"));
      }
    } else {
      for (const auto& libdir : libdirs) {
        out.push_back(fs::join(prefix, libdir + "/" + pyname + "/site-packages"));
      }
    }
  }
  return out;
}

// site.getusersitepackages(): $PYTHONUSERBASE (else ~/.local) + lib/pythonX.Y/site-packages.
std::string model_user_site(const Context& ctx, const PyVersion& version) {
  std::string base;
  if (auto user_base = ctx.env.non_empty("PYTHONUSERBASE")) {
    base = *user_base;
  } else if (const auto home = ctx.env.home(); !home.empty()) {
    base = fs::join(home, ".local");
  } else {
    ctx.note("no home directory (HOME unset, no passwd entry): no user site");
    return {};
  }
  return fs::join(base, "lib/" + python_dir_name(version) + "/site-packages");
}

// cuda-pathfinder's parent dirs: getsitepackages() with the user site inserted at index 0 outside
// a venv and 1 inside, then (as its find_sub_dirs does) only the existing directories. A directory
// reached twice is kept once.
std::vector<std::string> order_site_dirs(const Context& ctx, const std::string& who,
                                         std::vector<std::string> site_packages, const std::string& user_site,
                                         bool is_venv) {
  std::string summary = who + ": getsitepackages() " + join_list(site_packages);
  if (!user_site.empty()) {
    const size_t index = std::min<size_t>(is_venv ? 1 : 0, site_packages.size());
    site_packages.insert(site_packages.begin() + static_cast<std::ptrdiff_t>(index), user_site);
    summary += "; user site " + user_site + " at index " + std::to_string(index);
  } else {
    summary += "; no user site";
  }
  std::vector<std::string> kept;
  std::set<std::pair<std::uint64_t, std::uint64_t>> seen_ids;
  std::set<std::string> seen_paths;
  for (const auto& entry : site_packages) {
    std::string dir = entry;
    if (dir.empty()) {
      continue;
    }
    if (dir.front() != '/') {
      auto absolute = absolute_path(ctx, "site directory", dir);
      if (!absolute) {
        continue;
      }
      dir = *absolute;
    }
    if (!fs::is_directory(dir) || !seen_paths.insert(dir).second) {
      continue;
    }
    if (const auto id = fs::file_id(dir); id && !seen_ids.insert({id->device, id->inode}).second) {
      continue;
    }
    kept.push_back(dir);
  }
  ctx.note(summary + "; existing " + join_list(kept));
  return kept;
}

// Fills site_dirs from PREFIXES and the user-site rules.
void fill_site_dirs(const Context& ctx, PythonEnvironment& pe, const std::vector<std::string>& prefixes,
                    SiteFlavor flavor) {
  const auto version = parse_major_minor(pe.version);
  if (!version) {
    ctx.note(pe.label + ": Python version unknown; no site directories");
    return;
  }
  const auto user_site = pe.user_site_enabled ? model_user_site(ctx, *version) : std::string();
  pe.site_dirs = order_site_dirs(ctx, pe.label, model_getsitepackages(prefixes, *version, flavor, pe.is_venv),
                                 user_site, pe.is_venv);
}

// CPython's getpath: the first directory at or above `start` holding lib/pythonX.Y/os.py (or
// lib64/…). With the version unknown, any pythonX.Y is accepted. Returns the prefix and version.
std::optional<std::pair<std::string, PyVersion>> find_prefix_by_landmark(const std::string& start,
                                                                         std::optional<PyVersion> version) {
  std::string dir = start;
  for (size_t level = 0; level < k_max_walk_up; ++level) {
    for (const char* libdir : {"lib", "lib64"}) {
      const auto lib = fs::join(dir, libdir);
      if (version) {
        if (fs::is_regular_file(fs::join(lib, python_dir_name(*version) + "/os.py"))) {
          return std::pair{dir, *version};
        }
      } else if (fs::is_directory(lib)) {
        const auto found = newest_python_entry(
            lib, [](const std::string& p) { return fs::is_regular_file(fs::join(p, "os.py")); });
        if (found) {
          return std::pair{dir, *found};
        }
      }
    }
    const auto up = fs::parent(dir);
    if (up == dir) {
      break;
    }
    dir = up;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Venvs

struct VenvConfig {
  std::string home;           // "" when absent
  bool include_system = true; // CPython's site.py: a missing key means true
  bool include_key_present = false;
  std::optional<PyVersion> version;
  std::string version_text;
};

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
    const auto key = lower(trim(line.substr(0, eq)));
    const auto value = std::string(trim(line.substr(eq + 1)));
    if (key == "home") {
      cfg.home = value;
    } else if (key == "include-system-site-packages") {
      cfg.include_system = lower(value) == "true";
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

// The pyvenv.cfg that CPython's site.py would use for an interpreter in `exe_dir`: next to it,
// else one level up. "" if none.
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

// ---------------------------------------------------------------------------------------------
// Interpreters

// An interpreter at `exe` (absolute, as found, symlinks unresolved): a venv's when a pyvenv.cfg sits
// next to it or one level up, else a plain installation whose prefix is found from its realpath.
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

// ---------------------------------------------------------------------------------------------
// PATH

class PathSearch {
public:
  PathSearch(const Context& ctx, const std::string& value) : m_ctx(ctx) {
    std::set<std::string> seen;
    size_t relative = 0;
    for (const auto& entry : split_search_path(value)) {
      std::string dir;
      if (!entry.empty() && entry.front() == '/') {
        dir = fs::lexically_normal(entry);
      } else {
        ++relative;
        const bool quiet = relative > k_max_path_notes;
        if (entry.empty()) {
          if (m_ctx.env.cwd.empty()) {
            continue;
          }
          dir = m_ctx.env.cwd;
          if (!quiet) {
            m_ctx.note("PATH has an empty entry: it means the working directory " + dir);
          }
        } else {
          auto absolute = absolute_path(m_ctx, "PATH entry", entry, quiet);
          if (!absolute) {
            continue;
          }
          dir = *absolute;
        }
      }
      if (seen.insert(dir).second) {
        m_dirs.push_back(dir);
      }
    }
    if (relative > k_max_path_notes) {
      m_ctx.note("PATH has " + std::to_string(relative) + " empty or relative entries; the first " +
                 std::to_string(k_max_path_notes) + " are listed above");
    }
  }

  [[nodiscard]] const std::vector<std::string>& dirs() const { return m_dirs; }

  // The first executable `name` in dirs()[from…] whose directory `skip` does not reject, with its index.
  template <class Skip>
  std::optional<std::pair<size_t, std::string>> find(std::string_view name, size_t from, Skip skip) {
    for (size_t i = from; i < m_dirs.size(); ++i) {
      if (skip(m_dirs[i])) {
        continue;
      }
      const auto candidate = fs::join(m_dirs[i], name);
      if (fs::is_executable_file(candidate)) {
        return std::pair{i, candidate};
      }
      if (fs::is_symlink(candidate) && !fs::exists(candidate) && m_broken_notes++ < k_max_path_notes) {
        auto why = fs::real_path(candidate);
        m_ctx.note(candidate + " is a broken symlink (" + (why ? std::string("?") : why.error().message) +
                   "); skipped");
      }
    }
    return std::nullopt;
  }
  std::optional<std::pair<size_t, std::string>> find(std::string_view name, size_t from = 0) {
    return find(name, from, [](const std::string&) { return false; });
  }

private:
  const Context& m_ctx;
  std::vector<std::string> m_dirs;
  size_t m_broken_notes = 0;
};

// ---------------------------------------------------------------------------------------------
// pyenv

// Sorts pyenv version names newest first the way pyenv-latest does (dotted numbers compared as numbers).
bool newer_version_name(const std::string& a, const std::string& b) {
  size_t i = 0;
  size_t j = 0;
  while (i < a.size() && j < b.size()) {
    const bool da = a[i] >= '0' && a[i] <= '9';
    const bool db = b[j] >= '0' && b[j] <= '9';
    if (da && db) {
      size_t ei = i;
      size_t ej = j;
      while (ei < a.size() && a[ei] >= '0' && a[ei] <= '9') {
        ++ei;
      }
      while (ej < b.size() && b[ej] >= '0' && b[ej] <= '9') {
        ++ej;
      }
      auto na = std::string_view(a).substr(i, ei - i);
      auto nb = std::string_view(b).substr(j, ej - j);
      while (na.size() > 1 && na.front() == '0') {
        na.remove_prefix(1);
      }
      while (nb.size() > 1 && nb.front() == '0') {
        nb.remove_prefix(1);
      }
      if (na.size() != nb.size()) {
        return na.size() > nb.size();
      }
      if (na != nb) {
        return na > nb;
      }
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j]) {
        return a[i] > b[j];
      }
      ++i;
      ++j;
    }
  }
  return a.size() - i > b.size() - j;
}

bool ends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && text.substr(text.size() - suffix.size()) == suffix;
}

// pyenv-latest -b: the newest installed version named `prefix` followed by '.' or '-', skipping
// -dev, -src, -latest, pre-releases and free-threaded builds.
std::optional<std::string> pyenv_latest(const std::string& root, const std::string& prefix) {
  auto names = fs::list_directory(fs::join(root, "versions"));
  if (!names || prefix.empty()) {
    return std::nullopt;
  }
  std::vector<std::string> matches;
  for (const auto& name : *names) {
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0 ||
        (name[prefix.size()] != '.' && name[prefix.size()] != '-')) {
      continue;
    }
    if (ends_with(name, "-dev") || ends_with(name, "-src") || ends_with(name, "-latest") ||
        !fs::is_directory(fs::join(root, "versions/" + name))) {
      continue;
    }
    const auto last_alpha = name.find_last_not_of("0123456789");
    if (last_alpha != std::string::npos && last_alpha + 1 < name.size() &&
        (name[last_alpha] == 'a' || name[last_alpha] == 'b' ||
         (name[last_alpha] == 'c' && last_alpha > 0 && name[last_alpha - 1] == 'r'))) {
      continue;
    }
    if (name.back() == 't' && name.size() > 1 && name[name.size() - 2] >= '0' &&
        name[name.size() - 2] <= '9') {
      continue;
    }
    matches.push_back(name);
  }
  if (matches.empty()) {
    return std::nullopt;
  }
  std::sort(matches.begin(), matches.end(), newer_version_name);
  return matches.front();
}

// pyenv-version-name: an installed version for `name`, "system", or nullopt if it is not installed.
std::optional<std::string> pyenv_resolve(const std::string& root, const std::string& name) {
  if (name == "system") {
    return name;
  }
  constexpr std::string_view k_python_dash = "python-";
  const std::string normalised =
      name.compare(0, k_python_dash.size(), k_python_dash) == 0 ? name.substr(k_python_dash.size()) : name;
  for (const auto& candidate : {name, normalised}) {
    if (!candidate.empty() && fs::is_directory(fs::join(root, "versions/" + candidate))) {
      return candidate;
    }
  }
  if (auto latest = pyenv_latest(root, name)) {
    return latest;
  }
  return pyenv_latest(root, normalised);
}

// pyenv-version-file-read: the first word of each line, skipping blank lines, comments and words
// that could leave $PYENV_ROOT/versions.
std::vector<std::string> read_version_file(const Context& ctx, const std::string& path) {
  std::vector<std::string> names;
  auto content = read_bounded(ctx, path);
  if (!content) {
    ctx.note("cannot read " + path + ": " + content.error().message);
    return names;
  }
  for (const auto line : split_lines(*content)) {
    const auto text = trim(line);
    const auto end = text.find_first_of(" \t\r\f\v");
    auto word = std::string(text.substr(0, std::min<size_t>(end, 1024)));
    if (word.empty() || word.front() == '#') {
      continue;
    }
    if (word == ".." || word.find("../") != std::string::npos || word.find("/..") != std::string::npos ||
        word.front() == '/') {
      ctx.note(path + ": version \"" + word +
               "\" could leave the versions directory; ignored (as pyenv does)");
      continue;
    }
    names.push_back(word);
  }
  return names;
}

struct PyenvSelection {
  std::vector<std::string> names;
  std::string origin;
};

std::optional<PyenvSelection> pyenv_selection(const Context& ctx, const std::string& root) {
  if (auto value = ctx.env.non_empty("PYENV_VERSION")) {
    PyenvSelection selection{{}, "PYENV_VERSION"};
    for (auto& name : split_search_path(*value)) {
      if (!name.empty()) {
        selection.names.push_back(std::move(name));
      }
    }
    return selection;
  }
  std::vector<std::string> starts;
  if (auto dir = ctx.env.non_empty("PYENV_DIR")) {
    auto absolute = absolute_path(ctx, "PYENV_DIR", *dir);
    if (!absolute || !fs::is_directory(*absolute)) {
      ctx.note("PYENV_DIR=" + *dir + " is not a directory: pyenv would abort");
      return std::nullopt;
    }
    starts.push_back(*absolute);
  }
  if (!ctx.env.cwd.empty() && (starts.empty() || starts.front() != ctx.env.cwd)) {
    starts.push_back(ctx.env.cwd);
  }
  for (const auto& start : starts) {
    std::string dir = start;
    for (size_t level = 0; level < k_max_walk_up; ++level) {
      const auto file = fs::join(dir, ".python-version");
      if (fs::is_regular_file(file)) {
        return PyenvSelection{read_version_file(ctx, file), file};
      }
      const auto up = fs::parent(dir);
      if (up == dir) {
        break;
      }
      dir = up;
    }
  }
  const auto global = fs::join(root, "version");
  if (fs::is_regular_file(global)) {
    return PyenvSelection{read_version_file(ctx, global), global};
  }
  return PyenvSelection{{}, "no version file"};
}

// The $PYENV_ROOT a shim runs with: the value it exports, else the parent of its shims directory,
// else $PYENV_ROOT, else ~/.pyenv.
std::string pyenv_root_for(const Context& ctx, const std::string& shim, const std::string& content) {
  constexpr std::string_view k_export = "PYENV_ROOT=\"";
  if (const auto at = content.find(k_export); at != std::string::npos) {
    const auto start = at + k_export.size();
    const auto end = content.find('"', start);
    if (end != std::string::npos && end > start && content[start] == '/') {
      return content.substr(start, end - start);
    }
  }
  const auto shim_dir = fs::parent(shim);
  if (fs::basename(shim_dir) == "shims") {
    return fs::parent(shim_dir);
  }
  if (auto root = ctx.env.non_empty("PYENV_ROOT")) {
    return *root;
  }
  return fs::join(ctx.env.home(), ".pyenv");
}

// Whether the python3 found on PATH is a pyenv shim; `content` receives its first 64 KiB.
bool is_pyenv_shim(const Context& ctx, const std::string& exe, std::string& content) {
  auto read = read_bounded(ctx, exe);
  if (read) {
    content = std::move(*read);
    return content.compare(0, 2, "#!") == 0 && content.find("pyenv") != std::string::npos;
  }
  const auto dir = fs::parent(exe);
  if (fs::basename(dir) == "shims" && fs::is_directory(fs::join(fs::parent(dir), "versions"))) {
    ctx.note("cannot read " + exe + " (" + read.error().message +
             "); taken for a pyenv shim from its directory");
    return true;
  }
  ctx.note("cannot read " + exe + " (" + read.error().message + "); taken for an interpreter");
  return false;
}

// What the shim at `shim` (found at PATH index `index`) would exec, as pyenv-exec/pyenv-which
// resolve it: each selected version's bin/python3, then "system" (PATH without the shims).
std::optional<PythonEnvironment> pyenv_environment(const Context& ctx, PathSearch& path, size_t index,
                                                   const std::string& shim, const std::string& content) {
  const auto root = pyenv_root_for(ctx, shim, content);
  auto selection = pyenv_selection(ctx, root);
  if (!selection) {
    return std::nullopt;
  }
  std::vector<std::string> names = selection->names;
  std::string skipped;
  names.emplace_back("system");
  const std::string listed = selection->names.empty() ? "system" : [&] {
    std::string text;
    for (const auto& name : selection->names) {
      text += (text.empty() ? "" : ":") + name;
    }
    return text;
  }();
  ctx.note(shim + " is a pyenv shim (PYENV_ROOT " + root + "); versions " + listed + " from " +
           selection->origin);

  const auto shims_dir = fs::join(root, "shims");
  const auto shims_real = real_or_same(shims_dir);
  const auto own_dir_real = real_or_same(fs::parent(shim));
  for (const auto& name : names) {
    const auto resolved = pyenv_resolve(root, name);
    if (!resolved) {
      ctx.note("pyenv version " + name + " (from " + selection->origin + ") is not installed under " +
               fs::join(root, "versions"));
      skipped += (skipped.empty() ? "" : ", ") + name + " not installed";
      continue;
    }
    std::string how = shim + " is a pyenv shim; version " + *resolved + " from " + selection->origin;
    if (!skipped.empty()) {
      how += " (" + skipped + ")";
    }
    if (*resolved == "system") {
      auto next = path.find("python3", index + 1, [&](const std::string& dir) {
        const auto real = real_or_same(dir);
        return dir == shims_dir || real == shims_real || real == own_dir_real;
      });
      if (!next) {
        ctx.note("pyenv \"system\": no python3 on PATH past the shims; the shim would fail");
        return std::nullopt;
      }
      auto pe = interpreter_environment(ctx, "python3 on PATH", next->second);
      if (pe) {
        pe->how = how + " -> " + pe->how;
      }
      return pe;
    }
    const auto exe = fs::join(root, "versions/" + *resolved + "/bin/python3");
    if (!fs::is_executable_file(exe)) {
      ctx.note("pyenv version " + *resolved + " has no executable bin/python3");
      skipped += (skipped.empty() ? "" : ", ") + *resolved + " has no python3";
      continue;
    }
    auto pe = interpreter_environment(ctx, "python3 on PATH", exe);
    if (pe) {
      pe->how = how + " -> " + pe->how;
    }
    return pe;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------------------------
// Sources

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

std::optional<PythonEnvironment> from_conda_prefix(const Context& ctx) {
  const auto value = ctx.env.non_empty("CONDA_PREFIX");
  if (!value) {
    ctx.note("CONDA_PREFIX is not set or empty");
    return std::nullopt;
  }
  const auto prefix = absolute_path(ctx, "CONDA_PREFIX", *value);
  if (!prefix) {
    return std::nullopt;
  }
  if (!fs::is_directory(*prefix)) {
    ctx.note("CONDA_PREFIX=" + *prefix + " is not a directory; ignored");
    return std::nullopt;
  }
  std::string version_from = "lib/pythonX.Y/site-packages";
  auto version = newest_python_entry(fs::join(*prefix, "lib"), [](const std::string& p) {
    return fs::is_directory(fs::join(p, "site-packages"));
  });
  if (!version) {
    version_from = "conda-meta";
    if (auto names = fs::list_directory(fs::join(*prefix, "conda-meta"))) {
      for (const auto& name : *names) {
        constexpr std::string_view k_stem = "python-";
        if (name.compare(0, k_stem.size(), k_stem) == 0 && ends_with(name, ".json")) {
          auto found = parse_major_minor(std::string_view(name).substr(k_stem.size()));
          if (found && (!version || *found > *version)) {
            version = found;
          }
        }
      }
    }
  }
  if (!version) {
    ctx.note("CONDA_PREFIX=" + *prefix +
             " holds no Python (no lib/pythonX.Y/site-packages, no conda-meta/python-X.Y*.json)");
    return std::nullopt;
  }
  PythonEnvironment pe;
  pe.label = "CONDA_PREFIX";
  pe.prefix = *prefix;
  pe.base_prefix = *prefix;
  pe.version = version->text();
  pe.interpreter = interpreter_in(*prefix);
  pe.user_site_enabled = !ctx.no_user_site;
  pe.how = "$CONDA_PREFIX=" + *prefix + ", Python " + pe.version + " from " + version_from;
  fill_site_dirs(ctx, pe, {pe.prefix}, detect_flavor(ctx, pe.prefix, *version));
  return pe;
}

std::optional<PythonEnvironment> from_path(const Context& ctx) {
  const auto value = ctx.env.get("PATH");
  if (!value) {
    ctx.note("PATH is not set; no python3 on PATH");
    return std::nullopt;
  }
  PathSearch path(ctx, *value);
  auto found = path.find("python3");
  if (!found) {
    ctx.note("no executable python3 on PATH (" + std::to_string(path.dirs().size()) + " directories)");
    return std::nullopt;
  }
  const auto& exe = found->second;
  ctx.note("python3 on PATH: " + exe);
  if (!venv_config_for(fs::parent(exe)).empty()) {
    return interpreter_environment(ctx, "python3 on PATH", exe);
  }
  std::string content;
  if (is_pyenv_shim(ctx, exe, content)) {
    return pyenv_environment(ctx, path, found->first, exe, content);
  }
  return interpreter_environment(ctx, "python3 on PATH", exe);
}

std::optional<PythonEnvironment> from_system(const Context& ctx, const std::string& exe) {
  if (!fs::is_executable_file(exe)) {
    ctx.note("system interpreter " + exe + " does not exist or is not executable");
    return std::nullopt;
  }
  return interpreter_environment(ctx, "system python3", exe);
}

// Adds `pe` unless an environment with the same prefix (by realpath) is already listed.
void add_unique(const Context& ctx, std::vector<PythonEnvironment>& list,
                std::optional<PythonEnvironment> pe) {
  if (!pe) {
    return;
  }
  const auto key = real_or_same(pe->prefix);
  for (const auto& existing : list) {
    if (real_or_same(existing.prefix) == key) {
      ctx.note(pe->label + " (" + pe->prefix + ") is the same environment as " + existing.label +
               "; listed once");
      return;
    }
  }
  ctx.note(pe->label + ": accepted " + pe->prefix + (list.empty() ? " (primary)" : ""));
  list.push_back(std::move(*pe));
}

// ---------------------------------------------------------------------------------------------
// Running an interpreter

constexpr std::string_view k_probe_script = R"PY(import os, site, sys
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
  bool complete = false;
};

ProbeOutput parse_probe_output(std::string_view text) {
  ProbeOutput out;
  for (const auto line : split_lines(text)) {
    if (line.substr(0, k_probe_marker.size()) != k_probe_marker) {
      continue;
    }
    const auto rest = line.substr(k_probe_marker.size());
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

PythonDiscovery discover_python_environments(const Environment& env, const PythonSearchOptions& options) {
  PythonDiscovery out;
  Context ctx{env, out.trace, env.non_empty("PYTHONNOUSERSITE").has_value()};
  if (ctx.no_user_site) {
    ctx.note("PYTHONNOUSERSITE is set: the user site is disabled");
  }
  add_unique(ctx, out.environments, from_virtual_env(ctx));
  add_unique(ctx, out.environments, from_conda_prefix(ctx));
  add_unique(ctx, out.environments, from_path(ctx));
  for (const auto& exe : options.system_interpreters) {
    add_unique(ctx, out.environments, from_system(ctx, exe));
  }
  if (out.environments.empty()) {
    ctx.note("no Python environment found");
  } else {
    out.environments.front().primary = true;
    for (const auto& pe : out.environments) {
      if (pe.label == "python3 on PATH" && &pe != &out.environments.front()) {
        ctx.note("note: python3 on PATH runs in " + pe.prefix + ", not in the primary " +
                 out.environments.front().label +
                 " environment; cuda-pathfinder searches the site "
                 "directories of whichever interpreter imports it");
      }
    }
  }
  return out;
}

Expected<PythonDiscovery> discover_python_environments_with(const Environment& env,
                                                            const std::string& python_exe,
                                                            std::chrono::milliseconds timeout,
                                                            const PythonSearchOptions& options) {
  PythonDiscovery out;
  Context ctx{env, out.trace, env.non_empty("PYTHONNOUSERSITE").has_value()};
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
    const Context quiet{env, ignored};
    PathSearch path(quiet, env.get("PATH").value_or(""));
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

  auto run = capture_command(env, {exe, "-c", std::string(k_probe_script)}, timeout);
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
    return Error{"--python " + printable(exe) + ": killed by signal " + std::to_string(*run->signal) + stderr_note};
  }
  if (run->exit_code.value_or(0) != 0) {
    return Error{"--python " + printable(exe) + ": exited with status " + std::to_string(*run->exit_code) +
                 stderr_note};
  }
  const auto probe = parse_probe_output(run->out);
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
    const Context quiet{env, ignored};
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

  auto snapshot = discover_python_environments(env, options);
  out.environments.push_back(std::move(pe));
  const auto key = real_or_same(out.environments.front().prefix);
  for (auto& other : snapshot.environments) {
    if (real_or_same(other.prefix) == key) {
      ctx.note(other.label + " (" + other.prefix + ") is the same environment as --python; listed once");
      continue;
    }
    other.primary = false;
    out.environments.push_back(std::move(other));
  }
  out.trace.insert(out.trace.end(), snapshot.trace.begin(), snapshot.trace.end());
  return out;
}

} // namespace cudadiag::python
