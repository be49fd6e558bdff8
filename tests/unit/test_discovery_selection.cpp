// Selection order on synthetic machines: cuda-pathfinder's priority for `selected`, glibc's for
// `loader`, and how bad files are skipped or reported.
#include "synthetic_world.hpp"

#include <doctest/doctest.h>

using cudadiag::discovery::ComponentStatus;
using cudadiag::probes::ComponentKind;
using cudadiag::testing::chosen;
using cudadiag::testing::component;
using cudadiag::testing::SyntheticWorld;

TEST_CASE("selection: a CUDA 13 wheel in any site dir beats a CUDA 12 wheel in the first (rel-dir-major)") {
  SyntheticWorld world;
  const auto site = world.venv("venv", /*system_site_packages=*/true);
  world.env.set("VIRTUAL_ENV", world.tree.path("venv"));
  const auto cu12 = world.library("venv/lib/python3.12/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12");
  // A second site dir: the user site (HOME/.local), which follows the venv's when system site packages are
  // on.
  const auto user_site = world.tree.mkdir("home/user/.local/lib/python3.12/site-packages");
  const auto cu13 =
      world.library("home/user/.local/lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc.so.13");
  world.dist_info(site, "nvidia_cuda_nvrtc_cu12", "12.9.86");
  world.dist_info(user_site, "nvidia_cuda_nvrtc", "13.0.88");

  const auto result = world.discover({"nvrtc"});
  const auto& nvrtc = component(result, "nvrtc");
  REQUIRE(nvrtc.status == ComponentStatus::found);
  CHECK(chosen(nvrtc.selected) == cu13);
  CHECK(nvrtc.selected->via.found_via == "site-packages");
  CHECK(nvrtc.selected_candidate()->version->version == "13.0.88");
  CHECK(nvrtc.candidates.size() == 2);
  CHECK_FALSE(nvrtc.loader.has_value());
  (void)cu12;
}

TEST_CASE("selection: pip wheels beat conda, conda beats the loader, the loader beats CUDA_PATH") {
  SyntheticWorld world;
  const auto site = world.venv("venv");
  world.env.set("VIRTUAL_ENV", world.tree.path("venv"));
  world.tree.mkdir("conda/conda-meta");
  world.env.set("CONDA_PREFIX", world.tree.path("conda"));
  world.env.set("CUDA_PATH", world.tree.path("cuda-path"));
  const auto in_wheel = world.library("venv/lib/python3.12/site-packages/nvidia/cu13/lib/libnvJitLink.so.13");
  const auto in_conda = world.library("conda/lib/libnvJitLink.so.13");
  const auto in_ld_path = world.library("ldpath/libnvJitLink.so.13");
  const auto in_cuda_path = world.library("cuda-path/lib64/libnvJitLink.so.13");
  world.env.set("LD_LIBRARY_PATH", world.tree.path("ldpath"));

  SUBCASE("all present: the wheel") {
    const auto& lib = component(world.discover({"nvJitLink"}), "nvJitLink");
    CHECK(chosen(lib.selected) == in_wheel);
    CHECK(chosen(lib.loader) == in_ld_path);
  }
  SUBCASE("no wheel: conda") {
    std::remove(in_wheel.c_str());
    const auto& lib = component(world.discover({"nvJitLink"}), "nvJitLink");
    CHECK(chosen(lib.selected) == in_conda);
    CHECK(lib.selected->via.found_via == "conda");
  }
  SUBCASE("no wheel, no conda: what dlopen finds (system-search)") {
    std::remove(in_wheel.c_str());
    std::remove(in_conda.c_str());
    const auto& lib = component(world.discover({"nvJitLink"}), "nvJitLink");
    CHECK(chosen(lib.selected) == in_ld_path);
    CHECK(lib.selected->via.pathfinder_step == cudadiag::discovery::PathfinderStep::system_search);
  }
  SUBCASE("only CUDA_PATH") {
    std::remove(in_wheel.c_str());
    std::remove(in_conda.c_str());
    std::remove(in_ld_path.c_str());
    const auto& lib = component(world.discover({"nvJitLink"}), "nvJitLink");
    CHECK(chosen(lib.selected) == in_cuda_path);
    CHECK(lib.selected->via.found_via == "CUDA_PATH");
    CHECK_FALSE(lib.loader.has_value());
  }
}

