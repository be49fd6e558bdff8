#include "core/filesystem.hpp"
#include "python/python_environments.hpp"
#include "skip.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <sys/stat.h>
#include <vector>

using cudadiag::Environment;
using cudadiag::python::discover_python_environments;
using cudadiag::python::discover_python_environments_with;
using cudadiag::python::PythonDiscovery;
using cudadiag::python::PythonEnvironment;
using cudadiag::python::PythonSearchOptions;
using cudadiag::testing::TempTree;
namespace fs = cudadiag::fs;

namespace {

using Dirs = std::vector<std::string>;

// An environment with a home and a working directory inside the tree and nothing else set.
Environment make_env(const TempTree& tree) {
  Environment env;
  env.cwd = tree.mkdir("work");
  env.set("HOME", tree.mkdir("home"));
  return env;
}

PythonSearchOptions no_system() {
  PythonSearchOptions options;
  options.system_interpreters.clear();
  return options;
}

std::string real(const std::string& path) {
  return fs::real_path(path).value();
}

// A CPython installation at `prefix`: bin/pythonX.Y, bin/python3 -> pythonX.Y, the os.py landmark
// and an empty site-packages. Returns its absolute path.
std::string make_install(const TempTree& tree, const std::string& prefix, const std::string& version) {
  tree.write(prefix + "/bin/python" + version, "#!/bin/sh\nexit 0\n", 0755);
  tree.symlink(prefix + "/bin/python3", "python" + version);
  tree.write(prefix + "/lib/python" + version + "/os.py", "");
  tree.mkdir(prefix + "/lib/python" + version + "/site-packages");
  return tree.path(prefix);
}

std::string site_of(const std::string& prefix, const std::string& version) {
  return prefix + "/lib/python" + version + "/site-packages";
}

// A venv made from `base` the way `python -m venv` lays it out.
std::string make_venv(const TempTree& tree, const std::string& venv, const std::string& base,
                      const std::string& version, const char* include_system) {
  std::string cfg = "home = " + base + "/bin\n";
  if (include_system != nullptr) {
    cfg += std::string("include-system-site-packages = ") + include_system + "\n";
  }
  cfg += "version = " + version + ".1\nexecutable = " + base + "/bin/python" + version + "\n";
  tree.write(venv + "/pyvenv.cfg", cfg);
  tree.symlink(venv + "/bin/python3", base + "/bin/python3");
  tree.mkdir(venv + "/lib/python" + version + "/site-packages");
  return tree.path(venv);
}

std::string user_site(const TempTree& tree, const std::string& version) {
  return tree.mkdir("home/.local/lib/python" + version + "/site-packages");
}

const PythonEnvironment* find_label(const PythonDiscovery& found, const std::string& label) {
  for (const auto& pe : found.environments) {
    if (pe.label == label) {
      return &pe;
    }
  }
  return nullptr;
}

bool trace_mentions(const PythonDiscovery& found, const std::string& text) {
  return std::any_of(found.trace.begin(), found.trace.end(),
                     [&](const std::string& line) { return line.find(text) != std::string::npos; });
}

std::string dump(const PythonDiscovery& found) {
  std::string out;
  for (const auto& pe : found.environments) {
    out += pe.label + " | " + pe.how + " | prefix " + pe.prefix + " | sites";
    for (const auto& dir : pe.site_dirs) {
      out += " " + dir;
    }
    out += "\n";
  }
  for (const auto& line : found.trace) {
    out += "  " + line + "\n";
  }
  return out;
}

std::string hex(const std::string& text) {
  static constexpr char k_digits[] = "0123456789abcdef";
  std::string out;
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    out.push_back(k_digits[byte >> 4U]);
    out.push_back(k_digits[byte & 0xFU]);
  }
  return out;
}

} // namespace

TEST_CASE("python: VIRTUAL_ENV venv without system site packages has no user site") {
  TempTree tree;
  const auto base = make_install(tree, "base", "3.12");
  const auto venv = make_venv(tree, "venv", base, "3.12", "false");
  user_site(tree, "3.12");
  auto env = make_env(tree);
  env.set("VIRTUAL_ENV", venv);

  const auto found = discover_python_environments(env, no_system());
  INFO(dump(found));
  REQUIRE(found.environments.size() == 1);
  const auto& pe = found.environments.front();
  CHECK(pe.label == "VIRTUAL_ENV");
  CHECK(pe.primary);
  CHECK(pe.is_venv);
  CHECK(pe.prefix == venv);
  CHECK(pe.base_prefix == base);
  CHECK(pe.version == "3.12");
  CHECK_FALSE(pe.include_system_site_packages);
  CHECK_FALSE(pe.user_site_enabled);
  CHECK(pe.interpreter == real(base + "/bin/python3.12"));
  CHECK(pe.site_dirs == Dirs{site_of(venv, "3.12")});
}

