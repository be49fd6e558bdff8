// The catalog's invariants: the components cudadiag promises exist, names are unique per kind,
// SONAMEs are declared newest major first and wheel dirs list CUDA 13 before CUDA 12.
#include "probes/catalog.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

using cudadiag::probes::catalog;
using cudadiag::probes::ComponentKind;
using cudadiag::probes::find_component;

namespace {

// The numbers after ".so." of "libfoo.so.11.2" ({11, 2}); empty when there are none or one is not a
// number ("libnvvm.so").
std::vector<int> soname_numbers(std::string_view soname) {
  const auto at = soname.find(".so.");
  if (at == std::string_view::npos) {
    return {};
  }
  std::vector<int> numbers;
  auto tail = soname.substr(at + 4);
  while (!tail.empty()) {
    const auto dot = std::min(tail.find('.'), tail.size());
    const auto part = tail.substr(0, dot);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string_view::npos) {
      return {};
    }
    numbers.push_back(std::stoi(std::string(part)));
    tail = tail.substr(std::min(dot + 1, tail.size()));
  }
  return numbers;
}

} // namespace

TEST_CASE("catalog: every component cudadiag promises is present with the right kind") {
  for (const char* name :
       {"cuda", "nvml", "cudart", "nvrtc", "nvJitLink", "nvvm", "nvfatbin", "cupti", "cublas", "cublasLt",
        "cufft", "curand", "cusolver", "cusparse", "nccl", "cudnn"}) {
    CAPTURE(name);
    CHECK(find_component(name, ComponentKind::dynamic_lib) != nullptr);
  }
  for (const char* name : {"cccl", "cudart", "nvrtc"}) {
    CAPTURE(name);
    CHECK(find_component(name, ComponentKind::headers) != nullptr);
  }
  for (const char* name : {"nvcc", "ptxas"}) {
    CAPTURE(name);
    CHECK(find_component(name, ComponentKind::binary) != nullptr);
  }
  CHECK(find_component("no-such-thing") == nullptr);
  CHECK(find_component("cudart")->kind == ComponentKind::dynamic_lib); // libraries before headers
  CHECK(find_component("cccl")->file_names.front() == "cuda/std/version");
}

TEST_CASE("catalog: the 101 names cuda-pathfinder 1.9.1 knows on Linux, by kind") {
  std::map<ComponentKind, int> per_kind;
  std::size_t known = 0;
  for (const auto& spec : catalog()) {
    if (spec.cuda_python) {
      ++per_kind[spec.kind];
      ++known;
    }
  }
  CHECK(known == 101);
  CHECK(per_kind[ComponentKind::dynamic_lib] == 50);
  CHECK(per_kind[ComponentKind::headers] == 31);
  CHECK(per_kind[ComponentKind::binary] == 16);
  CHECK(per_kind[ComponentKind::static_lib] == 1);
  CHECK(per_kind[ComponentKind::bitcode_lib] == 3);
  // Details of 1.9.1's descriptors that are easy to get wrong.
  CHECK(find_component("cudss")->file_names ==
        std::vector<std::string_view>{"libcudss.so.1", "libcudss.so.0"});
  CHECK(find_component("nvvm")->file_names.back() == "libnvvm.so");
  CHECK(find_component("cublasmp")->wheel_dirs.front() == "nvidia/cublasmp/cu13/lib");
  CHECK(find_component("custatevec")->wheel_dirs.front() == "cuquantum/lib");
  CHECK(find_component("cute", ComponentKind::headers)->wheel_dirs.front() ==
        "cutlass_library/source/include");
  CHECK(find_component("nvshmem", ComponentKind::headers)->system_include_dirs.front() ==
        "/usr/include/nvshmem_*");
  CHECK(find_component("device")->file_names.front() == "libdevice.10.bc");
  CHECK(find_component("cudadevrt")->conda_dirs == std::vector<std::string_view>{"lib"});
  CHECK(find_component("nsys")->wheel_dirs.front() == "nvidia/nsight_systems/bin");
  CHECK(find_component("nvcudla")->packaging == cudadiag::probes::Packaging::driver);
  CHECK(find_component("cudnn")->optional_dependencies == std::vector<std::string_view>{"nvrtc"});
}

TEST_CASE("catalog: dependencies name catalog libraries") {
  for (const auto& spec : catalog()) {
    for (const auto& list : {spec.dependencies, spec.optional_dependencies}) {
      for (const auto dependency : list) {
        CAPTURE(std::string(spec.name) + " -> " + std::string(dependency));
        CHECK(find_component(dependency, ComponentKind::dynamic_lib) != nullptr);
      }
    }
  }
}

TEST_CASE("catalog: a bare name prefers the library, then the binary, then the header set, and KIND/NAME "
          "picks one") {
  CHECK(find_component("nvcc")->kind == ComponentKind::binary);
  CHECK(find_component("nvjitlink")->kind == ComponentKind::headers);
  CHECK(find_component("cudadevrt")->kind == ComponentKind::static_lib);
  using cudadiag::probes::components_named;
  CHECK(components_named("cudart").size() == 2);
  REQUIRE(components_named("headers/cudart").size() == 1);
  CHECK(components_named("headers/cudart").front()->kind == ComponentKind::headers);
  CHECK(components_named("binary/nvcc").front()->kind == ComponentKind::binary);
  CHECK(components_named("static/cudadevrt").size() == 1);
  CHECK(components_named("bitcode/device").size() == 1);
  CHECK(components_named("bitcode_lib/device").size() == 1);
  CHECK(components_named("lib/cccl").empty());
  CHECK(components_named("nonsense/cudart").empty());
  CHECK(components_named("").empty());
}

