// What an installation says of itself against the disk: python.file_overwritten and
// python.record_mismatch from RECORD facts, env.root_release_differs from the roots variables name.
#include "checks.hpp"
#include "findings/findings.hpp"
#include "findings/install_rules.hpp"
#include "synthetic_world.hpp"

#include <doctest/doctest.h>

#include <string>

using cudadiag::findings::evaluate_records;
using cudadiag::findings::evaluate_variable_roots;
using cudadiag::findings::Finding;
using cudadiag::findings::Severity;
using cudadiag::python::RecordClaim;
using cudadiag::python::RecordedFile;
using cudadiag::testing::SyntheticWorld;
using cudadiag::testing::with_id;

namespace {

RecordClaim claim_of(std::string distribution, std::string version, std::uint64_t size, bool matches) {
  RecordClaim claim;
  claim.distribution = std::move(distribution);
  claim.version = std::move(version);
  claim.dist_info = "/venv/site/" + claim.distribution + ".dist-info";
  claim.size = size;
  claim.size_matches = matches;
  return claim;
}

cudadiag::discovery::DiscoveryResult nccl_pair(bool torch_pins_cu12) {
  cudadiag::discovery::DiscoveryResult result;
  RecordedFile file;
  file.path = "/venv/site/nvidia/nccl/lib/libnccl.so.2";
  file.relative = "nvidia/nccl/lib/libnccl.so.2";
  file.size = 240931768;
  file.claims = {claim_of("nvidia-nccl-cu11", "2.14.3", 240931768, true),
                 claim_of("nvidia-nccl-cu12", "2.27.3", 429634192, false)};
  result.records.shared.push_back(file);
  if (torch_pins_cu12) {
    cudadiag::python::FrameworkRequirement pin;
    pin.framework = "torch";
    pin.framework_version = "2.8.0";
    pin.dependency = "nvidia_nccl_cu12";
    pin.specifier = "==2.27.3";
    pin.installed = "2.27.3";
    pin.met = true;
    result.framework_requirements.push_back(pin);
  }
  return result;
}

// Every discovery finding, causes merged, as the pipeline lists them.
std::vector<Finding> evaluate_discovery_merged(const SyntheticWorld& world) {
  auto found = cudadiag::findings::evaluate_discovery(world.discover({"nccl"}), world.env);
  cudadiag::findings::merge_shared_causes(found);
  return found;
}

} // namespace

TEST_CASE("install rules: a file two distributions claim is one finding, an error when a pin loses it") {
  const auto pinned = evaluate_records(nccl_pair(true));
  REQUIRE(pinned.size() == 1);
  const auto& error = pinned.front();
  CHECK(error.id == "python.file_overwritten");
  CHECK(error.severity == Severity::error);
  CHECK(cudadiag::testing::contains(error.message, "is nvidia-nccl-cu11 2.14.3's"));
  CHECK(cudadiag::testing::contains(error.message,
                                    "torch 2.8.0 pins it but gets nvidia-nccl-cu11 2.14.3's file"));
  CHECK(cudadiag::testing::contains(error.remedy, "python3 -m pip uninstall -y nvidia-nccl-cu11"));
  CHECK(cudadiag::testing::contains(error.remedy,
                                    "python3 -m pip install --force-reinstall nvidia-nccl-cu12==2.27.3"));
  CHECK(error.remedy.find("uninstall") < error.remedy.find("--force-reinstall"));
  CHECK(*error.evidence.string("keep") == "nvidia-nccl-cu12");

  // Nothing pins either: the file on disk decides what to keep, and nothing fails today.
  const auto unpinned = evaluate_records(nccl_pair(false));
  REQUIRE(unpinned.size() == 1);
  CHECK(unpinned.front().severity == Severity::warning);
  CHECK(*unpinned.front().evidence.string("keep") == "nvidia-nccl-cu11");
  CHECK(cudadiag::testing::contains(unpinned.front().remedy, "pip uninstall -y nvidia-nccl-cu12"));
}

