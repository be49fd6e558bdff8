// The catalog's invariants: the components cudadiag promises exist, names are unique per kind,
// SONAMEs are declared newest major first and wheel dirs list CUDA 13 before CUDA 12.
#include "probes/catalog.hpp"

#include <doctest/doctest.h>

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
  for (const char* name : {"cuda", "nvml", "cudart", "nvrtc", "nvJitLink", "nvvm", "nvfatbin", "cupti", "cublas",
                           "cublasLt", "cufft", "curand", "cusolver", "cusparse", "nccl", "cudnn"}) {
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