TEST_CASE("selection: CUDA_PATH wins over CUDA_HOME, an empty value counts as unset") {
  SyntheticWorld world;
  const auto from_path = world.library("tk-path/lib64/libcudart.so.13");
  const auto from_home = world.library("tk-home/lib/libcudart.so.13");
  world.env.set("CUDA_HOME", world.tree.path("tk-home"));

  SUBCASE("only CUDA_HOME") {
    const auto& lib = component(world.discover({"cudart"}), "cudart");
    CHECK(chosen(lib.selected) == from_home);
    CHECK(lib.selected->via.found_via == "CUDA_HOME");
  }
  SUBCASE("both set") {
    world.env.set("CUDA_PATH", world.tree.path("tk-path"));
    const auto& lib = component(world.discover({"cudart"}), "cudart");
    CHECK(chosen(lib.selected) == from_path);
    CHECK(lib.candidates.size() == 2); // CUDA_HOME's copy is still listed
  }
  SUBCASE("CUDA_PATH empty") {
    world.env.set("CUDA_PATH", "");
    const auto& lib = component(world.discover({"cudart"}), "cudart");
    CHECK(chosen(lib.selected) == from_home);
  }
}

TEST_CASE("selection: the loader takes LD_LIBRARY_PATH, then ld.so.cache, then the default dirs") {
  SyntheticWorld world;
  const auto cached = world.library("opt/cached/libcudart.so.13");
  const auto in_default = world.library("usr/lib/x86_64-linux-gnu/libcudart.so.13");
  world.ld_cache({SyntheticWorld::cache_entry("libcudart.so.13", cached)});
  {
    const auto& lib = component(world.discover({"cudart"}), "cudart");
    CHECK(chosen(lib.loader) == cached);
    CHECK(lib.loader->via.found_via == "ld.so.cache");
  }
  const auto on_path = world.library("ldpath/libcudart.so.13");
  world.env.set("LD_LIBRARY_PATH", world.tree.path("missing") + "::" + world.tree.path("ldpath"));
  {
    const auto& lib = component(world.discover({"cudart"}), "cudart");
    CHECK(chosen(lib.loader) == on_path);
    CHECK(lib.candidates.size() == 3);
  }
  (void)in_default;
}

TEST_CASE("selection: the loader skips a 32-bit or foreign-architecture file and keeps searching") {
  SyntheticWorld world;
  std::string elf32(64, '\0');
  elf32.replace(0, 4,
                "\x7f"
                "ELF");
  elf32[4] = 1; // ELFCLASS32
  elf32[5] = 1; // little endian
  elf32[6] = 1;
  elf32[16] = 3; // ET_DYN
  elf32[18] = 3; // EM_386
  world.tree.write("ldpath/libnvrtc.so.13", elf32);
  const auto good = world.library("cache/libnvrtc.so.13");
  world.ld_cache({SyntheticWorld::cache_entry("libnvrtc.so.13", good)});
  world.env.set("LD_LIBRARY_PATH", world.tree.path("ldpath"));
  const auto& lib = component(world.discover({"nvrtc"}), "nvrtc");
  CHECK(chosen(lib.loader) == good);
  REQUIRE(lib.candidates.size() == 2);
  CHECK(lib.candidates[0].rejected.has_value());
  CHECK(lib.candidates[0].rejected->find("32-bit") != std::string::npos);
}

