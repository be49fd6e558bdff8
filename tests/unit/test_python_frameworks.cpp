// The frameworks' files read without Python: Requires-Dist parsing, METADATA headers, the CUDA a
// framework was built for (torch/version.py, TensorFlow's build_info.py, JAX/CuPy names), and the
// pin check with the extras other requirements ask for.
#include "core/filesystem.hpp"
#include "python/distributions.hpp"
#include "python/framework_builds.hpp"
#include "python/framework_requirements.hpp"
#include "skip.hpp"
#include "temp_tree.hpp"
#include "versions/tool_binary_version.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <string>
#include <sys/stat.h>
#include <vector>

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
  CHECK(python_string_assignment("build_info = {'cuda_version': '12.5.1', 'cudnn_version': '9'}\n",
                                 "cuda_version") == "12.5.1");

  cudadiag::testing::TempTree tree;
  tree.write("site/torch/version.py", "__version__ = '2.11.0+cu130'\ncuda: Optional[str] = '13.0'\n");
  tree.write("site/tensorflow/python/platform/build_info.py", "build_info = {'cuda_version': '12.5.1'}\n");
  const std::vector<Distribution> installed = {{"torch", "torch", "2.11.0", "", {}},
                                               {"tensorflow", "tensorflow", "2.20.0", "", {}},
                                               {"jax-cuda13-plugin", "jax-cuda13-plugin", "0.11.2", "", {}},
                                               {"cupy-cuda12x", "cupy-cuda12x", "14.2.0", "", {}},
                                               {"numpy", "numpy", "2.3.0", "", {}}};
  const auto builds = framework_builds({tree.path("site")}, installed, cudadiag::Environment{});
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
  tree.write("first/nvidia_cudnn_cu13-9.19.0.56.dist-info/METADATA",
             "Name: nvidia-cudnn-cu13\nVersion: 9.19.0.56\n");
  // A later site directory's copy is hidden by the first one's.
  tree.write("second/nvidia_cudnn_cu13-9.14.0.64.dist-info/METADATA",
             "Name: nvidia-cudnn-cu13\nVersion: 9.14.0.64\n");
  const auto installed = installed_distributions({tree.path("first"), tree.path("second")});
  REQUIRE(installed.size() == 3);
  const cudadiag::python::MarkerEnvironment linux = {
      {"python_version", "3.12"}, {"sys_platform", "linux"}, {"platform_system", "Linux"}};
  const auto unmet = unmet_framework_requirements(installed, linux);
  REQUIRE(unmet.size() == 1); // cublas through torch's extra; not cufft, nvshmem (Windows), numpy (not CUDA)
  CHECK(unmet[0].framework == "cuda-toolkit");
  CHECK(unmet[0].dependency == "nvidia-cublas");
  CHECK(unmet[0].through_extra == std::optional<std::string>("cublas"));
  CHECK_FALSE(unmet[0].installed.has_value());
}

namespace {

// A stand-in for a ptxas binary: `before` bytes of filler, the version string, `after` more.
std::string fake_ptxas(std::size_t before, std::string_view release, std::size_t after = 4096) {
  std::string bytes(before, '\x7f');
  bytes += '\0';
  bytes += "Cuda compilation tools, release ";
  bytes += release;
  bytes += '\0';
  bytes += std::string(after, 'x');
  return bytes;
}

} // namespace

