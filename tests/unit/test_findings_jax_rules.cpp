// framework.version_rule: the checks JAX's CUDA plugin makes at initialization, made from the
// versions of the wheels JAX would load and the GPUs verification found; torch's cuDNN check
// (framework_needs.hpp) and the severity it gives an unmet pin.
#include "checks.hpp"
#include "findings/framework_needs.hpp"
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

TEST_CASE("torch's cuDNN rule: same major, a minor at least the compile-time one, the patch ignored") {
  const cudadiag::Environment plain;
  const auto newer = cudadiag::findings::torch_cudnn_check("2.7.1", "9.5.1.17", "9.10.2.21", plain);
  REQUIRE(newer.has_value());
  CHECK(newer->compatible);
  const auto patch = cudadiag::findings::torch_cudnn_check("2.7.1", "9.5.1.17", "9.5.0.50", plain);
  REQUIRE(patch.has_value());
  CHECK(patch->compatible);
  const auto older = cudadiag::findings::torch_cudnn_check("2.9.1", "9.13.0.50", "9.10.2.21", plain);
  REQUIRE(older.has_value());
  CHECK_FALSE(older->compatible);
  // pytorch/pytorch#169092's words, without the LD_LIBRARY_PATH sentence when the variable is unset.
  CHECK(older->words ==
        "cuDNN version incompatibility: PyTorch was compiled  against (9, 13, 0) but found runtime "
        "version (9, 10, 2). PyTorch already comes bundled with cuDNN. One option to resolving this "
        "error is to ensure PyTorch can find the bundled cuDNN. ");
  const auto major = cudadiag::findings::torch_cudnn_check("2.7.1", "9.5.1.17", "8.9.7.29", plain);
  REQUIRE(major.has_value());
  CHECK_FALSE(major->compatible);
  cudadiag::Environment with_path;
  with_path.set("LD_LIBRARY_PATH", "/opt/cudnn-9.1/lib");
  CHECK(cudadiag::findings::torch_cudnn_check("2.9.1", "9.13.0.50", "9.1.0.70", with_path)
            ->words.ends_with("Looks like your LD_LIBRARY_PATH contains incompatible version of cudnn. "
                              "Please either remove it "
                              "from the path or install cudnn (9, 13, 0)"));
  with_path.set("LD_LIBRARY_PATH", "/opt/lib");
  CHECK(cudadiag::findings::torch_cudnn_check("2.9.1", "9.13.0.50", "9.1.0.70", with_path)
            ->words.ends_with("one possibility is that there is a conflicting cuDNN in LD_LIBRARY_PATH."));
  CHECK(cudadiag::findings::torch_cudnn_check("1.12.1", "8.5.0.96", "8.3.2.44", plain)->words ==
        "cuDNN version incompatibility: PyTorch was compiled against (8, 5, 0) but linked against (8, 3, 2)");
  with_path.set("PYTORCH_SKIP_CUDNN_COMPATIBILITY_CHECK", "1");
  CHECK(cudadiag::findings::torch_cudnn_check("2.9.1", "9.13.0.50", "9.1.0.70", with_path)->skipped);
  CHECK_FALSE(cudadiag::findings::torch_cudnn_check("2.9.1", "9.13.0.50", "unknown", plain).has_value());
}

TEST_CASE("a pin is not a run-time check: torch's unmet cuDNN pin takes the severity of torch's own rule") {
  cudadiag::python::FrameworkRequirement pin;
  pin.framework = "torch";
  pin.framework_version = "2.7.1";
  pin.dependency = "nvidia-cudnn-cu12";
  pin.specifier = "==9.5.1.17";
  pin.installed = "9.10.2.21";
  const cudadiag::Environment plain;
  const auto tolerated = cudadiag::findings::judge_unmet_pin(pin, plain);
  REQUIRE(tolerated.has_value());
  CHECK(tolerated->severity == Severity::info);
  pin.installed = "9.1.0.70";
  const auto refused = cudadiag::findings::judge_unmet_pin(pin, plain);
  REQUIRE(refused.has_value());
  CHECK(refused->severity == Severity::error);
  CHECK(refused->why.find("compiled  against (9, 5, 1) but found runtime version (9, 1, 0)") !=
        std::string::npos);
  // No run-time rule: the pin's own severity stands (another framework, another library, no release).
  pin.installed = "9.10.2.21";
  pin.dependency = "nvidia-cublas-cu12";
  CHECK_FALSE(cudadiag::findings::judge_unmet_pin(pin, plain).has_value());
  pin.dependency = "nvidia-cudnn-cu12";
  pin.framework = "tensorflow";
  CHECK_FALSE(cudadiag::findings::judge_unmet_pin(pin, plain).has_value());
  pin.framework = "torch";
  pin.installed.reset();
  CHECK_FALSE(cudadiag::findings::judge_unmet_pin(pin, plain).has_value());
}

TEST_CASE("frameworks in one environment: pins no release satisfies are one conflict") {
  using cudadiag::findings::specifiers_overlap;
  CHECK_FALSE(specifiers_overlap("==9.5.1.17", "<10.0,>=9.10.2.21"));
  CHECK(specifiers_overlap("==9.10.2.21", "<10.0,>=9.10.2.21"));
  CHECK(specifiers_overlap(">9.1", "<9.2"));        // 9.1.1
  CHECK_FALSE(specifiers_overlap(">=9.5", "<9.5")); // touching, not meeting
  CHECK(specifiers_overlap("==9.5.*", ">=9.5.1"));  // 9.5.1
  CHECK(specifiers_overlap("", "==9.5.1.17"));
  std::vector<cudadiag::python::FrameworkRequirement> pins(3);
  pins[0].framework = "torch";
  pins[0].framework_version = "2.7.1";
  pins[0].dependency = "nvidia-cudnn-cu12";
  pins[0].specifier = "==9.5.1.17";
  pins[1].framework = "jax-cuda12-plugin";
  pins[1].framework_version = "0.11.2";
  pins[1].dependency = "nvidia_cudnn_cu12"; // compared by PEP 503 name
  pins[1].specifier = "<10.0,>=9.10.2.21";
  pins[2].framework = "torch";
  pins[2].framework_version = "2.7.1";
  pins[2].dependency = "nvidia-nccl-cu12";
  pins[2].specifier = "==2.26.2";
  const auto conflicts = cudadiag::findings::pin_conflicts(pins);
  REQUIRE(conflicts.size() == 1);
  CHECK(conflicts[0].first == &pins[0]);
  CHECK(conflicts[0].second == &pins[1]);
  pins[0].specifier = "==9.10.2.21";
  CHECK(cudadiag::findings::pin_conflicts(pins).empty());
  CHECK(cudadiag::findings::releases_whose_pin_fits("torch", "nvidia-cudnn-cu12", "<10.0,>=9.10.2.21") ==
        std::vector<std::string>{"torch 2.8.0 (nvidia-cudnn-cu12==9.10.2.21)"});
  CHECK(cudadiag::findings::releases_whose_pin_fits("torch", "nvidia-cudnn-cu12", "<9").empty());
}
