#include "findings/framework_rules.hpp"

#include "versions/version_sources.hpp"

#include <algorithm>
#include <array>
#include <string>

namespace cudadiag::findings {
namespace {

// The first toolkit release whose ptxas knows each architecture (its PTX ISA: 6.3 = 10.0, 7.0 =
// 11.0, 7.1 = 11.1, 7.4 = 11.4, 7.8 = 11.8, 8.6/8.7 = 12.8, 8.8 = 12.9, 9.0 = 13.0).
struct ArchRow {
  int arch;
  std::pair<int, int> first_release;
};
// clang-format off
constexpr std::array<ArchRow, 16> k_first_ptxas = {{
    {75,  {10, 0}},  // Turing
    {80,  {11, 0}},  // A100
    {86,  {11, 1}},  // GA10x
    {87,  {11, 4}},  // Orin
    {88,  {13, 0}},
    {89,  {11, 8}},  // Ada
    {90,  {11, 8}},  // Hopper
    {100, {12, 8}},  // B200
    {101, {12, 8}},  // Thor before CUDA 13 (sm_110 from 13.0)
    {103, {12, 9}},  // B300
    {110, {13, 0}},  // Thor
    {120, {12, 8}},  // RTX 50, RTX PRO 6000
    {121, {12, 9}},  // GB10 (DGX Spark)
    {70,  {9, 0}},   // Volta
    {72,  {10, 0}},  // Xavier
    {61,  {8, 0}},   // Pascal
}};
// clang-format on

std::string text(std::pair<int, int> release) {
  return std::to_string(release.first) + "." + std::to_string(release.second);
}

// The Triton entry of `discovery.frameworks` that compiles for `arch`: ptxas-blackwell for 10.0 and
// newer when Triton has one (3.4 and later), else ptxas.
const python::FrameworkBuild* triton_ptxas_for(const discovery::DiscoveryResult& discovery, int arch) {
  const python::FrameworkBuild* plain = nullptr;
  const python::FrameworkBuild* blackwell = nullptr;
  for (const auto& build : discovery.frameworks) {
    if (build.framework == "triton" && build.tool == "ptxas") {
      plain = &build;
    } else if (build.framework == "triton" && build.tool == "ptxas-blackwell") {
      blackwell = &build;
    }
  }
  return arch >= 100 && blackwell != nullptr ? blackwell : plain;
}

// "GPU 0 (NVIDIA H200), compute capability 9.0".
std::string describe_gpu(const verify::DriverDevice& gpu) {
  return "GPU " + std::to_string(gpu.ordinal) + (gpu.name ? " (" + *gpu.name + ")" : std::string()) +
         ", compute capability " + *gpu.compute_capability;
}

std::string code_names(const std::vector<elf::GpuCode>& codes) {
  std::string out;
  for (const auto& code : codes) {
    out += (out.empty() ? "" : " ") + code.name();
  }
  return out;
}

// A framework whose kernels include nothing this GPU runs: no SASS of its major at its minor or
// older, no PTX the driver could compile for it.
std::optional<Finding> framework_without_code_for(const python::FrameworkBuild& build,
                                                  const verify::DriverDevice& gpu, std::pair<int, int> cc) {
  if (!build.gpu_code || build.gpu_code->empty()) {
    return std::nullopt;
  }
  if (std::any_of(build.gpu_code->begin(), build.gpu_code->end(),
                  [cc](const elf::GpuCode& code) { return code.runs_on(cc.first, cc.second); })) {
    return std::nullopt;
  }
  const std::string sm = "sm_" + std::to_string(cc.first * 10 + cc.second);
  return make_finding(
      "framework.arch_unsupported",
      build.framework + " " + build.version + " has no GPU code for " + describe_gpu(gpu) + ": " +
          build.gpu_code_source + " carries " + code_names(*build.gpu_code) + ", and none of it runs on " +
          sm + " (SASS runs only on its own major, PTX only on its architecture or newer): every " +
          build.framework +
          " CUDA kernel fails with \"no kernel image is available for execution on the device\"",
      {},
      {{"framework", build.framework},
       {"framework_version", build.version},
       {"framework_cuda", build.cuda},
       {"gpu_code", code_names(*build.gpu_code)},
       {"source", build.gpu_code_source},
       {"device", gpu.ordinal},
       {"compute_capability", *gpu.compute_capability}},
      Severity::error);
}

// Triton's ptxas for this GPU, when it comes from a CUDA release older than the architecture.
std::optional<Finding> triton_without_arch(const discovery::DiscoveryResult& discovery,
                                           const verify::DriverDevice& gpu, std::pair<int, int> cc) {
  const int arch = cc.first * 10 + cc.second;
  const auto needed = first_ptxas_for_arch(arch);
  const auto* ptxas = triton_ptxas_for(discovery, arch);
  if (!needed || ptxas == nullptr) {
    return std::nullopt;
  }
  const auto release = versions::major_minor(ptxas->cuda);
  if (!release || *release >= *needed) {
    return std::nullopt;
  }
  const std::string sm = "sm_" + std::to_string(arch);
  return make_finding(
      "framework.arch_unsupported",
      "triton " + ptxas->version + " compiles for " + describe_gpu(gpu) + ", with " + ptxas->tool +
          " from CUDA " + ptxas->cuda + " (" + ptxas->source + "), which does not know " + sm + " (CUDA " +
          text(*needed) +
          " added it): every Triton kernel (torch.compile, vLLM) fails with \"ptxas fatal: Value '" + sm +
          "a' is not defined for option 'gpu-name'\"",
      {},
      {{"framework", ptxas->framework},
       {"framework_version", ptxas->version},
       {"tool", ptxas->tool},
       {"tool_cuda", ptxas->cuda},
       {"source", ptxas->source},
       {"device", gpu.ordinal},
       {"compute_capability", *gpu.compute_capability},
       {"first_cuda_for_arch", text(*needed)},
       {"override_variable",
        ptxas->tool == "ptxas-blackwell" ? "TRITON_PTXAS_BLACKWELL_PATH" : "TRITON_PTXAS_PATH"}});
}

} // namespace

std::optional<std::pair<int, int>> first_ptxas_for_arch(int arch) {
  for (const auto& row : k_first_ptxas) {
    if (row.arch == arch) {
      return row.first_release;
    }
  }
  return std::nullopt;
}

std::vector<Finding> evaluate_frameworks(const discovery::DiscoveryResult& discovery,
                                         const verify::Verification& verification) {
  std::vector<Finding> out;
  for (const auto& device : verification.devices) {
    if (!device.driver || !device.driver->compute_capability) {
      continue;
    }
    const auto cc = versions::major_minor(*device.driver->compute_capability);
    if (!cc || cc->first < 1 || cc->first > 99 || cc->second < 0 || cc->second > 9) {
      continue;
    }
    for (const auto& build : discovery.frameworks) {
      if (auto finding = framework_without_code_for(build, *device.driver, *cc)) {
        out.push_back(std::move(*finding));
      }
    }
    if (auto finding = triton_without_arch(discovery, *device.driver, *cc)) {
      out.push_back(std::move(*finding));
    }
  }
  return out;
}

} // namespace cudadiag::findings