TEST_CASE("install rules: files that differ from their one RECORD, one finding per distribution") {
  cudadiag::discovery::DiscoveryResult result;
  RecordedFile missing;
  missing.path = "/venv/site/nvidia/nvshmem/lib/libnvshmem_host.so.3";
  missing.relative = "nvidia/nvshmem/lib/libnvshmem_host.so.3";
  missing.claims = {claim_of("nvidia-nvshmem-cu13", "3.4.5", 41241312, false)};
  RecordedFile resized;
  resized.path = "/venv/site/nvidia/cu13/lib/libnvrtc.so.13";
  resized.relative = "nvidia/cu13/lib/libnvrtc.so.13";
  resized.size = 19;
  resized.claims = {claim_of("nvidia-cuda-nvrtc", "13.0.88", 110000000, false)};
  result.records.differing = {missing, resized};
  const auto found = evaluate_records(result);
  REQUIRE(found.size() == 2);
  CHECK(found[0].id == "python.record_mismatch");
  CHECK(found[0].severity == Severity::error);
  CHECK(cudadiag::testing::contains(found[0].message, "1 library its RECORD lists is missing"));
  CHECK(cudadiag::testing::contains(found[0].remedy, "--force-reinstall nvidia-nvshmem-cu13==3.4.5"));
  CHECK(found[1].severity == Severity::warning);
  CHECK(cudadiag::testing::contains(found[1].message, "is 19 bytes, its RECORD says 110000000 bytes"));
  CHECK(cudadiag::testing::contains(found[1].message, "the version 13.0.88"));
}

TEST_CASE("install rules: a root a variable names, newer, older or the loaded file itself") {
  SyntheticWorld world;
  world.library("nccl/build/lib/libnccl.so.2.27.0");
  world.tree.symlink("nccl/build/lib/libnccl.so.2", "libnccl.so.2.27.0");
  world.library("usr/lib/x86_64-linux-gnu/libnccl.so.2.23.4");
  world.tree.symlink("usr/lib/x86_64-linux-gnu/libnccl.so.2", "libnccl.so.2.23.4");
  world.ld_cache({SyntheticWorld::cache_entry("libnccl.so.2",
                                              world.tree.path("usr/lib/x86_64-linux-gnu/libnccl.so.2"))});
  world.env.set("NCCL_HOME", world.tree.path("nccl/build"));
  const auto newer = evaluate_variable_roots(world.discover({"nccl"}), world.env);
  REQUIRE(newer.size() == 1);
  CHECK(newer.front().id == "env.root_release_differs");
  CHECK(newer.front().severity == Severity::warning);
  CHECK(*newer.front().evidence.string("root_version") == "2.27.0");
  CHECK(*newer.front().evidence.string("loaded_version") == "2.23.4");
  // cuda-pathfinder's system search comes before the product roots: both answers are the system's,
  // and the root is this one finding.
  const auto all = evaluate_discovery_merged(world);
  CHECK(with_id(all, "lib.python_native_differ") == nullptr);
  CHECK(with_id(all, "lib.multiple_versions") == nullptr);
  REQUIRE(with_id(all, "env.root_release_differs") != nullptr);

  // The loader binds the root's own file: nothing to say.
  world.env.set("LD_LIBRARY_PATH", world.tree.path("nccl/build/lib"));
  CHECK(evaluate_variable_roots(world.discover({"nccl"}), world.env).empty());

  // An older root is info.
  world.env.unset("LD_LIBRARY_PATH");
  world.library("old/lib/libnccl.so.2.18.1");
  world.tree.symlink("old/lib/libnccl.so.2", "libnccl.so.2.18.1");
  world.env.set("NCCL_HOME", world.tree.path("old"));
  const auto older = evaluate_variable_roots(world.discover({"nccl"}), world.env);
  REQUIRE(older.size() == 1);
  CHECK(older.front().severity == Severity::info);
  CHECK(older.front().repair == cudadiag::findings::Repair::none);
}

TEST_CASE("install rules: TRITON_LIBCUDA_PATH's libcuda against the driver the loader binds") {
  SyntheticWorld world;
  world.library("driver/libcuda.so.575.57.08");
  world.tree.symlink("driver/libcuda.so.1", "libcuda.so.575.57.08");
  world.ld_cache({SyntheticWorld::cache_entry("libcuda.so.1", world.tree.path("driver/libcuda.so.1"))});
  world.library("compat/libcuda.so.580.95.05");
  world.tree.symlink("compat/libcuda.so.1", "libcuda.so.580.95.05");
  world.env.set("TRITON_LIBCUDA_PATH", world.tree.path("compat"));
  const auto found = evaluate_variable_roots(world.discover({"cuda"}), world.env);
  REQUIRE(found.size() == 1);
  CHECK(found.front().severity == Severity::warning);
  CHECK(cudadiag::testing::contains(found.front().message, "TRITON_LIBCUDA_PATH"));
  CHECK(cudadiag::testing::contains(found.front().message, "580.95.05"));
  // A stub directory is what the variable is for: not compared.
  world.library("cuda/lib64/stubs/libcuda.so");
  world.env.set("TRITON_LIBCUDA_PATH", world.tree.path("cuda/lib64/stubs"));
  CHECK(evaluate_variable_roots(world.discover({"cuda"}), world.env).empty());
}
