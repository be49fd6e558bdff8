// cuda-pathfinder's preload of NVRTC's builtins (1.9 and later, _preload_nvrtc_builtins), by how
// NVRTC was found and what its real file is named.
#include "temp_tree.hpp"
#include "verify/nvrtc_builtins_preload.hpp"

#include <doctest/doctest.h>

using cudadiag::probes::PathfinderStep;
using cudadiag::testing::TempTree;
using cudadiag::verify::pathfinder_builtins_preload;

TEST_CASE(
    "nvrtc builtins preload: a toolkit's NVRTC gets the sibling named from its real file's MAJOR.MINOR") {
  TempTree tree;
  tree.write("tk/lib64/libnvrtc.so.13.1.80", "elf");
  const auto nvrtc = tree.symlink("tk/lib64/libnvrtc.so.13", "libnvrtc.so.13.1.80");
  const auto sibling = tree.write("tk/lib64/libnvrtc-builtins.so.13.1", "elf");
  for (const auto step :
       {PathfinderStep::cuda_path, PathfinderStep::ctk_root, PathfinderStep::product_root}) {
    CHECK(pathfinder_builtins_preload(nvrtc, step) == sibling);
  }
  // Loaded by name (the loader reaches the directory), or by conda's RPATH: no preload.
  CHECK_FALSE(pathfinder_builtins_preload(nvrtc, PathfinderStep::system_search));
  CHECK_FALSE(pathfinder_builtins_preload(nvrtc, PathfinderStep::conda));
  // A wheel gets 13.0's sibling only (the historical 13.0.48 wheel without RUNPATH).
  CHECK_FALSE(pathfinder_builtins_preload(nvrtc, PathfinderStep::site_packages));
  const auto builtins_13_0 = tree.write("tk/lib64/libnvrtc-builtins.so.13.0", "elf");
  CHECK(pathfinder_builtins_preload(nvrtc, PathfinderStep::site_packages) == builtins_13_0);
}

TEST_CASE("nvrtc builtins preload: nothing when the real file's name carries no MAJOR.MINOR or the sibling "
          "is missing") {
  TempTree tree;
  const auto unversioned = tree.write("copied/lib/libnvrtc.so.13", "elf"); // a toolkit copied from a wheel
  tree.write("copied/lib/libnvrtc-builtins.so.13.0", "elf");
  CHECK_FALSE(pathfinder_builtins_preload(unversioned, PathfinderStep::cuda_path));
  tree.write("lonely/lib64/libnvrtc.so.13.2.5", "elf");
  const auto lonely = tree.symlink("lonely/lib64/libnvrtc.so.13", "libnvrtc.so.13.2.5");
  CHECK_FALSE(pathfinder_builtins_preload(lonely, PathfinderStep::cuda_path));
  tree.write("odd/libnvrtc.so.13.x.1", "elf");
  CHECK_FALSE(pathfinder_builtins_preload(tree.path("odd/libnvrtc.so.13.x.1"), PathfinderStep::cuda_path));
  CHECK_FALSE(pathfinder_builtins_preload(tree.path("missing/libnvrtc.so.13"), PathfinderStep::cuda_path));
  // A wheel of another major: nothing.
  tree.write("wheel12/lib/libnvrtc.so.12", "elf");
  tree.write("wheel12/lib/libnvrtc-builtins.so.13.0", "elf");
  CHECK_FALSE(
      pathfinder_builtins_preload(tree.path("wheel12/lib/libnvrtc.so.12"), PathfinderStep::site_packages));
}