TEST_CASE("python: venv with system site packages puts the user site at index 1") {
  TempTree tree;
  const auto base = make_install(tree, "base", "3.12");
  const auto venv = make_venv(tree, "venv", base, "3.12", "true");
  const auto user = user_site(tree, "3.12");
  auto env = make_env(tree);
  env.set("VIRTUAL_ENV", venv);

  auto found = discover_python_environments(env, no_system());
  INFO(dump(found));
  REQUIRE(found.environments.size() == 1);
  CHECK(found.environments.front().include_system_site_packages);
  CHECK(found.environments.front().user_site_enabled);
  CHECK(found.environments.front().site_dirs == Dirs{site_of(venv, "3.12"), user, site_of(base, "3.12")});

  SUBCASE("PYTHONNOUSERSITE removes it") {
    env.set("PYTHONNOUSERSITE", "1");
    found = discover_python_environments(env, no_system());
    CHECK_FALSE(found.environments.front().user_site_enabled);
    CHECK(found.environments.front().site_dirs == Dirs{site_of(venv, "3.12"), site_of(base, "3.12")});
  }
  SUBCASE("an empty PYTHONNOUSERSITE counts as unset") {
    env.set("PYTHONNOUSERSITE", "");
    found = discover_python_environments(env, no_system());
    CHECK(found.environments.front().user_site_enabled);
  }
}

TEST_CASE("python: a missing include-system-site-packages key means true, as in site.py") {
  TempTree tree;
  const auto base = make_install(tree, "base", "3.12");
  const auto venv = make_venv(tree, "venv", base, "3.12", nullptr);
  auto env = make_env(tree);
  env.set("VIRTUAL_ENV", venv);
  const auto found = discover_python_environments(env, no_system());
  INFO(dump(found));
  REQUIRE(found.environments.size() == 1);
  CHECK(found.environments.front().include_system_site_packages);
  CHECK(found.environments.front().site_dirs == Dirs{site_of(venv, "3.12"), site_of(base, "3.12")});
}

TEST_CASE("python: venv version from version_info, from lib/, and unknown home") {
  TempTree tree;
  const auto base = make_install(tree, "base", "3.10");
  auto env = make_env(tree);

  SUBCASE("version_info (virtualenv, uv)") {
    tree.write("venv/pyvenv.cfg", "home = " + base +
                                      "/bin\nversion_info = 3.10.13.final.0\n"
                                      "include-system-site-packages = false\n");
    tree.mkdir("venv/lib/python3.10/site-packages");
  }
  SUBCASE("no version key: the lib/pythonX.Y with site-packages") {
    tree.write("venv/pyvenv.cfg", "home = " + base + "/bin\ninclude-system-site-packages = false\n");
    tree.mkdir("venv/lib/python3.10/site-packages");
    tree.mkdir("venv/lib/python3.9"); // no site-packages: not taken
  }
  env.set("VIRTUAL_ENV", tree.path("venv"));
  const auto found = discover_python_environments(env, no_system());
  INFO(dump(found));
  REQUIRE(found.environments.size() == 1);
  CHECK(found.environments.front().version == "3.10");
  CHECK(found.environments.front().site_dirs == Dirs{site_of(tree.path("venv"), "3.10")});
}

TEST_CASE("python: plain interpreter on PATH puts the user site at index 0") {
  TempTree tree;
  const auto base = make_install(tree, "opt/py", "3.12");
  const auto user = user_site(tree, "3.12");
  tree.write("decoy/bin/python3", "#!/bin/sh\n", 0644); // not executable: skipped
  auto env = make_env(tree);
  env.set("PATH", tree.path("decoy/bin") + ":" + base + "/bin:/usr/bin");

  auto found = discover_python_environments(env, no_system());
  INFO(dump(found));
  REQUIRE(found.environments.size() == 1);
  const auto& pe = found.environments.front();
  CHECK(pe.label == "python3 on PATH");
  CHECK(pe.primary);
  CHECK_FALSE(pe.is_venv);
  CHECK(pe.prefix == real(base));
  CHECK(pe.base_prefix == pe.prefix);
  CHECK(pe.version == "3.12");
  CHECK(pe.interpreter == real(base + "/bin/python3.12"));
  CHECK(pe.user_site_enabled);
  CHECK(pe.site_dirs == Dirs{user, site_of(real(base), "3.12")});

  SUBCASE("PYTHONUSERBASE moves the user site") {
    const auto other = tree.mkdir("userbase/lib/python3.12/site-packages");
    env.set("PYTHONUSERBASE", tree.path("userbase"));
    found = discover_python_environments(env, no_system());
    CHECK(found.environments.front().site_dirs == Dirs{other, site_of(real(base), "3.12")});
  }
  SUBCASE("PYTHONNOUSERSITE") {
    env.set("PYTHONNOUSERSITE", "x");
    found = discover_python_environments(env, no_system());
    CHECK(found.environments.front().site_dirs == Dirs{site_of(real(base), "3.12")});
  }
}

