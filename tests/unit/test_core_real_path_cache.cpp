// The per-run realpath cache gives realpath's answer, errors included, for every kind of path
// discovery and the closures resolve: plain files, SONAME link chains, links into other
// directories, dangling links, loops, directories reached through links, relative and unusual paths.
#include "core/real_path_cache.hpp"

#include "core/filesystem.hpp"
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
      tree.path("cuda/lib64/libcudart.so.13.0.96"), tree.path("cuda/lib64/libcudart.so.13"),
      tree.path("cuda/lib64/libcudart.so"),         tree.path("lib/libcudart.so.13"),
      tree.path("cuda/lib64/libnvrtc.so.13"),       tree.path("cuda/lib64/absolute.so"),
      tree.path("cuda/lib64/dangling.so"),          tree.path("cuda/lib64/loop_a.so"),
      tree.path("cuda/lib64/missing.so"),           tree.path("missing_dir/libcudart.so.13"),
      tree.path("plain_file/libcudart.so.13"),      tree.path("cuda/lib64/../lib64/libcudart.so"),
      tree.path("cuda/lib64/./libcudart.so"),       tree.path("cuda//lib64/libcudart.so"),
      tree.path("cuda/lib64") + "/",                tree.path("lib"),
      "/",                                          "relative/libcudart.so",
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