TEST_CASE("tool binary version: the release is read from the file, across read boundaries, never guessed") {
  cudadiag::testing::TempTree tree;
  tree.write("ptxas", fake_ptxas(100, "12.8, V12.8.93"));
  const auto small = cudadiag::versions::cuda_tool_release(tree.path("ptxas"));
  REQUIRE(small.has_value());
  CHECK(small.value().release == "12.8");
  CHECK(small.value().version == "12.8.93");
  // The marker, or what follows it, at 1 MiB and straddling the reads: the first of 64 KiB, then
  // reads that double (boundaries at 64, 192, 448, 960 KiB), then 1 MiB reads (1984 KiB on).
  std::vector<std::size_t> offsets{(std::size_t{1} << 20U) - 40, (std::size_t{1} << 20U) - 10,
                                   std::size_t{1} << 20U};
  for (const std::size_t boundary :
       {std::size_t{64} << 10U, std::size_t{192} << 10U, std::size_t{448} << 10U, std::size_t{960} << 10U,
        std::size_t{1984} << 10U, std::size_t{3008} << 10U}) {
    offsets.insert(offsets.end(), {boundary - 40, boundary - 10, boundary});
  }
  for (const std::size_t before : offsets) {
    tree.write("big", fake_ptxas(before, "13.0, V13.0.88"));
    const auto big = cudadiag::versions::cuda_tool_release(tree.path("big"));
    CAPTURE(before);
    REQUIRE(big.has_value());
    CHECK(big.value().version == "13.0.88");
  }
  // The string last in the file, with nothing after it.
  tree.write("last", fake_ptxas(2000, "12.9, V12.9.86", 0));
  CHECK(cudadiag::versions::cuda_tool_release(tree.path("last")).value().version == "12.9.86");
  // A malformed string before a good one is skipped; none at all, or an empty file, is an error.
  tree.write("two", fake_ptxas(10, "x.y, Vz", 10) + fake_ptxas(10, "12.6, V12.6.85"));
  CHECK(cudadiag::versions::cuda_tool_release(tree.path("two")).value().release == "12.6");
  tree.write("none", std::string(5000, 'a'));
  CHECK_FALSE(cudadiag::versions::cuda_tool_release(tree.path("none")).has_value());
  tree.write("empty", "");
  CHECK_FALSE(cudadiag::versions::cuda_tool_release(tree.path("empty")).has_value());
  CHECK_FALSE(cudadiag::versions::cuda_tool_release(tree.path("")).has_value());
  CHECK_FALSE(cudadiag::versions::cuda_tool_release(tree.path("missing")).has_value());
}

TEST_CASE(
    "tool binary version: a real toolkit binary's .rodata gives the same answer as reading the whole file") {
  const std::string bin = "/usr/local/cuda/bin";
  std::size_t compared = 0;
  for (const char* tool : {"ptxas", "nvcc", "nvdisasm", "cuobjdump", "nvlink", "fatbinary"}) {
    const auto path = bin + "/" + tool;
    const auto content = cudadiag::fs::read_file_prefix(path, cudadiag::versions::k_tool_release_read_limit);
    if (!content) {
      continue;
    }
    // The reference: the first well-formed string anywhere in the file, found the plain way.
    std::string expected;
    const std::string marker = "Cuda compilation tools, release ";
    for (auto at = content->find(marker); at != std::string::npos && expected.empty();
         at = content->find(marker, at + 1)) {
      const auto rest = content->substr(at + marker.size(), 48);
      const auto comma = rest.find(", V");
      if (comma != std::string::npos && comma > 0 && std::isdigit(static_cast<unsigned char>(rest[0])) != 0) {
        const auto version_end = rest.find_first_not_of("0123456789.", comma + 3);
        expected = rest.substr(comma + 3, version_end - comma - 3);
      }
    }
    const auto read = cudadiag::versions::cuda_tool_release(path);
    CAPTURE(path);
    REQUIRE_EQ(read.has_value(), !expected.empty());
    if (read) {
      CHECK(read.value().version == expected);
    }
    ++compared;
  }
  if (compared == 0) {
    CUDADIAG_SKIP("no toolkit binaries under " << bin);
  }
}

