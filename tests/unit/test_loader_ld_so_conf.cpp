#include "loader/ld_so_conf.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

using cudadiag::loader::read_ld_so_conf;
using cudadiag::testing::TempTree;

TEST_CASE("ld.so.conf: directories, comments, includes in sorted order, relative include patterns") {
  TempTree tree;
  tree.write("etc/ld.so.conf",
             "# libc default\ninclude " + tree.path("etc/ld.so.conf.d") + "/*.conf\n/opt/first/\n");
  tree.write("etc/ld.so.conf.d/b.conf", "/usr/local/cuda-13.0/lib64   # the toolkit\n\n");
  tree.write("etc/ld.so.conf.d/a.conf", "include sub/*.conf\n/opt/a=libc6\n");
  tree.write("etc/ld.so.conf.d/sub/x.conf", "/opt/stubs\n");
  const auto conf = read_ld_so_conf(tree.path("etc/ld.so.conf"));
  REQUIRE(conf.entries.size() == 4);
  CHECK(conf.entries[0].directory == "/opt/stubs"); // a.conf's include comes first, then its own line
  CHECK(conf.entries[0].file == tree.path("etc/ld.so.conf.d/sub/x.conf"));
  CHECK(conf.entries[1].directory == "/opt/a");
  CHECK(conf.entries[2].directory == "/usr/local/cuda-13.0/lib64");
  CHECK(conf.entries[2].line == 1);
  CHECK(conf.entries[3].directory == "/opt/first");
  CHECK(conf.entries[3].line == 3);
  const auto* listed = conf.listing("/usr/local/cuda-13.0/lib64/");
  REQUIRE(listed != nullptr);
  CHECK(listed->file == tree.path("etc/ld.so.conf.d/b.conf"));
  CHECK(conf.listing("/nowhere") == nullptr);
}

TEST_CASE("ld.so.conf: a missing file and an include loop end quietly, with trace lines") {
  TempTree tree;
  CHECK(read_ld_so_conf(tree.path("missing.conf")).entries.empty());
  tree.write("loop.conf", "include " + tree.path("loop.conf") + "\n/opt/x\n");
  const auto conf = read_ld_so_conf(tree.path("loop.conf"));
  REQUIRE(conf.entries.size() == 1);
  CHECK(conf.entries[0].directory == "/opt/x");
  CHECK_FALSE(conf.trace.empty());
}

TEST_CASE("ld.so.conf: a directory reached through a symlink is found by realpath") {
  TempTree tree;
  tree.mkdir("real/lib");
  tree.symlink("alias", "real");
  tree.write("ld.so.conf", tree.path("alias/lib") + "\n");
  const auto conf = read_ld_so_conf(tree.path("ld.so.conf"));
  CHECK(conf.listing(tree.path("real/lib")) != nullptr);
}
