#include "loader/preload.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

using cudadiag::Environment;
using cudadiag::SystemLayout;
using cudadiag::loader::system_preloads;
using cudadiag::testing::TempTree;

TEST_CASE(
    "preloads: LD_PRELOAD split on spaces and colons, then the preload file's entries, in glibc's order") {
  TempTree tree;
  Environment env;
  env.set("LD_PRELOAD", "/opt/a.so  libb.so.1:/opt/c.so:");
  SystemLayout layout;
  layout.ld_so_preload = tree.write("etc/ld.so.preload", "/usr/lib/libd.so\n\tlibe.so:libf.so  \n");
  const auto all = system_preloads(env, layout);
  REQUIRE(all.size() == 6);
  CHECK(all[0].entry == "/opt/a.so");
  CHECK(all[1].entry == "libb.so.1");
  CHECK(all[2].entry == "/opt/c.so");
  CHECK(all[0].source == "LD_PRELOAD");
  CHECK_FALSE(all[2].from_file);
  CHECK(all[3].entry == "/usr/lib/libd.so");
  CHECK(all[4].entry == "libe.so");
  CHECK(all[5].entry == "libf.so");
  CHECK(all[5].from_file);
  CHECK(all[5].source ==
        "/etc/ld.so.preload"); // named as the system names it, whatever root it is read under
}

TEST_CASE("preloads: none without LD_PRELOAD and with no preload file") {
  TempTree tree;
  Environment env;
  env.set("LD_PRELOAD", "");
  SystemLayout layout;
  layout.ld_so_preload = tree.path("etc/ld.so.preload");
  CHECK(system_preloads(env, layout).empty());
}
