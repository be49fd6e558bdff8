// The catalog's invariants: the components cudadiag promises exist, names are unique per kind,
// SONAMEs are declared newest major first and wheel dirs list CUDA 13 before CUDA 12.
#include "probes/catalog.hpp"

#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>

using cudadiag::probes::catalog;
using cudadiag::probes::ComponentKind;
using cudadiag::probes::find_component;

namespace {

// The trailing number of "libfoo.so.13" (13), or -1 when there is none.
int soname_major(std::string_view soname) {
  const auto dot = soname.rfind('.');
  const auto tail = soname.substr(dot + 1);
  if (tail.empty() || tail.find_first_not_of("0123456789") != std::string_view::npos) {
    return -1;
  }
  return std::stoi(std::string(tail));
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
  for (const auto& spec : catalog()) {
    ++per_kind[spec.kind];
  }
  CHECK(catalog().size() == 101);
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
      int previous = 1 << 20;
      for (const auto soname : spec.file_names) {
        const int major = soname_major(soname);
        if (major >= 0) {
          CHECK(major < previous);
          previous = major;
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
