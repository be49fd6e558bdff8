// The load model on synthetic machines: each answer is the outcome of its load (closure and all),
// and CUDA Python's answer follows cuda-pathfinder 1.9.1's control flow over those outcomes.
#include "discovery/load_model.hpp"
#include "synthetic_elf.hpp"
#include "synthetic_world.hpp"

#include <doctest/doctest.h>

#include <algorithm>

using cudadiag::discovery::ComponentStatus;
using cudadiag::probes::LoadOutcome;
using cudadiag::probes::PathfinderStep;
using cudadiag::testing::chosen;
using cudadiag::testing::component;
using cudadiag::testing::synthetic_shared_object;
using cudadiag::testing::SyntheticLibrary;
using cudadiag::testing::SyntheticWorld;

namespace {

std::string write_library(const SyntheticWorld& world, const std::string& relative, SyntheticLibrary spec) {
  return world.tree.write(relative, synthetic_shared_object(spec));
}

} // namespace

TEST_CASE(
    "load model: a missing DT_NEEDED fails the system search, and cuda-pathfinder goes on to CUDA_PATH") {
  SyntheticWorld world;
  const auto broken =
      write_library(world, "ldpath/libcufft.so.12", {.soname = "libcufft.so.12", .needed = {"libgone.so.1"}});
  world.env.set("LD_LIBRARY_PATH", world.tree.path("ldpath"));
  const auto toolkit = world.library("toolkit/lib64/libcufft.so.12");

  SUBCASE("CUDA_PATH set: its copy, loaded by path") {
    world.env.set("CUDA_PATH", world.tree.path("toolkit"));
    const auto cufft = component(world.discover({"cufft"}), "cufft");
    CHECK(cufft.status == ComponentStatus::found);
    CHECK(chosen(cufft.selected) == toolkit);
    CHECK(cufft.selected->outcome == LoadOutcome::loads);
    CHECK(cufft.selected->reason.find("its system search failed first") != std::string::npos);
    CHECK(chosen(cufft.loader) == broken);
    CHECK(cufft.loader->outcome == LoadOutcome::fails);
    REQUIRE(cufft.loader->fails.has_value());
    CHECK(cufft.loader->fails->find("libgone.so.1") != std::string::npos);
    CHECK_FALSE(cufft.python_failed.has_value()); // CUDA Python's load succeeds by path
  }
  SUBCASE("nothing else: DynamicLibNotFoundError, CUDA Python's load failed on the system search's file") {
    const auto cufft = component(world.discover({"cufft"}), "cufft");
    CHECK_FALSE(cufft.selected.has_value());
    CHECK(cufft.status == ComponentStatus::error);
    CHECK(chosen(cufft.loader) == broken);
    CHECK(cufft.loader->outcome == LoadOutcome::fails);
    REQUIRE(cufft.python_failed.has_value());
    CHECK(chosen(cufft.python_failed) == broken);
    CHECK(cufft.python_failed->outcome == LoadOutcome::fails);
    CHECK(cufft.python_failed->fails->find("libgone.so.1") != std::string::npos);
    CHECK(cufft.python_failed->reason.find("raises DynamicLibNotFoundError") != std::string::npos);
  }
}

TEST_CASE("load model: a dependency found through $ORIGIN in DT_RUNPATH does not fail the load") {
  SyntheticWorld world;
  const auto lib =
      write_library(world, "ldpath/libcufft.so.12",
                    {.soname = "libcufft.so.12", .needed = {"libbeside.so.1"}, .runpath = "$ORIGIN"});
  write_library(world, "ldpath/libbeside.so.1", {.soname = "libbeside.so.1"});
  world.env.set("LD_LIBRARY_PATH", world.tree.path("ldpath"));
  world.env.set("CUDA_PATH", world.tree.path("toolkit"));
  world.library("toolkit/lib64/libcufft.so.12");
  const auto cufft = component(world.discover({"cufft"}), "cufft");
  CHECK(chosen(cufft.selected) == lib);
  CHECK(cufft.selected->via.pathfinder_step == PathfinderStep::system_search);
  CHECK(cufft.selected->outcome == LoadOutcome::loads);
  CHECK(cufft.loader->outcome == LoadOutcome::loads);
}

