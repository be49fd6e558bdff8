#include "python/site_dirs.hpp"

#include <algorithm>
#include <cstdint>
#include <set>

namespace cudadiag::python {
namespace {

std::string join_list(const std::vector<std::string>& items) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) {
    out += (i == 0 ? "" : ", ") + items[i];
  }
  return out + "]";
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

} // namespace

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

std::vector<std::string> order_site_dirs(const Context& ctx, const std::string& who,
                                         std::vector<std::string> site_packages, const std::string& user_site,
                                         bool is_venv) {
  std::string summary = who + ": getsitepackages() " + join_list(site_packages);
  if (!user_site.empty()) {
    const size_t index = std::min<size_t>(is_venv ? 1 : 0, site_packages.size());
    // push_back + rotate rather than insert(): g++ 13 -O2 reports a false -Warray-bounds on
    // vector<string>::insert here.
    site_packages.push_back(user_site);
    std::rotate(site_packages.begin() + static_cast<std::ptrdiff_t>(index), site_packages.end() - 1,
                site_packages.end());
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

void fill_site_dirs(const Context& ctx, PythonEnvironment& pe, const std::vector<std::string>& prefixes,
                    SiteFlavor flavor) {
  const auto version = parse_major_minor(pe.version);
  if (!version) {
    ctx.note(pe.label + ": Python version unknown; no site directories");
    return;
  }
  const auto user_site = pe.user_site_enabled ? model_user_site(ctx, *version) : std::string();
  pe.user_site = user_site;
  pe.site_dirs = order_site_dirs(ctx, pe.label, model_getsitepackages(prefixes, *version, flavor, pe.is_venv),
                                 user_site, pe.is_venv);
}

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

} // namespace cudadiag::python