TEST_CASE("catalog: an unknown name has a closest known one, or none") {
  using cudadiag::probes::closest_name;
  CHECK(closest_name("nvjitlnk") == std::optional<std::string_view>("nvJitLink"));
  CHECK(closest_name("NVJITLINK") == std::optional<std::string_view>("nvJitLink"));
  CHECK(closest_name("cudrt") == std::optional<std::string_view>("cudart"));
  CHECK(closest_name("cusparselt") == std::optional<std::string_view>("cusparseLt"));
  CHECK(closest_name("headers/cudrt") == std::optional<std::string_view>("cudart"));
  CHECK_FALSE(closest_name("no-such-library").has_value());
  CHECK_FALSE(closest_name("").has_value());
  CHECK_FALSE(closest_name(std::string(10000, 'x')).has_value());
}

TEST_CASE("catalog: names are unique per kind, SONAMEs newest first, CUDA 13 wheel dirs first") {
  std::set<std::pair<std::string, ComponentKind>> seen;
  for (const auto& spec : catalog()) {
    CAPTURE(std::string(spec.name));
    CHECK(seen.insert({std::string(spec.name), spec.kind}).second);
    CHECK_FALSE(spec.file_names.empty());
    CHECK_FALSE(spec.description.empty());
    CHECK(spec.pathfinder_toolkit_dirs <= spec.toolkit_dirs.size());
    if (spec.kind == ComponentKind::dynamic_lib) {
      std::vector<int> previous = {1 << 20};
      for (const auto soname : spec.file_names) {
        CAPTURE(std::string(soname));
        const auto numbers = soname_numbers(soname);
        if (!numbers.empty()) {
          CHECK(numbers < previous);
          previous = numbers;
        }
      }
    }
    if (spec.wheel_dirs.size() >= 2 && spec.packaging == cudadiag::probes::Packaging::toolkit) {
      CHECK(spec.wheel_dirs.front().rfind("nvidia/cu13/", 0) == 0);
    }
    if (spec.packaging == cudadiag::probes::Packaging::driver) {
      CHECK(spec.wheel_dirs.empty()); // cuda-pathfinder finds driver libraries only through the loader
    }
  }
}

TEST_CASE("catalog: older SONAMEs and the libraries beyond cuda-pathfinder are the loader's only") {
  using cudadiag::probes::cuda_python_declares;
  const auto* cudart = find_component("cudart");
  REQUIRE(cudart != nullptr);
  // The older SONAMEs follow the declared ones, so the loader asks for them last.
  CHECK(cudart->file_names == std::vector<std::string_view>{"libcudart.so.13", "libcudart.so.12",
                                                            "libcudart.so.11.0", "libcudart.so.10.2"});
  CHECK(cuda_python_declares(*cudart, "libcudart.so.12"));
  CHECK_FALSE(cuda_python_declares(*cudart, "libcudart.so.11.0"));
  CHECK_FALSE(cuda_python_declares(*cudart, "libcudart.so"));
  CHECK_FALSE(cuda_python_declares(*find_component("nvrtc"), "libnvrtc.so.11.2"));
  CHECK_FALSE(cuda_python_declares(*find_component("cudnn"), "libcudnn.so.8"));
  CHECK(cuda_python_declares(*find_component("cudnn"), "libcudnn.so.9"));
  CHECK_FALSE(cuda_python_declares(*find_component("cutensor"), "libcutensor.so.1"));
  // CUDA 12's curand and cusolver kept CUDA 11's SONAMEs: declared, not older.
  CHECK(cuda_python_declares(*find_component("curand"), "libcurand.so.10"));
  CHECK(cuda_python_declares(*find_component("cusolver"), "libcusolver.so.11"));
  // The CUDA 11 wheels' distributions give the older files their versions.
  const auto& dists = cudart->wheel_distributions;
  CHECK(std::find(dists.begin(), dists.end(), "nvidia-cuda-runtime-cu11") != dists.end());

  std::set<std::string_view> beyond;
  for (const auto& spec : catalog()) {
    CAPTURE(std::string(spec.name));
    for (const auto older : spec.older_sonames) {
      CHECK(spec.kind == ComponentKind::dynamic_lib);
      CHECK(std::find(spec.file_names.begin(), spec.file_names.end(), older) != spec.file_names.end());
    }
    if (!spec.cuda_python) {
      beyond.insert(spec.name);
      CHECK(spec.kind == ComponentKind::dynamic_lib);
      CHECK(spec.dependencies.empty()); // cuda-pathfinder's table: it has no row for them
      for (const auto name : spec.file_names) {
        CHECK_FALSE(cuda_python_declares(spec, name));
      }
    }
  }
  CHECK(beyond == std::set<std::string_view>{
                      "cudnn_graph", "cudnn_engines_precompiled", "cudnn_engines_runtime_compiled",
                      "cudnn_engines_tensor_ir", "cudnn_heuristic", "cudnn_ops", "cudnn_cnn", "cudnn_adv",
                      "cudnn_ops_infer", "cudnn_ops_train", "cudnn_cnn_infer", "cudnn_cnn_train",
                      "cudnn_adv_infer", "cudnn_adv_train", "nvToolsExt"});
  CHECK(find_component("cudnn_ops_infer")->file_names ==
        std::vector<std::string_view>{"libcudnn_ops_infer.so.8"});
}