TEST_CASE("frameworks: Triton is built for the CUDA of the ptxas it runs, bundled or overridden") {
  cudadiag::testing::TempTree tree;
  tree.write("site/triton/backends/nvidia/bin/ptxas", fake_ptxas(64, "12.8, V12.8.93"));
  tree.write("site/triton/backends/nvidia/bin/ptxas-blackwell", fake_ptxas(64, "12.9, V12.9.86"));
  const std::vector<Distribution> installed = {{"triton", "triton", "3.5.0", "", {}}};
  const auto bundled = framework_builds({tree.path("site")}, installed, cudadiag::Environment{});
  REQUIRE(bundled.size() == 2);
  CHECK(bundled[0].framework == "triton");
  CHECK(bundled[0].version == "3.5.0");
  CHECK(bundled[0].cuda == "12.8");
  CHECK(bundled[0].source ==
        tree.path("site/triton/backends/nvidia/bin/ptxas") + " (its version string: V12.8.93)");
  CHECK(bundled[1].cuda == "12.9");

  // TRITON_PTXAS_PATH naming a file replaces the bundled ptxas; one naming nothing does not.
  tree.write("cuda-13.0/bin/ptxas", fake_ptxas(64, "13.0, V13.0.88"));
  cudadiag::Environment env;
  env.set("TRITON_PTXAS_PATH", tree.path("cuda-13.0/bin/ptxas"));
  env.set("TRITON_PTXAS_BLACKWELL_PATH", tree.path("nowhere/ptxas"));
  const auto overridden = framework_builds({tree.path("site")}, installed, env);
  REQUIRE(overridden.size() == 2);
  CHECK(overridden[0].cuda == "13.0");
  CHECK(overridden[0].source ==
        "TRITON_PTXAS_PATH=" + tree.path("cuda-13.0/bin/ptxas") + " (its version string: V13.0.88)");
  CHECK(overridden[1].cuda == "12.9");

  // Triton 2.x's place; a ptxas without a version string is not listed (unknown, not guessed).
  cudadiag::testing::TempTree old;
  old.write("site/triton/third_party/cuda/bin/ptxas", fake_ptxas(64, "12.1, V12.1.105"));
  const auto legacy = framework_builds({old.path("site")}, installed, cudadiag::Environment{});
  REQUIRE(legacy.size() == 1);
  CHECK(legacy[0].cuda == "12.1");
  cudadiag::testing::TempTree stripped;
  stripped.write("site/triton/backends/nvidia/bin/ptxas", std::string(4096, '\x7f'));
  CHECK(framework_builds({stripped.path("site")}, installed, cudadiag::Environment{}).empty());
}

TEST_CASE("tool binary version: the toolkit's real ptxas, 26 MB in, agrees with its nvcc package's version") {
  // The toolkit of this machine and CI: /usr/local/cuda with a dist-info/ of its components
  // (nvidia_cuda_nvcc-13.0.88.dist-info; ptxas ships in cuda_nvcc).
  const std::string ptxas = "/usr/local/cuda/bin/ptxas";
  const auto listing = cudadiag::fs::list_directory("/usr/local/cuda/dist-info");
  std::string expected;
  if (listing) {
    for (const auto& name : listing.value()) {
      if (name.rfind("nvidia_cuda_nvcc-", 0) == 0 && name.size() > 27) {
        expected = name.substr(17, name.size() - 17 - 10); // between the '-' and ".dist-info"
      }
    }
  }
  if (!cudadiag::fs::is_regular_file(ptxas) || expected.empty()) {
    CUDADIAG_SKIP(
        "no CUDA toolkit with bin/ptxas and dist-info/nvidia_cuda_nvcc-*.dist-info at /usr/local/cuda");
  }
  const auto release = cudadiag::versions::cuda_tool_release(ptxas);
  REQUIRE(release.has_value());
  CHECK(release.value().version == expected);
  CHECK(expected.rfind(release.value().release + ".", 0) == 0);
}