TEST_CASE("python: a symlinked interpreter finds its prefix from the realpath") {
  TempTree tree;
  const auto base = make_install(tree, "opt/py", "3.11");
  tree.symlink("bin/python3", base + "/bin/python3");
  auto env = make_env(tree);
  env.set("PATH", tree.path("bin"));
  const auto found = discover_python_environments(env, no_system());
  INFO(dump(found));
  REQUIRE(found.environments.size() == 1);
  CHECK(found.environments.front().prefix == real(base));
  CHECK(found.environments.front().version == "3.11");
}

TEST_CASE("python: a venv's python3 on PATH is recognised before its symlink is resolved") {
  TempTree tree;
  const auto base = make_install(tree, "base", "3.12");
  const auto venv = make_venv(tree, "proj/.venv", base, "3.12", "false");
  auto env = make_env(tree);
  env.set("PATH", venv + "/bin:" + base + "/bin");
  const auto found = discover_python_environments(env, no_system());
  INFO(dump(found));
  REQUIRE(found.environments.size() == 1);
  const auto& pe = found.environments.front();
  CHECK(pe.is_venv);
  CHECK(pe.prefix == venv);
  CHECK(pe.site_dirs == Dirs{site_of(venv, "3.12")});
}

TEST_CASE("python: VIRTUAL_ENV and the same venv on PATH are listed once, VIRTUAL_ENV wins") {
  TempTree tree;
  const auto base = make_install(tree, "base", "3.12");
  const auto venv = make_venv(tree, "venv", base, "3.12", "false");
  auto env = make_env(tree);
  env.set("VIRTUAL_ENV", venv);
  env.set("PATH", venv + "/bin:" + base + "/bin");
  PythonSearchOptions options;
  options.system_interpreters = {base + "/bin/python3"};
  const auto found = discover_python_environments(env, options);
  INFO(dump(found));
  REQUIRE(found.environments.size() == 2);
  CHECK(found.environments[0].label == "VIRTUAL_ENV");
  CHECK(found.environments[0].primary);
  CHECK(found.environments[1].label == "system python3");
  CHECK_FALSE(found.environments[1].primary);
  CHECK(found.environments[1].prefix == real(base));
  CHECK(trace_mentions(found, "same environment"));
}

TEST_CASE("python: a VIRTUAL_ENV that PATH does not follow is not what python3 runs") {
  TempTree tree;
  const auto base = make_install(tree, "base", "3.12");
  const auto other = make_install(tree, "other", "3.11");
  const auto venv = make_venv(tree, "venv", base, "3.12", "false");
  auto env = make_env(tree);
  env.set("VIRTUAL_ENV", venv);

  SUBCASE("a stale shell: PATH finds another interpreter") {
    env.set("PATH", other + "/bin");
    const auto found = discover_python_environments(env, no_system());
    INFO(dump(found));
    REQUIRE(found.environments.size() == 2);
    CHECK(found.environments[0].label == "python3 on PATH");
    CHECK(found.environments[0].primary);
    CHECK(found.environments[0].prefix == real(other));
    CHECK(found.environments[1].label == "VIRTUAL_ENV");
    CHECK_FALSE(found.environments[1].primary);
    REQUIRE(found.virtual_env_inactive);
    CHECK(found.virtual_env_inactive->virtual_env == venv);
    CHECK(found.virtual_env_inactive->prefix == real(other));
    CHECK(trace_mentions(found, "Python ignores VIRTUAL_ENV"));
  }
  SUBCASE("activated: the venv's bin first") {
    env.set("PATH", venv + "/bin:" + other + "/bin");
    const auto found = discover_python_environments(env, no_system());
    INFO(dump(found));
    REQUIRE_FALSE(found.environments.empty());
    CHECK(found.environments[0].label == "VIRTUAL_ENV");
    CHECK(found.environments[0].primary);
    CHECK_FALSE(found.virtual_env_inactive);
  }
  SUBCASE("no python3 on PATH: nothing contradicts the variable") {
    env.set("PATH", tree.mkdir("empty-bin"));
    const auto found = discover_python_environments(env, no_system());
    REQUIRE(found.environments.size() == 1);
    CHECK(found.environments[0].label == "VIRTUAL_ENV");
    CHECK(found.environments[0].primary);
    CHECK_FALSE(found.virtual_env_inactive);
  }
}