TEST_CASE("load model: a file cuda-pathfinder found by path and whose load fails raises, no fallback") {
  SyntheticWorld world;
  const auto site = world.venv("venv");
  world.env.set("VIRTUAL_ENV", world.tree.path("venv"));
  const auto wheel =
      write_library(world, site.substr(world.tree.root().size() + 1) + "/nvidia/cu13/lib/libcufft.so.12",
                    {.soname = "libcufft.so.12", .needed = {"libgone.so.1"}});
  world.env.set("CUDA_PATH", world.tree.path("toolkit"));
  world.library("toolkit/lib64/libcufft.so.12");
  const auto cufft = component(world.discover({"cufft"}), "cufft");
  CHECK(chosen(cufft.selected) == wheel);
  CHECK(cufft.selected->outcome == LoadOutcome::fails);
  CHECK(cufft.selected->reason.find("RuntimeError") != std::string::npos);
  CHECK(cufft.status == ComponentStatus::error);
}

TEST_CASE("load model: a dependency cuda-pathfinder loads first fails its dependents, which never open") {
  SyntheticWorld world;
  world.env.set("LD_LIBRARY_PATH", world.tree.path("ldpath"));
  write_library(world, "ldpath/libnvJitLink.so.13",
                {.soname = "libnvJitLink.so.13", .needed = {"libgone.so.1"}});
  world.env.set("CUDA_PATH", world.tree.path("toolkit"));
  world.library("toolkit/lib64/libcusparse.so.12");
  SUBCASE("the dependency has no other copy: its DynamicLibNotFoundError propagates, the dependent is not "
          "found") {
    const auto cusparse = component(world.discover({"cusparse"}), "cusparse");
    CHECK_FALSE(cusparse.selected.has_value());
    CHECK_FALSE(cusparse.python_failed.has_value()); // no file of its own was tried
    CHECK(std::any_of(cusparse.trace.begin(), cusparse.trace.end(), [](const std::string& line) {
      return line.find("dependency nvJitLink first and does not find it") != std::string::npos;
    }));
  }
  SUBCASE("the dependency's only copy is found but fails: the dependent fails with it, never opened") {
    write_library(world, "toolkit/lib64/libnvJitLink.so.13",
                  {.soname = "libnvJitLink.so.13", .needed = {"libgone.so.1"}});
    world.env.unset("LD_LIBRARY_PATH");
    const auto cusparse = component(world.discover({"cusparse"}), "cusparse");
    REQUIRE(cusparse.selected.has_value());
    CHECK(cusparse.selected->outcome == LoadOutcome::fails);
    CHECK(cusparse.selected->failed_dependency == "nvJitLink");
    CHECK(cusparse.status == ComponentStatus::error);
  }
  SUBCASE("the dependency's CUDA_PATH copy loads: so does the dependent") {
    world.library("toolkit/lib64/libnvJitLink.so.13");
    const auto cusparse = component(world.discover({"cusparse"}), "cusparse");
    REQUIRE(cusparse.selected.has_value());
    CHECK(cusparse.selected->outcome == LoadOutcome::loads);
  }
}

TEST_CASE("load model: a preloaded library answers both, as already loaded") {
  SyntheticWorld world;
  const auto preloaded = world.library("opt/stubs/libcuda.so.1");
  const auto driver = world.library("driver/libcuda.so.1");
  world.env.set("LD_LIBRARY_PATH", world.tree.path("driver"));
  SUBCASE("LD_PRELOAD") {
    world.env.set("LD_PRELOAD", preloaded);
    const auto cuda = component(world.discover({"cuda"}), "cuda");
    CHECK(chosen(cuda.loader) == preloaded);
    CHECK(cuda.loader->via.found_via == "LD_PRELOAD");
    CHECK(chosen(cuda.selected) == preloaded);
    CHECK(cuda.selected->via.pathfinder_step == PathfinderStep::already_loaded);
  }
  SUBCASE("/etc/ld.so.preload, by name through the search path") {
    world.tree.write("etc/ld.so.preload", "libcuda.so.1\n");
    const auto cuda = component(world.discover({"cuda"}), "cuda");
    CHECK(chosen(cuda.loader) == driver);
    CHECK(cuda.loader->via.found_via == "/etc/ld.so.preload");
  }
  SUBCASE("nothing preloaded") {
    const auto cuda = component(world.discover({"cuda"}), "cuda");
    CHECK(chosen(cuda.loader) == driver);
    CHECK(cuda.loader->via.found_via == "LD_LIBRARY_PATH");
  }
}
