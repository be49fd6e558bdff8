// The per-run realpath cache gives realpath's answer, errors included, for every kind of path
// discovery and the closures resolve: plain files, SONAME link chains, links into other
// directories, dangling links, loops, directories reached through links, relative and unusual paths.
#include "core/filesystem.hpp"
#include "core/real_path_cache.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using cudadiag::fs::RealPathCache;
using cudadiag::testing::TempTree;

namespace {

std::string answer(const cudadiag::Expected<std::string>& resolved) {
  return resolved ? "ok " + *resolved : "error " + resolved.error().message;
}

} // namespace

TEST_CASE("real path cache: the same answers as realpath") {
  const TempTree tree;
  tree.write("cuda/lib64/libcudart.so.13.0.96", "x");
  tree.symlink("cuda/lib64/libcudart.so.13", "libcudart.so.13.0.96");
  tree.symlink("cuda/lib64/libcudart.so", "libcudart.so.13");
  tree.write("other/libnvrtc.so.13.0.88", "x");
  tree.symlink("cuda/lib64/libnvrtc.so.13", "../../other/libnvrtc.so.13.0.88");
  tree.symlink("cuda/lib64/absolute.so", tree.path("other/libnvrtc.so.13.0.88"));
  tree.symlink("cuda/lib64/dangling.so", "missing.so");
  tree.symlink("cuda/lib64/loop_a.so", "loop_b.so");
  tree.symlink("cuda/lib64/loop_b.so", "loop_a.so");
  tree.symlink("lib", "cuda/lib64"); // a directory reached through a link
  tree.write("plain_file", "x");
  const std::vector<std::string> paths = {
      tree.path("cuda/lib64/libcudart.so.13.0.96"),
      tree.path("cuda/lib64/libcudart.so.13"),
      tree.path("cuda/lib64/libcudart.so"),
      tree.path("lib/libcudart.so.13"),
      tree.path("cuda/lib64/libnvrtc.so.13"),
      tree.path("cuda/lib64/absolute.so"),
      tree.path("cuda/lib64/dangling.so"),
      tree.path("cuda/lib64/loop_a.so"),
      tree.path("cuda/lib64/missing.so"),
      tree.path("missing_dir/libcudart.so.13"),
      tree.path("plain_file/libcudart.so.13"),
      tree.path("cuda/lib64/../lib64/libcudart.so"),
      tree.path("cuda/lib64/./libcudart.so"),
      tree.path("cuda//lib64/libcudart.so"),
      tree.path("cuda/lib64") + "/",
      tree.path("lib"),
      "/",
      "relative/libcudart.so",
      "",
  };
  const RealPathCache cache;
  for (int pass = 0; pass < 2; ++pass) { // the second pass answers from the cached directories
    for (const auto& path : paths) {
      CAPTURE(path);
      CHECK(answer(cache.real_path(path)) == answer(cudadiag::fs::real_path(path)));
    }
  }
  CHECK(answer(cache.real_path(tree.path("lib/libcudart.so"))) ==
        "ok " + *cudadiag::fs::real_path(tree.path("cuda/lib64/libcudart.so.13.0.96")));
}

TEST_CASE("real path cache: files under directory links at every depth give realpath's answers") {
  // Directory links at every depth: to names beside them, to absolute and relative paths elsewhere,
  // chains, loops, dangling; missing and non-directory parents; each path asked for before and after
  // its parents and children, in a cache of its own each order.
  const TempTree tree;
  tree.write("real/a/b/c/libx.so.1", "x");
  tree.write("real/a/b/c/d/liby.so.1", "x");
  tree.symlink("real/a/b/c/libx.so", "libx.so.1");
  tree.symlink("real/a/b2", "b");           // a directory link to a name beside it
  tree.symlink("real/a/b3", "b2");          // a chain of such links
  tree.symlink("real/a/b/c_up", "../b/c");  // relative, through the parent
  tree.symlink("abs", tree.path("real/a")); // absolute
  tree.symlink("real/a/loop1", "loop2");    // a loop of directory links
  tree.symlink("real/a/loop2", "loop1");
  tree.symlink("real/a/dangling", "nowhere");
  tree.write("real/a/file", "x");
  const std::vector<std::string> paths = {
      tree.path("real/a/b3/c/d/liby.so.1"),
      tree.path("real/a/b3/c/libx.so"),
      tree.path("real/a/b2/c/libx.so.1"),
      tree.path("real/a/b/c/libx.so"),
      tree.path("abs/b3/c/d/liby.so.1"),
      tree.path("abs/b/c_up/d/liby.so.1"),
      tree.path("real/a/b/c_up/libx.so"),
      tree.path("real/a/loop1/c/libx.so"),
      tree.path("real/a/dangling/libx.so"),
      tree.path("real/a/file/c/libx.so"),
      tree.path("real/a/missing/c/d/libx.so"),
      tree.path("real/a/missing/c/libx.so"),
      tree.path("abs/b3/c/d"),
      tree.path("abs/b3/c"),
      tree.path("abs/b3"),
      tree.path("real/a/b/c/d/missing.so"),
      tree.path("real/a/b/c/d"),
      tree.path("real"),
  };
  for (const bool reversed : {false, true}) {
    CAPTURE(reversed);
    const RealPathCache cache;
    for (int pass = 0; pass < 2; ++pass) {
      for (std::size_t i = 0; i < paths.size(); ++i) {
        const auto& path = paths[reversed ? paths.size() - 1 - i : i];
        CAPTURE(path);
        CHECK(answer(cache.real_path(path)) == answer(cudadiag::fs::real_path(path)));
      }
    }
  }
}