TEST_CASE("python: CONDA_PREFIX") {
  TempTree tree;
  auto env = make_env(tree);
  const auto conda = tree.mkdir("conda/envs/x");
  env.set("CONDA_PREFIX", conda);

  SUBCASE("lib/pythonX.Y/site-packages") {
    tree.mkdir("conda/envs/x/lib/python3.11/site-packages");
    tree.mkdir("conda/envs/x/lib/python3.9"); // older, no site-packages
    tree.write("conda/envs/x/bin/python3.11", "", 0755);
    tree.symlink("conda/envs/x/bin/python3", "python3.11");
    const auto user = user_site(tree, "3.11");
    const auto found = discover_python_environments(env, no_system());
    INFO(dump(found));
    REQUIRE(found.environments.size() == 1);
    const auto& pe = found.environments.front();
    CHECK(pe.label == "CONDA_PREFIX");
    CHECK(pe.primary);
    CHECK(pe.version == "3.11");
    CHECK(pe.interpreter == real(conda + "/bin/python3.11"));
    CHECK(pe.site_dirs == Dirs{user, site_of(conda, "3.11")});
  }
  SUBCASE("conda-meta only") {
    tree.write("conda/envs/x/conda-meta/python-3.13.1-h1234_0.json", "{}");
    const auto found = discover_python_environments(env, no_system());
    INFO(dump(found));
    REQUIRE(found.environments.size() == 1);
    CHECK(found.environments.front().version == "3.13");
    CHECK(found.environments.front().site_dirs.empty());
  }
  SUBCASE("no Python in it") {
    tree.mkdir("conda/envs/x/lib");
    const auto found = discover_python_environments(env, no_system());
    CHECK(found.environments.empty());
    CHECK(trace_mentions(found, "holds no Python"));
  }
}

TEST_CASE("python: pyenv shims resolve like pyenv") {
  TempTree tree;
  const auto root = tree.path("pyenv");
  tree.write("pyenv/shims/python3",
             "#!/usr/bin/env bash\nset -e\nprogram=\"${0##*/}\"\nexport PYENV_ROOT=\"" + root +
                 "\"\nexec \"" + root + "/libexec/pyenv\" exec \"$program\" \"$@\"\n",
             0755);
  const auto v312 = make_install(tree, "pyenv/versions/3.12.1", "3.12");
  const auto v311 = make_install(tree, "pyenv/versions/3.11.7", "3.11");
  make_install(tree, "pyenv/versions/3.12.0", "3.12");
  tree.write("pyenv/version", "3.11.7\n");
  const auto system = make_install(tree, "usr", "3.10");
  auto env = make_env(tree);
  env.set("PATH", root + "/shims:" + system + "/bin");
  env.set("PYENV_ROOT", tree.path("elsewhere")); // the shim's own export wins

  const auto primary = [&](const PythonDiscovery& found) -> const PythonEnvironment& {
    INFO(dump(found));
    REQUIRE_FALSE(found.environments.empty());
    CHECK(found.environments.front().primary);
    CHECK(found.environments.front().label == "python3 on PATH");
    return found.environments.front();
  };

  SUBCASE("the global version file") {
    const auto found = discover_python_environments(env, no_system());
    const auto& pe = primary(found);
    CHECK(pe.prefix == real(v311));
    CHECK(pe.version == "3.11");
    CHECK(pe.site_dirs == Dirs{site_of(real(v311), "3.11")});
    CHECK(pe.how.find("is a pyenv shim; version 3.11.7 from " + root + "/version") != std::string::npos);
  }
  SUBCASE(".python-version above the working directory") {
    tree.write("work/project/.python-version", "# comment\n\n  3.12.1  extra\n3.11.7\n");
    env.cwd = tree.mkdir("work/project/src/deep");
    const auto found = discover_python_environments(env, no_system());
    const auto& pe = primary(found);
    CHECK(pe.prefix == real(v312));
    CHECK(pe.how.find(tree.path("work/project/.python-version")) != std::string::npos);
  }
  SUBCASE("PYENV_VERSION overrides, skipping versions that are not installed") {
    tree.write("work/.python-version", "3.12.1\n");
    env.set("PYENV_VERSION", "3.99.9:3.11.7");
    const auto found = discover_python_environments(env, no_system());
    CHECK(primary(found).prefix == real(v311));
    CHECK(trace_mentions(found, "3.99.9 (from PYENV_VERSION) is not installed"));
  }
  SUBCASE("a version prefix picks the newest installed match") {
    env.set("PYENV_VERSION", "python-3.12");
    const auto found = discover_python_environments(env, no_system());
    CHECK(primary(found).prefix == real(v312));
  }
  SUBCASE("a missing version falls back to system, the next python3 past the shims") {
    tree.write("work/.python-version", "3.99.9\n");
    const auto found = discover_python_environments(env, no_system());
    const auto& pe = primary(found);
    CHECK(pe.prefix == real(system));
    CHECK(pe.version == "3.10");
    CHECK(trace_mentions(found, "3.99.9"));
  }
  SUBCASE("an empty .python-version means system") {
    tree.write("work/.python-version", "");
    const auto found = discover_python_environments(env, no_system());
    CHECK(primary(found).prefix == real(system));
  }
  SUBCASE("no system python3 past the shims: nothing, and the trace says why") {
    env.set("PATH", root + "/shims");
    env.set("PYENV_VERSION", "3.99.9");
    const auto found = discover_python_environments(env, no_system());
    INFO(dump(found));
    CHECK(found.environments.empty());
    CHECK(trace_mentions(found, "no python3 on PATH past the shims"));
  }
  SUBCASE("a pyenv-virtualenv version is a venv") {
    tree.write("pyenv/versions/3.12.1/envs/proj/pyvenv.cfg",
               "home = " + v312 + "/bin\ninclude-system-site-packages = false\nversion = 3.12.1\n");
    tree.symlink("pyenv/versions/3.12.1/envs/proj/bin/python3", v312 + "/bin/python3");
    tree.mkdir("pyenv/versions/3.12.1/envs/proj/lib/python3.12/site-packages");
    tree.symlink("pyenv/versions/proj", v312 + "/envs/proj");
    env.set("PYENV_VERSION", "proj");
    const auto found = discover_python_environments(env, no_system());
    const auto& pe = primary(found);
    CHECK(pe.is_venv);
    CHECK(pe.prefix == root + "/versions/proj");
    CHECK(pe.base_prefix == v312);
    CHECK(pe.site_dirs == Dirs{site_of(root + "/versions/proj", "3.12")});
  }
  SUBCASE("a shim without an export uses its shims directory's parent") {
    tree.write("pyenv/shims/python3", "#!/usr/bin/env bash\nexec pyenv exec \"${0##*/}\" \"$@\"\n", 0755);
    const auto found = discover_python_environments(env, no_system());
    CHECK(primary(found).prefix == real(v311));
  }
}

