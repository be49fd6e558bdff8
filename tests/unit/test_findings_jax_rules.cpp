// framework.version_rule: the checks JAX's CUDA plugin makes at initialization, made from the
// versions of the wheels JAX would load and the GPUs verification found.
#include "checks.hpp"
#include "findings/jax_rules.hpp"
#include "synthetic_world.hpp"

#include <doctest/doctest.h>

using cudadiag::findings::evaluate_jax_checks;
using cudadiag::findings::Finding;
using cudadiag::findings::Severity;
using cudadiag::testing::SyntheticWorld;

namespace {

// `world` gets a venv with jax-cuda12-pjrt and the cuBLAS and cuDNN wheels of these versions.
void add_jax(SyntheticWorld& world, const std::string& cublas, const std::string& cudnn) {
  const auto site = world.venv("venv");
  world.env.set("VIRTUAL_ENV", world.tree.path("venv")); // activated: its bin first on PATH
  world.env.set("PATH", world.tree.path("venv/bin") + ":" + world.env.get("PATH").value_or(""));
  world.dist_info(site, "jax_cuda12_pjrt", "0.11.2");
  world.library("venv/lib/python3.12/site-packages/nvidia/cublas/lib/libcublas.so.12");
  // cuBLAS's and cuDNN's required dependency (cuda-pathfinder loads it first; without it neither is found).
  world.library("venv/lib/python3.12/site-packages/nvidia/cublas/lib/libcublasLt.so.12");
  world.dist_info(site, "nvidia_cublas_cu12", cublas);
  world.library("venv/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9");
  world.dist_info(site, "nvidia_cudnn_cu12", cudnn);
}

cudadiag::verify::Verification gpus(int count, const std::string& compute_capability) {
  cudadiag::verify::Verification verification;
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    cudadiag::verify::DriverDevice device;
    device.ordinal = ordinal;
    device.compute_capability = compute_capability;
    verification.devices.push_back({device, std::nullopt});
  }
  return verification;
}

std::vector<Finding> rules_for(const SyntheticWorld& world,
                               const cudadiag::verify::Verification& verification) {
  return evaluate_jax_checks(world.discover({"cublas", "cudnn", "cudart", "cusparse"}), verification,
                             world.env);
}

} // namespace

TEST_CASE("jax rules: cuBLAS 12.8 to 13.2 on a compute capability 10.x GPU is a warning, not on 9.0") {
  SyntheticWorld world;
  add_jax(world, "12.8.4.1", "9.10.2.21");
  const auto blackwell = rules_for(world, gpus(1, "10.0"));
  REQUIRE(blackwell.size() == 1);
  CHECK(blackwell[0].id == "framework.version_rule");
  CHECK(blackwell[0].severity == Severity::warning);
  CHECK(blackwell[0].evidence.at("component") == "cublas");
  CHECK(blackwell[0].evidence.at("version") == "12.8.4.1");
  CHECK(rules_for(world, gpus(1, "9.0")).empty());
  SyntheticWorld fixed;
  add_jax(fixed, "13.2.0.9", "9.10.2.21");
  CHECK(rules_for(fixed, gpus(1, "10.0")).empty());
}

TEST_CASE("jax rules: cuDNN before 9.10.1 with cuBLAS 12.9 on several GPUs, cuDNN 9.10.0, and the floors") {
  SyntheticWorld old_cudnn;
  add_jax(old_cudnn, "12.9.1.4", "9.8.0.87");
  const auto many = rules_for(old_cudnn, gpus(2, "9.0"));
  REQUIRE(many.size() == 1);
  CHECK(many[0].severity == Severity::error);
  CHECK(many[0].evidence.at("component") == "cudnn");
  CHECK(rules_for(old_cudnn, gpus(1, "9.0")).empty()); // one GPU: the multi-GPU defect cannot happen
  SyntheticWorld cudnn_9_10_0;
  add_jax(cudnn_9_10_0, "12.9.1.4", "9.10.0.56");
  const auto broken = rules_for(cudnn_9_10_0, gpus(1, "9.0"));
  REQUIRE(broken.size() == 1);
  CHECK(broken[0].message.find("9.10.0") != std::string::npos);
  SyntheticWorld old_cublas;
  add_jax(old_cublas, "12.0.2.224", "9.10.2.21");
  const auto ancient = rules_for(old_cublas, gpus(1, "9.0"));
  REQUIRE(ancient.size() == 1);
  CHECK(ancient[0].severity == Severity::error);
  CHECK(ancient[0].message.find("cuBLAS 12.1 or newer") != std::string::npos);
}

TEST_CASE("jax rules: nothing without JAX's plugin, or with JAX_SKIP_CUDA_CONSTRAINTS_CHECK") {
  SyntheticWorld world;
  add_jax(world, "12.0.2.224", "9.10.0.56");
  world.env.set("JAX_SKIP_CUDA_CONSTRAINTS_CHECK", "1");
  CHECK(rules_for(world, gpus(2, "10.0")).empty());
  SyntheticWorld plain;
  const auto site = plain.venv("venv");
  plain.env.set("VIRTUAL_ENV", plain.tree.path("venv"));
  plain.env.set("PATH", plain.tree.path("venv/bin") + ":" + plain.env.get("PATH").value_or(""));
  plain.library("venv/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9");
  plain.dist_info(site, "nvidia_cudnn_cu12", "9.10.0.56");
  CHECK(rules_for(plain, gpus(1, "9.0")).empty());
}