TEST_CASE("selection: a broken file first in cuda-pathfinder's order is the answer, and it fails") {
  SyntheticWorld world;
  world.venv("venv");
  world.env.set("VIRTUAL_ENV", world.tree.path("venv"));
  const auto broken = world.tree.path("venv/lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc.so.13");
  world.tree.write("venv/lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc.so.13", ""); // empty file
  world.library("tk/lib64/libnvrtc.so.13");
  world.env.set("CUDA_HOME", world.tree.path("tk"));
  const auto& lib = component(world.discover({"nvrtc"}), "nvrtc");
  REQUIRE(lib.selected.has_value());
  CHECK(lib.selected->via.path == broken); // cuda-pathfinder never falls back to CUDA_HOME
  REQUIRE(lib.selected->fails.has_value());
  CHECK(*lib.selected->fails == "file too short"); // glibc's words for an empty file
  CHECK(lib.selected->outcome == cudadiag::probes::LoadOutcome::fails);
  CHECK(lib.status == cudadiag::discovery::ComponentStatus::error);
}

TEST_CASE("selection: a dangling link first in cuda-pathfinder's order is passed over (not a file)") {
  SyntheticWorld world;
  world.venv("venv");
  world.env.set("VIRTUAL_ENV", world.tree.path("venv"));
  world.tree.symlink("venv/lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc.so.13", "gone.so");
  const auto good = world.library("tk/lib64/libnvrtc.so.13");
  world.env.set("CUDA_HOME", world.tree.path("tk"));
  const auto& lib = component(world.discover({"nvrtc"}), "nvrtc");
  CHECK(chosen(lib.selected) == good);
  CHECK_FALSE(lib.selected->fails.has_value());
}

TEST_CASE("selection: the loader resolves SONAME by SONAME, newest first, each through the whole path") {
  SyntheticWorld world;
  world.library("old/lib64/libnvrtc.so.12");
  const auto cached = world.library("cache/libnvrtc.so.13");
  world.ld_cache({SyntheticWorld::cache_entry("libnvrtc.so.13", cached)});
  world.env.set("LD_LIBRARY_PATH", world.tree.path("old/lib64"));
  const auto& lib = component(world.discover({"nvrtc"}), "nvrtc");
  CHECK(chosen(lib.loader) == cached); // .so.13 from the cache beats .so.12 on LD_LIBRARY_PATH
  CHECK(chosen(lib.selected) == cached);
}

TEST_CASE("selection: one file reached through two paths is one candidate listing both") {
  SyntheticWorld world;
  const auto real = world.library("usr/local/cuda-13.0/lib64/libnvrtc.so.13");
  world.tree.symlink("usr/local/cuda", "cuda-13.0");
  world.env.set("CUDA_HOME", world.tree.path("usr/local/cuda"));
  world.ld_cache({SyntheticWorld::cache_entry("libnvrtc.so.13", real)});
  const auto& lib = component(world.discover({"nvrtc"}), "nvrtc");
  REQUIRE(lib.candidates.size() == 1);
  const auto& candidate = lib.candidates[0];
  CHECK(candidate.first.found_via == "ld.so.cache");
  CHECK(candidate.also_found_as.size() >= 2); // CUDA_HOME, system-ctk (cuda and cuda-13.0)
  CHECK(lib.selected->candidate == lib.loader->candidate);
}

TEST_CASE("selection: broken symlinks and symlink loops are rejected candidates") {
  SyntheticWorld world;
  world.tree.symlink("ldpath/libcudart.so.13", "does-not-exist.so");
  world.tree.symlink("ldpath2/libcudart.so.13", "libloop.so");
  world.tree.symlink("ldpath2/libloop.so", "libcudart.so.13");
  world.env.set("LD_LIBRARY_PATH", world.tree.path("ldpath") + ":" + world.tree.path("ldpath2"));
  const auto& lib = component(world.discover({"cudart"}), "cudart");
  REQUIRE(lib.candidates.size() == 2);
  CHECK(lib.candidates[0].rejected->find("broken symlink") != std::string::npos);
  CHECK(*lib.candidates[1].rejected == "symlink loop");
  // glibc and cuda-pathfinder both pass over them: no answer, so not found (not an answer that fails).
  CHECK(lib.status == ComponentStatus::not_found);
  CHECK_FALSE(lib.loader.has_value());
}