TEST_CASE("python: Debian's site.py lists dist-packages") {
  TempTree tree;
  const auto usr = make_install(tree, "usr", "3.11");
  tree.write("usr/lib/python3.11/site.py", "# Debian: /usr/lib/python3/dist-packages\n");
  const auto local = tree.mkdir("usr/local/lib/python3.11/dist-packages");
  const auto shared = tree.mkdir("usr/lib/python3/dist-packages");
  const auto user = user_site(tree, "3.11");
  auto env = make_env(tree);

  SUBCASE("as a system interpreter (not primary)") {
    PythonSearchOptions options;
    options.system_interpreters = {usr + "/bin/python3", tree.path("missing/python3")};
    const auto found = discover_python_environments(env, options);
    INFO(dump(found));
    REQUIRE(found.environments.size() == 1);
    const auto& pe = found.environments.front();
    CHECK(pe.label == "system python3");
    CHECK(pe.primary); // the only one found
    // usr/lib/python3.11/site-packages is not in Debian's list.
    CHECK(pe.site_dirs == Dirs{user, real(usr) + "/local/lib/python3.11/dist-packages",
                               real(usr) + "/lib/python3/dist-packages"});
  }
  SUBCASE("a venv based on it") {
    const auto venv = make_venv(tree, "venv", usr, "3.11", "true");
    env.set("VIRTUAL_ENV", venv);
    const auto found = discover_python_environments(env, no_system());
    INFO(dump(found));
    REQUIRE(found.environments.size() == 1);
    CHECK(found.environments.front().site_dirs ==
          Dirs{site_of(venv, "3.11"), user, site_of(usr, "3.11"), local, shared});
  }
}

TEST_CASE("python: a lib64 platlibdir comes before lib") {
  TempTree tree;
  const auto prefix = make_install(tree, "fedora", "3.12");
  tree.write("fedora/lib64/python3.12/os.py", "");
  const auto site64 = tree.mkdir("fedora/lib64/python3.12/site-packages");
  auto env = make_env(tree);
  env.set("PYTHONNOUSERSITE", "1");
  env.set("PATH", prefix + "/bin");
  const auto found = discover_python_environments(env, no_system());
  INFO(dump(found));
  REQUIRE(found.environments.size() == 1);
  CHECK(found.environments.front().site_dirs == Dirs{real(site64), site_of(real(prefix), "3.12")});
}

