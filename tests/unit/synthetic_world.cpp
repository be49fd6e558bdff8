#include "synthetic_world.hpp"

#include "core/filesystem.hpp"
#include "synthetic_elf.hpp"

#include <doctest/doctest.h>

#include <stdexcept>

namespace cudadiag::testing {

SyntheticWorld::SyntheticWorld() {
  env.cwd = tree.mkdir("home/user/work");
  env.set("HOME", tree.path("home/user"));
  env.set("PATH", tree.mkdir("usr/bin"));
  layout.ld_so_cache = tree.path("etc/ld.so.cache");
  layout.default_lib_dirs = {tree.mkdir("usr/lib/x86_64-linux-gnu")};
  layout.toolkit_parents = {tree.mkdir("usr/local")};
  layout.system_root = tree.mkdir("sysroot"); // /usr/include and the like
  layout.target_triple = "x86_64-linux";
  layout.multiarch = "x86_64-linux-gnu";
  layout.dpkg_dir = tree.path("var/lib/dpkg");
  layout.rpm_db = tree.path("var/lib/rpm/rpmdb.sqlite");
  layout.ld_so_preload = tree.path("etc/ld.so.preload");
  // The C library a driver library needs (a toolkit stub needs nothing), in the default directory.
  SyntheticLibrary libc;
  libc.soname = "libc.so.6";
  tree.write("usr/lib/x86_64-linux-gnu/libc.so.6", synthetic_shared_object(libc));
  ld_cache({});
}

std::string SyntheticWorld::library(std::string_view relative) const {
  // Named as its SONAME, needing nothing: every load of it succeeds in the world's closures.
  SyntheticLibrary library;
  library.soname = fs::basename(std::string(relative));
  if (library.soname == "libcuda.so.1" || library.soname == "libnvidia-ml.so.1") {
    library.needed = {"libc.so.6"}; // a real driver links libc; the stub's ELF facts are tested apart
  }
  return tree.write(relative, synthetic_shared_object(library));
}

std::string SyntheticWorld::venv(std::string_view relative, bool system_site_packages) const {
  const std::string root(relative);
  tree.write(root + "/pyvenv.cfg", std::string("home = ") + tree.path("usr/bin") +
                                       "\ninclude-system-site-packages = " +
                                       (system_site_packages ? "true" : "false") + "\nversion = 3.12.1\n");
  tree.symlink(root + "/bin/python3", "python3.12");
  tree.write(root + "/bin/python3.12", "", 0755);
  return tree.mkdir(root + "/lib/python3.12/site-packages");
}

void SyntheticWorld::dist_info(const std::string& site_dir, std::string_view distribution,
                               std::string_view version) const {
  const auto relative = site_dir.substr(tree.root().size() + 1) + "/" + std::string(distribution) + "-" +
                        std::string(version) + ".dist-info/METADATA";
  tree.write(relative, "Metadata-Version: 2.1\nName: " + std::string(distribution) +
                           "\nVersion: " + std::string(version) + "\n\nA wheel.\n");
}

std::string SyntheticWorld::toolkit(std::string_view relative, std::string_view version) const {
  const std::string v(version);
  const std::string json =
      "{\"cuda\": {\"name\": \"CUDA SDK\", \"version\": \"" + v + "\"}, \"cuda_nvrtc\": {\"version\": \"" +
      v + "\"}, \"cuda_cudart\": {\"version\": \"" + v + "\"}, \"libnvjitlink\": {\"version\": \"" + v +
      "\"}, \"cuda_nvvm\": {\"version\": \"" + v + "\"}}";
  return tree.write(std::string(relative) + "/version.json", json), tree.path(relative);
}

void SyntheticWorld::ld_cache(const std::vector<loader::LdCacheEntry>& entries) const {
  tree.write("etc/ld.so.cache", loader::build_ld_so_cache(entries));
}

loader::LdCacheEntry SyntheticWorld::cache_entry(std::string soname, std::string path) {
  loader::LdCacheEntry entry;
  entry.soname = std::move(soname);
  entry.path = std::move(path);
  entry.flags = 0x0303; // libc6, x86-64
  return entry;
}

discovery::DiscoveryResult SyntheticWorld::discover(std::vector<std::string> only) const {
  discovery::DiscoveryOptions options;
  options.layout = layout;
  options.only = std::move(only);
  options.python_search.system_interpreters = {};
  return discovery::discover(env, options);
}

discovery::ComponentResult component(const discovery::DiscoveryResult& result, std::string_view name,
                                     probes::ComponentKind kind) {
  for (const auto& entry : result.components) {
    if (entry.spec->name == name && entry.spec->kind == kind) {
      return entry;
    }
  }
  FAIL("component not in result: " << std::string(name));
  throw std::logic_error("unreachable");
}

std::string chosen(const std::optional<discovery::Choice>& choice) {
  return choice ? choice->via.path : "";
}

} // namespace cudadiag::testing