namespace {

// A release directory of tests/fixtures/releases, read as the site-packages it is laid out as.
std::vector<cudadiag::python::FrameworkBuild> release_builds(const std::string& release) {
  const std::string site = std::string(CUDADIAG_SOURCE_DIR) + "/tests/fixtures/releases/" + release;
  return framework_builds({site}, installed_distributions({site}), cudadiag::Environment{});
}

std::vector<std::string> code_names(const cudadiag::python::FrameworkBuild& build) {
  std::vector<std::string> out;
  for (const auto& code : build.gpu_code.value_or(std::vector<cudadiag::elf::GpuCode>{})) {
    out.push_back(code.name());
  }
  return out;
}

} // namespace

TEST_CASE("frameworks: the CUDA builds of real releases, read from their own files") {
  const auto torch12 = release_builds("torch-2.8.0");
  REQUIRE(torch12.size() == 1);
  CHECK(torch12[0].framework == "torch");
  CHECK(torch12[0].version == "2.8.0");
  CHECK(torch12[0].cuda == "12.8");
  CHECK(torch12[0].gpu_code_source.empty()); // no torch/lib/libtorch_cuda.so in the fixture
  const auto torch13 = release_builds("torch-2.11.0");
  REQUIRE(torch13.size() == 1);
  CHECK(torch13[0].cuda == "13.0");
  // TensorFlow 2.21 writes build_info as an OrderedDict of pairs.
  const auto tensorflow = release_builds("tensorflow-2.21.0");
  REQUIRE(tensorflow.size() == 1);
  CHECK(tensorflow[0].cuda == "12.5.1");
  CHECK(code_names(tensorflow[0]) ==
        std::vector<std::string>{"sm_60", "sm_70", "sm_80", "sm_89", "compute_90"});
  CHECK(tensorflow[0].gpu_code_source.ends_with("tensorflow/python/platform/build_info.py"));
  for (const auto& [release, major] :
       std::vector<std::pair<std::string, std::string>>{{"jax-cuda12-plugin-0.11.2", "12"},
                                                        {"jax-cuda13-plugin-0.11.2", "13"},
                                                        {"cupy-cuda12x-14.2.0", "12"},
                                                        {"cupy-cuda13x-14.2.0", "13"}}) {
    CAPTURE(release);
    const auto builds = release_builds(release);
    REQUIRE(builds.size() == 1);
    CHECK(builds[0].cuda == major);
    CHECK_FALSE(builds[0].gpu_code.has_value());
  }
  CHECK(release_builds("vllm-0.34.0").empty());  // its CUDA is torch's
  CHECK(release_builds("triton-3.7.0").empty()); // no ptxas in the fixture
}

TEST_CASE("frameworks: list-valued build facts, in a dict or as pairs") {
  using cudadiag::python::python_string_list_assignment;
  CHECK(python_string_list_assignment("build_info = {'cuda_compute_capabilities': ['sm_70', 'compute_80']}\n",
                                      "cuda_compute_capabilities") ==
        std::vector<std::string>{"sm_70", "compute_80"});
  CHECK(python_string_list_assignment("x = OrderedDict([('cuda_compute_capabilities', [\"sm_90a\"])])\n",
                                      "cuda_compute_capabilities") == std::vector<std::string>{"sm_90a"});
  CHECK(python_string_list_assignment("'cuda_compute_capabilities': []\n", "cuda_compute_capabilities") ==
        std::vector<std::string>{});
  CHECK_FALSE(
      python_string_list_assignment("'cuda_compute_capabilities': ['sm_70',\n", "cuda_compute_capabilities"));
  CHECK_FALSE(
      python_string_list_assignment("'cuda_compute_capabilities': None\n", "cuda_compute_capabilities"));
  CHECK_FALSE(
      python_string_list_assignment("'cuda_compute_capabilities': [70]\n", "cuda_compute_capabilities"));
  // A quoted key followed by a comma is a pair only inside "(": a list of keys is not an assignment.
  CHECK_FALSE(python_string_assignment("keys = ['cuda_version', 'x']\n", "cuda_version"));
  CHECK(python_string_assignment("pairs = [('cuda_version', '12.5.1')]\n", "cuda_version") == "12.5.1");
  using cudadiag::python::gpu_code_from_name;
  CHECK(gpu_code_from_name("sm_90a")->name() == "sm_90a");
  CHECK(gpu_code_from_name("compute_100f")->kind == cudadiag::elf::GpuCodeKind::ptx);
  CHECK_FALSE(gpu_code_from_name("sm_"));
  CHECK_FALSE(gpu_code_from_name("sm_9"));
  CHECK_FALSE(gpu_code_from_name("sm_1000"));
  CHECK_FALSE(gpu_code_from_name("gfx90a"));
}