TEST_CASE("python: bad VIRTUAL_ENV and CONDA_PREFIX values are trace lines") {
  TempTree tree;
  auto env = make_env(tree);
  tree.write("afile", "x");

  SUBCASE("nonexistent") {
    env.set("VIRTUAL_ENV", tree.path("nope"));
    env.set("CONDA_PREFIX", tree.path("nope2"));
  }
  SUBCASE("empty") {
    env.set("VIRTUAL_ENV", "");
    env.set("CONDA_PREFIX", "");
  }
  SUBCASE("a file") {
    env.set("VIRTUAL_ENV", tree.path("afile"));
    env.set("CONDA_PREFIX", tree.path("afile"));
  }
  SUBCASE("a directory without pyvenv.cfg") {
    env.set("VIRTUAL_ENV", tree.mkdir("plain"));
  }
  SUBCASE("non-UTF-8 bytes") {
    env.set("VIRTUAL_ENV", tree.path("caf\xe9\x01"));
  }
  const auto found = discover_python_environments(env, no_system());
  INFO(dump(found));
  CHECK(found.environments.empty());
  CHECK(trace_mentions(found, "VIRTUAL_ENV"));
  for (const auto& line : found.trace) {
    CHECK(line.find('\x01') == std::string::npos);
  }
}

TEST_CASE("python: a relative VIRTUAL_ENV is taken relative to the working directory, and said so") {
  TempTree tree;
  const auto base = make_install(tree, "base", "3.12");
  make_venv(tree, "work/venv", base, "3.12", "false");
  auto env = make_env(tree);
  env.set("VIRTUAL_ENV", "./venv/");
  const auto found = discover_python_environments(env, no_system());
  INFO(dump(found));
  REQUIRE(found.environments.size() == 1);
  CHECK(found.environments.front().prefix == tree.path("work/venv"));
  CHECK(trace_mentions(found, "is relative"));
}

TEST_CASE("python: garbage, huge and non-UTF-8 pyvenv.cfg never break discovery") {
  TempTree tree;
  const auto base = make_install(tree, "base", "3.12");
  tree.mkdir("venv/lib/python3.12/site-packages");
  auto env = make_env(tree);
  env.set("VIRTUAL_ENV", tree.path("venv"));

  SUBCASE("garbage") {
    tree.write("venv/pyvenv.cfg", std::string("\x00\xff\xfe garbage\n===\n= =\nhome\n", 24));
  }
  SUBCASE("huge: keys after 64 KiB are not read") {
    std::string cfg = "home = " + base + "/bin\n" + std::string(200 * 1024, '#') +
                      "\ninclude-system-site-packages = true\n";
    tree.write("venv/pyvenv.cfg", cfg);
  }
  SUBCASE("non-UTF-8 home") {
    tree.write("venv/pyvenv.cfg", "home = /nowhere/\xff\xfe/bin\ninclude-system-site-packages = true\n");
  }
  SUBCASE("relative home") {
    tree.write("venv/pyvenv.cfg", "home = bin\nversion = banana\n");
  }
  const auto found = discover_python_environments(env, no_system());
  INFO(dump(found));
  REQUIRE(found.environments.size() == 1);
  const auto& pe = found.environments.front();
  CHECK(pe.is_venv);
  CHECK(pe.version == "3.12");
  CHECK(pe.site_dirs.front() == site_of(tree.path("venv"), "3.12"));
}

TEST_CASE("python: hostile PATH values") {
  TempTree tree;
  const auto base = make_install(tree, "base", "3.12");
  tree.symlink("loop/python3", "python3"); // a symlink loop
  tree.symlink("broken/python3", tree.path("nowhere/python3"));
  tree.mkdir("locked");
  tree.write("locked/python3", "#!/bin/sh\n", 0755);
  ::chmod(tree.path("locked").c_str(), 0);
  auto env = make_env(tree);

  SUBCASE("loops, broken links, an unreadable directory, relative and empty entries, then python") {
    env.set("PATH", tree.path("loop") + "::rel/dir:" + tree.path("broken") + ":" + tree.path("locked") + ":" +
                        base + "/bin");
    const auto found = discover_python_environments(env, no_system());
    INFO(dump(found));
    REQUIRE_FALSE(found.environments.empty());
    CHECK(trace_mentions(found, "empty entry"));
    CHECK(trace_mentions(found, "is relative"));
    CHECK(trace_mentions(found, "broken symlink"));
    if (::geteuid() != 0) { // root reads the locked directory anyway
      CHECK(found.environments.front().prefix == real(base));
    }
  }
  SUBCASE("5000 entries") {
    std::string path;
    for (int i = 0; i < 5000; ++i) {
      path += (i % 3 == 0 ? std::string() : tree.path("d" + std::to_string(i))) + ":";
    }
    path += base + "/bin";
    env.set("PATH", path);
    const auto start = std::chrono::steady_clock::now();
    const auto found = discover_python_environments(env, no_system());
    CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
    REQUIRE(found.environments.size() == 1);
    CHECK(found.environments.front().prefix == real(base));
    CHECK(found.trace.size() < 50);
  }
  SUBCASE("nothing") {
    env.set("PATH", "");
    CHECK(discover_python_environments(env, no_system()).environments.empty());
    env.unset("PATH");
    const auto found = discover_python_environments(env, no_system());
    CHECK(found.environments.empty());
    CHECK(trace_mentions(found, "PATH is not set"));
  }
}

