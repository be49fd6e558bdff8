// Search strategies in isolation: what each one sees and records in its trace.
#include "probes/search_strategies.hpp"
#include "synthetic_world.hpp"

#include <doctest/doctest.h>

using cudadiag::probes::derive_toolkit_root;
using cudadiag::probes::expand_triple;
using cudadiag::testing::component;
using cudadiag::testing::SyntheticWorld;

TEST_CASE("search strategies: derive_toolkit_root follows cuda-pathfinder's rule") {
  CHECK(derive_toolkit_root("/usr/local/cuda-13.0/lib64/libcudart.so.13") == "/usr/local/cuda-13.0");
  CHECK(derive_toolkit_root("/usr/local/cuda-13.0/lib/libcudart.so.13") == "/usr/local/cuda-13.0");
  CHECK(derive_toolkit_root("/opt/cuda/targets/x86_64-linux/lib/libcudart.so.12") == "/opt/cuda");
  CHECK_FALSE(derive_toolkit_root("/usr/lib/x86_64-linux-gnu/libcudart.so.12") == std::optional<std::string>("/usr"));
  CHECK_FALSE(derive_toolkit_root("/opt/weird/libcudart.so.12").has_value());
}

TEST_CASE("search strategies: {triple} expands to the layout's target triple") {
  cudadiag::SystemLayout layout;
  layout.target_triple = "sbsa-linux";
  CHECK(expand_triple("targets/{triple}/lib", layout) == "targets/sbsa-linux/lib");
  CHECK(expand_triple("lib64", layout) == "lib64");
}

TEST_CASE("search strategies: LD_LIBRARY_PATH resolves empty and relative entries against the cwd") {
  SyntheticWorld world;
  const auto in_cwd = world.library("home/user/work/libnvrtc.so.13");
  const auto in_sub = world.library("home/user/work/sub/libnvrtc.so.13");
  world.env.set("LD_LIBRARY_PATH", ":sub");
  const auto& lib = component(world.discover({"nvrtc"}), "nvrtc");
  REQUIRE(lib.candidates.size() == 2);
  CHECK(lib.candidates[0].first.path == in_cwd);
  CHECK(lib.candidates[1].first.path == in_sub);
  CHECK(lib.candidates[0].first.found_via == "LD_LIBRARY_PATH");
}

TEST_CASE("search strategies: 5,000 LD_LIBRARY_PATH entries are searched without trouble") {
  SyntheticWorld world;
  std::string value;
  for (int i = 0; i < 5000; ++i) {
    value += world.tree.path("missing-" + std::to_string(i)) + ":";
  }
  const auto good = world.library("ldpath/libcudart.so.13");
  value += world.tree.path("ldpath");
  world.env.set("LD_LIBRARY_PATH", value);
  const auto& lib = component(world.discover({"cudart"}), "cudart");
  CHECK(cudadiag::testing::chosen(lib.loader) == good);
}

TEST_CASE("search strategies: bad CUDA_HOME, CONDA_PREFIX and VIRTUAL_ENV values are traced, not fatal") {
  SyntheticWorld world;
  world.tree.write("a-file", "x");
  for (const auto& value : {std::string(""), std::string("relative/dir"), world.tree.path("nope"), world.tree.path("a-file"),
                            std::string("/\xff\xfe/bad-utf8")}) {
    CAPTURE(value);
    world.env.set("CUDA_HOME", value);
    world.env.set("CUDA_PATH", value);
    world.env.set("CONDA_PREFIX", value);
    world.env.set("VIRTUAL_ENV", value);
    const auto result = world.discover({"nvrtc", "cccl", "nvcc"});
    CHECK(result.components.size() == 4); // nvrtc is a library and a header set
    for (const auto& entry : result.components) {
      CHECK(entry.candidates.empty());
    }
  }
}

TEST_CASE("search strategies: system toolkits /usr/local/cuda and cuda-X.Y are listed newest first") {
  SyntheticWorld world;
  world.library("usr/local/cuda-12.4/lib64/libnvrtc.so.12");
  world.library("usr/local/cuda-12.10/lib64/libnvrtc.so.12");
  world.library("usr/local/cuda-12.9/lib64/libnvrtc.so.12");
  const auto& lib = component(world.discover({"nvrtc"}), "nvrtc");
  REQUIRE(lib.candidates.size() == 3);
  CHECK(lib.candidates[0].first.path.find("cuda-12.10/") != std::string::npos);
  CHECK(lib.candidates[1].first.path.find("cuda-12.9/") != std::string::npos);
  CHECK(lib.candidates[2].first.path.find("cuda-12.4/") != std::string::npos);
  CHECK_FALSE(lib.selected.has_value()); // cuda-pathfinder does not look in /usr/local
  CHECK(lib.candidates[0].first.found_via == "system-ctk");
}

TEST_CASE("search strategies: binaries come from wheels, conda, CUDA_PATH and (native only) PATH") {
  SyntheticWorld world;
  const auto on_path = world.tree.write("usr/bin/nvcc", "#!/bin/sh\n", 0755);
  world.tree.write("tk/bin/nvcc", "#!/bin/sh\n", 0644); // not executable
  world.env.set("CUDA_PATH", world.tree.path("tk"));
  const auto& nvcc = component(world.discover({"nvcc"}), "nvcc", cudadiag::probes::ComponentKind::binary);
  REQUIRE(nvcc.candidates.size() == 2);
  CHECK(cudadiag::testing::chosen(nvcc.loader) == on_path);
  CHECK_FALSE(nvcc.selected.has_value());
  // CUDA_PATH is searched before PATH.
  CHECK(nvcc.candidates[0].rejected == std::optional<std::string>("not executable"));
  CHECK(nvcc.candidates[1].usable());
}