TEST_CASE("frameworks: torch's and JAX's GPU code is read from their libraries only when asked") {
  const std::string fixtures = CUDADIAG_GPU_CODE_FIXTURES;
  if (!cudadiag::fs::is_regular_file(fixtures + "/sm80.so")) {
    CUDADIAG_SKIP("no " << fixtures << "/sm80.so: nvcc was not found when this tree was configured");
    return;
  }
  cudadiag::testing::TempTree tree;
  tree.write("site/torch/version.py", "cuda: Optional[str] = '13.0'\n");
  tree.copy_file(fixtures + "/sm80.so", "site/torch/lib/libtorch_cuda.so");
  tree.copy_file(fixtures + "/mixed.so", "site/jax_plugins/xla_cuda13/xla_cuda_plugin.so");
  const std::vector<Distribution> installed = {{"torch", "torch", "2.11.0", "", {}},
                                               {"jax-cuda13-pjrt", "jax-cuda13-pjrt", "0.11.2", "", {}},
                                               {"jax-cuda13-plugin", "jax-cuda13-plugin", "0.11.2", "", {}}};
  auto builds = framework_builds({tree.path("site")}, installed, cudadiag::Environment{});
  REQUIRE(builds.size() == 3);
  CHECK(builds[0].gpu_code_source == tree.path("site/torch/lib/libtorch_cuda.so"));
  CHECK(builds[1].gpu_code_source == tree.path("site/jax_plugins/xla_cuda13/xla_cuda_plugin.so"));
  CHECK(builds[2].gpu_code_source.empty()); // the plugin distribution's kernels are not in the PJRT library
  for (const auto& build : builds) {
    CHECK_FALSE(build.gpu_code.has_value()); // nothing read during discovery
  }
  cudadiag::python::read_framework_gpu_code(builds);
  CHECK(code_names(builds[0]) == std::vector<std::string>{"sm_80"});
  CHECK(code_names(builds[1]).size() == 6);
  CHECK_FALSE(builds[2].gpu_code.has_value());
  // A library that cannot be read says why and stays unknown.
  builds[0].gpu_code.reset();
  builds[0].gpu_code_source = tree.path("site/torch/lib/missing.so");
  cudadiag::python::read_framework_gpu_code(builds);
  CHECK_FALSE(builds[0].gpu_code.has_value());
  CHECK(builds[0].gpu_code_problem.starts_with("cannot open"));
}