TEST_CASE("python: an unreadable pyenv shim is still resolved from its directory") {
  TempTree tree;
  const auto root = tree.path("pyenv");
  tree.write("pyenv/shims/python3", "#!/usr/bin/env bash\nexec pyenv\n", 0111);
  const auto v = make_install(tree, "pyenv/versions/3.12.1", "3.12");
  tree.write("pyenv/version", "3.12.1\n");
  auto env = make_env(tree);
  env.set("PATH", root + "/shims");
  const auto found = discover_python_environments(env, no_system());
  INFO(dump(found));
  REQUIRE(found.environments.size() == 1);
  CHECK(found.environments.front().prefix == real(v));
}

TEST_CASE("python: discovery on this machine finds the pyenv 3.11.7 site-packages") {
  const auto env = Environment::capture();
  const auto root = env.non_empty("PYENV_ROOT").value_or(env.home() + "/.pyenv");
  const auto global = fs::read_file_prefix(root + "/version", 4096);
  const auto found = discover_python_environments(env);
  INFO(dump(found));
  if (!global || global->rfind("3.11.7", 0) != 0 || env.non_empty("VIRTUAL_ENV") ||
      env.non_empty("CONDA_PREFIX") || env.non_empty("PYENV_VERSION") || found.environments.empty() ||
      found.environments.front().how.find("from " + root + "/version") == std::string::npos) {
    CUDADIAG_SKIP("this machine's python3 is not the pyenv shim selecting 3.11.7 from " << root
                                                                                        << "/version");
  }
  const auto& pe = found.environments.front();
  CHECK(pe.primary);
  CHECK(pe.prefix == root + "/versions/3.11.7");
  CHECK(pe.version == "3.11");
  const auto expected = root + "/versions/3.11.7/lib/python3.11/site-packages";
  CHECK(std::find(pe.site_dirs.begin(), pe.site_dirs.end(), expected) != pe.site_dirs.end());
}

TEST_CASE("python: --python agrees with the snapshot for the real python3 on PATH") {
  const auto env = Environment::capture();
  const auto snapshot = discover_python_environments(env);
  const auto* on_path = find_label(snapshot, "python3 on PATH");
  if (on_path == nullptr) {
    CUDADIAG_SKIP("the snapshot has no python3 on PATH (it may equal $VIRTUAL_ENV or $CONDA_PREFIX)");
  }
  const auto ran = discover_python_environments_with(env, "python3", std::chrono::seconds(20));
  REQUIRE_MESSAGE(ran.has_value(), (ran ? std::string() : ran.error().message));
  INFO(dump(*ran));
  INFO(dump(snapshot));
  REQUIRE_FALSE(ran->environments.empty());
  const auto& pe = ran->environments.front();
  CHECK(pe.label == "--python");
  CHECK(pe.primary);
  CHECK(pe.prefix == on_path->prefix);
  CHECK(pe.base_prefix == on_path->base_prefix);
  CHECK(pe.version == on_path->version);
  CHECK(pe.is_venv == on_path->is_venv);
  CHECK(pe.user_site_enabled == on_path->user_site_enabled);
  CHECK(pe.interpreter == on_path->interpreter);
  CHECK(pe.site_dirs == on_path->site_dirs);
  for (size_t i = 1; i < ran->environments.size(); ++i) {
    CHECK_FALSE(ran->environments[i].primary);
    CHECK(ran->environments[i].prefix != pe.prefix);
  }
}

