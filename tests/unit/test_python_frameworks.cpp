// The frameworks' files read without Python: Requires-Dist parsing, METADATA headers, the CUDA a
// framework was built for (torch/version.py, TensorFlow's build_info.py, JAX/CuPy names), and the
// pin check with the extras other requirements ask for.
#include "python/distributions.hpp"
#include "python/framework_builds.hpp"
#include "python/framework_requirements.hpp"

#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <string>

using cudadiag::python::Distribution;
using cudadiag::python::framework_builds;
using cudadiag::python::installed_distributions;
using cudadiag::python::parse_requirement;
using cudadiag::python::python_string_assignment;
using cudadiag::python::unmet_framework_requirements;

TEST_CASE("frameworks: Requires-Dist in its spellings") {
  const auto pinned = parse_requirement("cuda-toolkit[cublas, cudart]==13.0.2; platform_system == \"Linux\"");
  REQUIRE(pinned.has_value());
  CHECK(pinned->name == "cuda-toolkit");
  CHECK(pinned->extras == std::vector<std::string>{"cublas", "cudart"});
  CHECK(pinned->specifier == "==13.0.2");
  CHECK(pinned->marker == "platform_system == \"Linux\"");
  const auto old_style = parse_requirement("nvidia-nccl-cu12 (>=2.20)");
  REQUIRE(old_style.has_value());
  CHECK(old_style->specifier == ">=2.20");
  CHECK_FALSE(parse_requirement("pkg @ https://example.invalid/pkg.whl").has_value());
  CHECK_FALSE(parse_requirement("; extra == 'x'").has_value());
}

TEST_CASE("frameworks: the CUDA a framework was built for, from its files") {
  CHECK(python_string_assignment("cuda: Optional[str] = '13.0'\n", "cuda") == "13.0");
  CHECK(python_string_assignment("cuda = None\n", "cuda") == std::nullopt);
  CHECK(python_string_assignment("xcuda = '1'\ncuda_version = '2'\n", "cuda") == std::nullopt);
  CHECK(python_string_assignment("build_info = {'cuda_version': '12.5.1', 'cudnn_version': '9'}\n", "cuda_version") ==
        "12.5.1");

  cudadiag::testing::TempTree tree;
  tree.write("site/torch/version.py", "__version__ = '2.11.0+cu130'\ncuda: Optional[str] = '13.0'\n");
  tree.write("site/tensorflow/python/platform/build_info.py", "build_info = {'cuda_version': '12.5.1'}\n");
  const std::vector<Distribution> installed = {{"torch", "torch", "2.11.0", "", {}},
                                               {"tensorflow", "tensorflow", "2.20.0", "", {}},
                                               {"jax-cuda13-plugin", "jax-cuda13-plugin", "0.11.2", "", {}},
                                               {"cupy-cuda12x", "cupy-cuda12x", "14.2.0", "", {}},
                                               {"numpy", "numpy", "2.3.0", "", {}}};
  const auto builds = framework_builds({tree.path("site")}, installed);
  REQUIRE(builds.size() == 4);
  CHECK(builds[0].cuda == "13.0");
  CHECK(builds[0].source == tree.path("site/torch/version.py"));
  CHECK(builds[1].cuda == "12.5.1");
  CHECK(builds[2].cuda == "13");
  CHECK(builds[3].cuda == "12");
}

TEST_CASE("frameworks: pins are checked with the extras other requirements ask for, in site order") {
  cudadiag::testing::TempTree tree;
  tree.write("first/torch-2.11.0.dist-info/METADATA",
             "Metadata-Version: 2.4\nName: torch\nVersion: 2.11.0\n"
             "Requires-Dist: cuda-toolkit[cublas]==13.0.2; platform_system == \"Linux\"\n"
             "Requires-Dist: nvidia-cudnn-cu13==9.19.0.56; platform_system == \"Linux\"\n"
             "Requires-Dist: nvidia-nvshmem-cu13==3.4.5; platform_system == \"Windows\"\n"
             "Requires-Dist: numpy>=2\n\nA description: with a colon\nRequires-Dist: not-a-header\n");
  tree.write("first/cuda_toolkit-13.0.2.dist-info/METADATA",
             "Name: cuda-toolkit\nVersion: 13.0.2\n"
             "Requires-Dist: nvidia-cublas==13.1.0.3.*; extra == 'cublas'\n"
             "Requires-Dist: nvidia-cufft==12.0.0.61.*; extra == 'cufft'\n");
  tree.write("first/nvidia_cudnn_cu13-9.19.0.56.dist-info/METADATA", "Name: nvidia-cudnn-cu13\nVersion: 9.19.0.56\n");
  // A later site directory's copy is hidden by the first one's.
  tree.write("second/nvidia_cudnn_cu13-9.14.0.64.dist-info/METADATA", "Name: nvidia-cudnn-cu13\nVersion: 9.14.0.64\n");
  const auto installed = installed_distributions({tree.path("first"), tree.path("second")});
  REQUIRE(installed.size() == 3);
  const cudadiag::python::MarkerEnvironment linux = {{"python_version", "3.12"}, {"sys_platform", "linux"},
                                                     {"platform_system", "Linux"}};
  const auto unmet = unmet_framework_requirements(installed, linux);
  REQUIRE(unmet.size() == 1); // cublas through torch's extra; not cufft, nvshmem (Windows), numpy (not CUDA)
  CHECK(unmet[0].framework == "cuda-toolkit");
  CHECK(unmet[0].dependency == "nvidia-cublas");
  CHECK(unmet[0].through_extra == std::optional<std::string>("cublas"));
  CHECK_FALSE(unmet[0].installed.has_value());
}