TEST_CASE("frameworks: every CUDA pin of a real release is listed, met or not") {
  cudadiag::testing::TempTree tree;
  tree.copy_file(std::string(CUDADIAG_SOURCE_DIR) +
                     "/tests/fixtures/releases/torch-2.8.0/torch-2.8.0.dist-info/METADATA",
                 "site/torch-2.8.0.dist-info/METADATA");
  tree.write("site/nvidia_cudnn_cu12-9.10.2.21.dist-info/METADATA",
             "Name: nvidia-cudnn-cu12\nVersion: 9.10.2.21\n");
  tree.write("site/nvidia_nccl_cu12-2.26.2.dist-info/METADATA", "Name: nvidia-nccl-cu12\nVersion: 2.26.2\n");
  const auto installed = installed_distributions({tree.path("site")});
  const cudadiag::python::MarkerEnvironment linux = {{"python_version", "3.11"},
                                                     {"sys_platform", "linux"},
                                                     {"platform_system", "Linux"},
                                                     {"platform_machine", "x86_64"}};
  const auto checked = cudadiag::python::checked_framework_requirements(installed, linux);
  // torch 2.8.0 (cu128) pins 14 nvidia-*-cu12 wheels and triton==3.4.0 on Linux x86_64.
  REQUIRE(checked.size() == 15);
  std::size_t met = 0;
  for (const auto& requirement : checked) {
    CAPTURE(requirement.requirement);
    CHECK(requirement.framework == "torch");
    if (requirement.dependency == "nvidia-cudnn-cu12") {
      CHECK(requirement.met);
    } else if (requirement.dependency == "nvidia-nccl-cu12") {
      CHECK_FALSE(requirement.met);
      CHECK(requirement.installed == std::optional<std::string>("2.26.2"));
    } else {
      CHECK_FALSE(requirement.installed.has_value());
    }
    met += requirement.met ? 1U : 0U;
  }
  CHECK(met == 1);
  CHECK(unmet_framework_requirements(installed, linux).size() == 14);
  // On aarch64 the markers do not hold: nothing is judged.
  auto arm = linux;
  arm["platform_machine"] = "aarch64";
  CHECK(cudadiag::python::checked_framework_requirements(installed, arm).empty());
}