TEST_CASE("python: --python with a scripted interpreter parses its answer") {
  TempTree tree;
  const auto venv_site = tree.mkdir("venv/lib/python3.12/site-packages");
  const auto base_site = tree.mkdir("base/lib/python3.12/site-packages");
  const auto user = user_site(tree, "3.12");
  tree.write("venv/pyvenv.cfg",
             "home = " + tree.path("base/bin") + "\ninclude-system-site-packages = true\n");
  const auto line = [](const std::string& key, const std::string& value) {
    return "echo cudadiag:" + key + ":" + hex(value) + "\n";
  };
  const std::string script =
      "#!/bin/sh\necho 'sitecustomize noise'\necho cudadiag:broken\n" + line("prefix", tree.path("venv")) +
      line("base_prefix", tree.path("base")) + line("version", "3.12") + line("full_version", "3.12.1") +
      line("site", venv_site) + line("site", tree.path("venv/missing")) + line("site", base_site) +
      line("enable_user_site", "True") + line("user_site", user) + line("end", "");
  const auto exe = tree.write("bin/fakepython", script, 0755);
  auto env = make_env(tree);
  const auto ran = discover_python_environments_with(env, exe, std::chrono::seconds(5), no_system());
  REQUIRE_MESSAGE(ran.has_value(), (ran ? std::string() : ran.error().message));
  INFO(dump(*ran));
  REQUIRE(ran->environments.size() == 1);
  const auto& pe = ran->environments.front();
  CHECK(pe.is_venv);
  CHECK(pe.include_system_site_packages);
  CHECK(pe.user_site_enabled);
  CHECK(pe.version == "3.12");
  CHECK(pe.site_dirs == Dirs{venv_site, user, base_site});

  SUBCASE("a bare name is looked up on the snapshot's PATH") {
    env.set("PATH", tree.path("bin"));
    const auto by_name =
        discover_python_environments_with(env, "fakepython", std::chrono::seconds(5), no_system());
    REQUIRE(by_name.has_value());
    CHECK(by_name->environments.front().site_dirs == pe.site_dirs);
  }
}

TEST_CASE("python: --python failures are errors that say what happened") {
  TempTree tree;
  auto env = make_env(tree);

  SUBCASE("nonexistent") {
    const auto ran = discover_python_environments_with(env, tree.path("no/python3"));
    REQUIRE_FALSE(ran.has_value());
    CHECK(ran.error().message.find("does not exist") != std::string::npos);
  }
  SUBCASE("not on PATH") {
    env.set("PATH", tree.mkdir("empty"));
    const auto ran = discover_python_environments_with(env, "python3");
    REQUIRE_FALSE(ran.has_value());
    CHECK(ran.error().message.find("not found on PATH") != std::string::npos);
  }
  SUBCASE("not executable") {
    const auto ran = discover_python_environments_with(env, tree.write("py", "#!/bin/sh\n", 0644));
    REQUIRE_FALSE(ran.has_value());
    CHECK(ran.error().message.find("not an executable") != std::string::npos);
  }
  SUBCASE("exits with a status") {
    const auto ran = discover_python_environments_with(
        env, tree.write("py", "#!/bin/sh\necho 'ModuleNotFoundError: no site' >&2\nexit 3\n", 0755));
    REQUIRE_FALSE(ran.has_value());
    CHECK(ran.error().message.find("exited with status 3: ModuleNotFoundError: no site") !=
          std::string::npos);
  }
  SUBCASE("prints nothing usable") {
    const auto ran =
        discover_python_environments_with(env, tree.write("py", "#!/bin/sh\necho hello\n", 0755));
    REQUIRE_FALSE(ran.has_value());
    CHECK(ran.error().message.find("no usable answer") != std::string::npos);
  }
  SUBCASE("a bad interpreter line") {
    const auto ran = discover_python_environments_with(env, tree.write("py", "#!/no/such/interp\n", 0755));
    REQUIRE_FALSE(ran.has_value());
    CHECK(ran.error().message.find("cannot start") != std::string::npos);
  }
  SUBCASE("sleeps forever, with a child holding the pipe: killed at the timeout") {
    const auto exe = tree.write("py", "#!/bin/sh\nsleep 1000 &\nsleep 1000\n", 0755);
    const auto start = std::chrono::steady_clock::now();
    const auto ran = discover_python_environments_with(env, exe, std::chrono::seconds(1));
    const auto took = std::chrono::steady_clock::now() - start;
    REQUIRE_FALSE(ran.has_value());
    CHECK(ran.error().message.find("did not finish within 1 s") != std::string::npos);
    CHECK(took < std::chrono::seconds(4));
  }
  SUBCASE("closes its output but keeps running") {
    const auto exe = tree.write("py", "#!/bin/sh\nexec >&- 2>&-\nsleep 1000\n", 0755);
    const auto ran = discover_python_environments_with(env, exe, std::chrono::milliseconds(500));
    REQUIRE_FALSE(ran.has_value());
    CHECK(ran.error().message.find("did not finish within 500 ms") != std::string::npos);
  }
}