TEST_CASE("selection: nvvm falls back to the toolkit root derived from where cudart is found") {
  SyntheticWorld world;
  const auto cudart = world.library("opt/cuda-12.9/targets/x86_64-linux/lib/libcudart.so.12");
  const auto nvvm = world.library("opt/cuda-12.9/nvvm/lib64/libnvvm.so.4");
  world.ld_cache({SyntheticWorld::cache_entry("libcudart.so.12", cudart)});
  const auto result = world.discover({"nvvm", "cccl"});
  const auto& lib = component(result, "nvvm");
  CHECK(chosen(lib.selected) == nvvm);
  CHECK(lib.selected->via.found_via == "system-ctk-root");
  CHECK_FALSE(lib.loader.has_value());
}

TEST_CASE("selection: conda headers use the single targets/<triple>/include, CCCL's cccl/ subdir first") {
  SyntheticWorld world;
  world.env.set("CONDA_PREFIX", world.tree.path("conda"));
  world.tree.write("conda/targets/x86_64-linux/include/cccl/cuda/std/version", "// cccl\n");
  world.tree.write("conda/include/cuda/std/version", "// older copy\n");
  const auto& headers = component(world.discover({"cccl"}), "cccl", ComponentKind::headers);
  CHECK(chosen(headers.selected) == world.tree.path("conda/targets/x86_64-linux/include/cccl"));
  CHECK(headers.candidates.size() == 2);
}

TEST_CASE("selection: the driver is found only by the loader, a toolkit stub is listed but never chosen") {
  SyntheticWorld world;
  world.library("usr/local/cuda-13.0/lib64/stubs/libcuda.so");
  world.env.set("CUDA_HOME", world.tree.path("usr/local/cuda-13.0"));
  const auto& driver = component(world.discover({"cuda"}), "cuda");
  REQUIRE(driver.candidates.size() == 1);
  CHECK(driver.candidates[0].is_stub);
  CHECK_FALSE(driver.selected.has_value());
  CHECK_FALSE(driver.loader.has_value());
  CHECK(driver.status == ComponentStatus::not_found);
}

TEST_CASE("selection: a CUDA 12 wheel next to a CUDA 13 wheel reads its own dist-info version") {
  SyntheticWorld world;
  const auto site = world.venv("venv");
  world.env.set("VIRTUAL_ENV", world.tree.path("venv"));
  world.library("venv/lib/python3.12/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12");
  world.library("venv/lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc.so.13");
  world.dist_info(site, "nvidia_cuda_nvrtc_cu12", "12.9.86");
  world.dist_info(site, "nvidia_cuda_nvrtc", "13.0.88");
  const auto nvrtc = component(world.discover({"nvrtc"}), "nvrtc");
  REQUIRE(nvrtc.candidates.size() == 2);
  for (const auto& candidate : nvrtc.candidates) {
    const bool cu13 = candidate.first.path.find("/cu13/") != std::string::npos;
    CHECK(candidate.version->version == (cu13 ? "13.0.88" : "12.9.86"));
  }
}

TEST_CASE("discovery without a run's pool: the frameworks' work, which outlives the preparation, uses no "
          "pool made for it") {
  // prepare_discovery reads the Python environments inside a parallel section; called without a
  // pool (as here, and by a library user), that section runs on a pool made for it alone, gone when
  // the section ends, while the frameworks' reads (started in it) go on. They must not use it.
  SyntheticWorld world;
  const auto site = world.venv("venv");
  world.env.set("VIRTUAL_ENV", world.tree.path("venv"));
  for (int i = 0; i < 40; ++i) {
    world.dist_info(site, "package_" + std::to_string(i), "1.0");
  }
  world.dist_info(site, "torch", "2.9.0");
  const auto wheel = world.library("venv/lib/python3.12/site-packages/nvidia/cu13/lib/libnvJitLink.so.13");
  for (int round = 0; round < 30; ++round) {
    CAPTURE(round);
    const auto& lib = component(world.discover({"nvJitLink"}), "nvJitLink");
    REQUIRE(chosen(lib.selected) == wheel);
  }
}