TEST_CASE("frameworks: an extra is requested when a requirement names it or when all it adds is installed") {
  cudadiag::testing::TempTree tree;
  const std::string releases = std::string(CUDADIAG_SOURCE_DIR) + "/tests/fixtures/releases/";
  tree.copy_file(releases + "jax-0.11.2/jax-0.11.2.dist-info/METADATA", "site/jax-0.11.2.dist-info/METADATA");
  tree.copy_file(releases + "jax-cuda12-plugin-0.11.2/jax_cuda12_plugin-0.11.2.dist-info/METADATA",
                 "site/jax_cuda12_plugin-0.11.2.dist-info/METADATA");
  tree.write("site/jaxlib-0.11.2.dist-info/METADATA", "Name: jaxlib\nVersion: 0.11.2\n");
  tree.write("site/jax_cuda12_pjrt-0.11.2.dist-info/METADATA", "Name: jax-cuda12-pjrt\nVersion: 0.11.2\n");
  tree.write("site/nvidia_cudnn_cu12-9.8.0.87.dist-info/METADATA",
             "Name: nvidia-cudnn-cu12\nVersion: 9.8.0.87\n");
  const cudadiag::python::MarkerEnvironment linux = {{"python_version", "3.12"},
                                                     {"sys_platform", "linux"},
                                                     {"platform_system", "Linux"},
                                                     {"platform_machine", "x86_64"}};
  // jax[cuda12-local]: the plugin without its with-cuda wheels (one cuDNN wheel another package pulled).
  auto pins =
      cudadiag::python::judge_framework_requirements(installed_distributions({tree.path("site")}), linux);
  auto requested = cudadiag::python::requested_extras(installed_distributions({tree.path("site")}), linux);
  CHECK(requested["jax"].count("cuda12") == 1);     // all it adds (the plugin) is installed
  CHECK(requested["jax"].count("tpu") == 0);        // libtpu is not
  CHECK(requested["jax"].count("ci") == 0);         // adds nothing beyond jax's own jaxlib
  CHECK(requested.count("jax-cuda12-plugin") == 0); // cuda12 and cuda12-local add the same: no ask
  std::size_t with_cuda = 0;
  for (const auto& skipped : pins.not_judged) {
    if (skipped.framework == "jax-cuda12-plugin") {
      ++with_cuda;
      CHECK(skipped.reason ==
            "its extra [with-cuda] is not requested: nothing installed asks for "
            "jax-cuda12-plugin[with-cuda], and 1 of the 12 distributions it adds are installed");
    }
  }
  CHECK(with_cuda == 12);
  for (const auto& checked : pins.checked) {
    CHECK(checked.dependency != "nvidia-cudnn-cu12");
  }
  // jax[cuda12]: every with-cuda wheel installed: the extra is requested and its cuDNN floor judged.
  for (const auto* name :
       {"nvidia-cublas-cu12", "nvidia-cuda-cupti-cu12", "nvidia-cuda-nvcc-cu12", "nvidia-cuda-runtime-cu12",
        "nvidia-cufft-cu12", "nvidia-cusolver-cu12", "nvidia-cusparse-cu12", "nvidia-nccl-cu12",
        "nvidia-nvjitlink-cu12", "nvidia-cuda-nvrtc-cu12", "nvidia-nvshmem-cu12"}) {
    std::string dist(name);
    std::replace(dist.begin(), dist.end(), '-', '_');
    tree.write("site/" + dist + "-99.0.dist-info/METADATA",
               std::string("Name: ") + name + "\nVersion: 99.0\n");
  }
  pins = cudadiag::python::judge_framework_requirements(installed_distributions({tree.path("site")}), linux);
  const auto cudnn = std::find_if(pins.checked.begin(), pins.checked.end(),
                                  [](const auto& pin) { return pin.dependency == "nvidia-cudnn-cu12"; });
  REQUIRE(cudnn != pins.checked.end());
  CHECK(cudnn->framework == "jax-cuda12-plugin");
  CHECK(cudnn->through_extra == std::optional<std::string>("with-cuda"));
  CHECK_FALSE(cudnn->met);
  // What stays unjudged is jax's own other extras (cuda13, tpu, ...), none of the plugin's pins.
  CHECK(std::none_of(pins.not_judged.begin(), pins.not_judged.end(),
                     [](const auto& skipped) { return skipped.framework == "jax-cuda12-plugin"; }));
  CHECK(std::any_of(pins.not_judged.begin(), pins.not_judged.end(), [](const auto& skipped) {
    return skipped.framework == "jax" && skipped.dependency == "jax-cuda13-plugin";
  }));
  // A requirement naming an extra asks for it, and the extra's own requirements ask in turn.
  cudadiag::testing::TempTree chain;
  chain.write("site/a-1.0.dist-info/METADATA", "Name: a\nVersion: 1.0\nRequires-Dist: b[x]==1.0\n");
  chain.write(
      "site/b-1.0.dist-info/METADATA",
      "Name: b\nVersion: 1.0\nRequires-Dist: c[y]==1.0; extra == 'x'\nRequires-Dist: d; \"z\" == extra\n");
  chain.write("site/c-1.0.dist-info/METADATA", "Name: c\nVersion: 1.0\n");
  const auto asked = cudadiag::python::requested_extras(installed_distributions({chain.path("site")}), linux);
  CHECK(asked.at("b") == std::set<std::string>{"x"});
  CHECK(asked.at("c") == std::set<std::string>{"y"});
}

TEST_CASE("frameworks: cuda-bindings and cuda-python are built for the CUDA major of their version") {
  cudadiag::testing::TempTree tree;
  const std::vector<Distribution> installed = {{"cuda-bindings", "cuda-bindings", "13.0.3", "", {}},
                                               {"cuda-python", "cuda-python", "12.9.4", "", {}},
                                               {"cuda-core", "cuda-core", "0.4.0", "", {}}};
  const auto builds = framework_builds({tree.path("site")}, installed, cudadiag::Environment{});
  REQUIRE(builds.size() == 2); // cuda-core runs on either major
  CHECK(builds[0].cuda == "13");
  CHECK(builds[0].source == "the distribution's major version");
  CHECK(builds[1].cuda == "12");
}
