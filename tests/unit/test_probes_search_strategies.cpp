// Search strategies in isolation: what each one sees and records in its trace.
#include "core/filesystem.hpp"
#include "probes/search_strategies.hpp"
#include "synthetic_world.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>

using cudadiag::probes::derive_toolkit_root;
using cudadiag::probes::expand_triple;
using cudadiag::testing::component;
using cudadiag::testing::SyntheticWorld;

TEST_CASE("search strategies: derive_toolkit_root follows cuda-pathfinder's rule") {
  CHECK(derive_toolkit_root("/usr/local/cuda-13.0/lib64/libcudart.so.13") == "/usr/local/cuda-13.0");
  CHECK(derive_toolkit_root("/usr/local/cuda-13.0/lib/libcudart.so.13") == "/usr/local/cuda-13.0");
  CHECK(derive_toolkit_root("/opt/cuda/targets/x86_64-linux/lib/libcudart.so.12") == "/opt/cuda");
  CHECK_FALSE(derive_toolkit_root("/usr/lib/x86_64-linux-gnu/libcudart.so.12") ==
              std::optional<std::string>("/usr"));
  CHECK_FALSE(derive_toolkit_root("/opt/weird/libcudart.so.12").has_value());
}

TEST_CASE("search strategies: {triple} expands to the layout's target triple") {
  cudadiag::SystemLayout layout;
  layout.target_triple = "sbsa-linux";
  CHECK(expand_triple("targets/{triple}/lib", layout) == "targets/sbsa-linux/lib");
  CHECK(expand_triple("lib64", layout) == "lib64");
}

TEST_CASE("search strategies: LD_LIBRARY_PATH resolves empty and relative entries against the cwd") {
  SyntheticWorld world;
  const auto in_cwd = world.library("home/user/work/libnvrtc.so.13");
  const auto in_sub = world.library("home/user/work/sub/libnvrtc.so.13");
  world.env.set("LD_LIBRARY_PATH", ":sub");
  const auto& lib = component(world.discover({"nvrtc"}), "nvrtc");
  REQUIRE(lib.candidates.size() == 2);
  CHECK(lib.candidates[0].first.path == in_cwd);
  CHECK(lib.candidates[1].first.path == in_sub);
  CHECK(lib.candidates[0].first.found_via == "LD_LIBRARY_PATH");
}

TEST_CASE("search strategies: 5,000 LD_LIBRARY_PATH entries are searched without trouble") {
  SyntheticWorld world;
  std::string value;
  for (int i = 0; i < 5000; ++i) {
    value += world.tree.path("missing-" + std::to_string(i)) + ":";
  }
  const auto good = world.library("ldpath/libcudart.so.13");
  value += world.tree.path("ldpath");
  world.env.set("LD_LIBRARY_PATH", value);
  const auto& lib = component(world.discover({"cudart"}), "cudart");
  CHECK(cudadiag::testing::chosen(lib.loader) == good);
}

TEST_CASE("search strategies: bad CUDA_HOME, CONDA_PREFIX and VIRTUAL_ENV values are traced, not fatal") {
  SyntheticWorld world;
  world.tree.write("a-file", "x");
  for (const auto& value : {std::string(""), std::string("relative/dir"), world.tree.path("nope"),
                            world.tree.path("a-file"), std::string("/\xff\xfe/bad-utf8")}) {
    CAPTURE(value);
    world.env.set("CUDA_HOME", value);
    world.env.set("CUDA_PATH", value);
    world.env.set("CONDA_PREFIX", value);
    world.env.set("VIRTUAL_ENV", value);
    const auto result = world.discover({"nvrtc", "cccl", "nvcc"});
    CHECK(result.components.size() ==
          5); // nvrtc: a library and a header set; nvcc: a binary and a header set
    for (const auto& entry : result.components) {
      CHECK(entry.candidates.empty());
    }
  }
}

TEST_CASE("search strategies: system toolkits /usr/local/cuda and cuda-X.Y are listed newest first") {
  SyntheticWorld world;
  world.library("usr/local/cuda-12.4/lib64/libnvrtc.so.12");
  world.library("usr/local/cuda-12.10/lib64/libnvrtc.so.12");
  world.library("usr/local/cuda-12.9/lib64/libnvrtc.so.12");
  const auto& lib = component(world.discover({"nvrtc"}), "nvrtc");
  REQUIRE(lib.candidates.size() == 3);
  CHECK(lib.candidates[0].first.path.find("cuda-12.10/") != std::string::npos);
  CHECK(lib.candidates[1].first.path.find("cuda-12.9/") != std::string::npos);
  CHECK(lib.candidates[2].first.path.find("cuda-12.4/") != std::string::npos);
  CHECK_FALSE(lib.selected.has_value()); // cuda-pathfinder does not look in /usr/local
  CHECK(lib.candidates[0].first.found_via == "system-ctk");
}

TEST_CASE("search strategies: binaries come from wheels, conda, CUDA_PATH and (native only) PATH") {
  SyntheticWorld world;
  const auto on_path = world.tree.write("usr/bin/nvcc", "#!/bin/sh\n", 0755);
  world.tree.write("tk/bin/nvcc", "#!/bin/sh\n", 0644); // not executable
  world.env.set("CUDA_PATH", world.tree.path("tk"));
  const auto& nvcc = component(world.discover({"nvcc"}), "nvcc", cudadiag::probes::ComponentKind::binary);
  REQUIRE(nvcc.candidates.size() == 2);
  CHECK(cudadiag::testing::chosen(nvcc.loader) == on_path);
  CHECK_FALSE(nvcc.selected.has_value());
  // CUDA_PATH is searched before PATH.
  CHECK(nvcc.candidates[0].rejected == std::optional<std::string>("not executable"));
  CHECK(nvcc.candidates[1].usable());
}

namespace {

const std::string k_bitcode_magic = std::string("BC\xC0\xDE", 4) + std::string(60, '\0');
const std::string k_archive = "!<arch>\n";

} // namespace

TEST_CASE(
    "search strategies: static and bitcode libraries follow cuda-pathfinder (wheels, conda, CUDA_PATH)") {
  using cudadiag::probes::ComponentKind;
  SyntheticWorld world;
  const auto site = world.venv("venv");
  world.env.set("VIRTUAL_ENV", world.tree.path("venv"));
  const auto wheel_bc = world.tree.write(site.substr(world.tree.root().size() + 1) +
                                             "/nvidia/cu13/nvvm/libdevice/libdevice.10.bc",
                                         k_bitcode_magic);
  world.dist_info(site, "nvidia-nvvm", "13.0.88");
  world.tree.write("tk/nvvm/libdevice/libdevice.10.bc", k_bitcode_magic);
  const auto conda_a = world.tree.write("conda/lib/libcudadevrt.a", k_archive);
  world.tree.write("conda/lib64/libcudadevrt.a", k_archive); // conda's rule is lib only
  const auto tk_a = world.tree.write("tk/lib64/libcudadevrt.a", k_archive);
  world.env.set("CUDA_PATH", world.tree.path("tk"));

  auto result = world.discover({"device", "cudadevrt"});
  const auto device = component(result, "device", ComponentKind::bitcode_lib);
  CHECK(cudadiag::testing::chosen(device.selected) == wheel_bc);
  CHECK_FALSE(device.loader.has_value()); // nothing loads a bitcode file
  REQUIRE(device.selected_candidate()->version.has_value());
  CHECK(device.selected_candidate()->version->version == "13.0.88");
  CHECK(component(result, "cudadevrt", ComponentKind::static_lib).selected->via.path == tk_a);

  world.env.set("CONDA_PREFIX", world.tree.path("conda"));
  result = world.discover({"cudadevrt"});
  const auto devrt = component(result, "cudadevrt", ComponentKind::static_lib);
  CHECK(cudadiag::testing::chosen(devrt.selected) == conda_a);
  CHECK(devrt.status == cudadiag::discovery::ComponentStatus::found);
}

TEST_CASE("search strategies: an empty or foreign bitcode/static file is the answer, and using it fails") {
  using cudadiag::probes::ComponentKind;
  SyntheticWorld world;
  const auto empty = world.tree.write("tk/nvvm/libdevice/libdevice.10.bc", "");
  world.tree.write("tk/lib64/libcudadevrt.a", "\x7f"
                                              "ELF not an archive");
  world.env.set("CUDA_PATH", world.tree.path("tk"));
  const auto result = world.discover({"device", "cudadevrt"});
  const auto device = component(result, "device", ComponentKind::bitcode_lib);
  CHECK(cudadiag::testing::chosen(device.selected) == empty);
  CHECK(device.selected->fails == std::optional<std::string>("empty file"));
  CHECK(device.status == cudadiag::discovery::ComponentStatus::error);
  const auto devrt = component(result, "cudadevrt", ComponentKind::static_lib);
  REQUIRE(devrt.selected.has_value());
  CHECK(devrt.selected->fails == std::optional<std::string>("not an ar archive (no !<arch> header)"));
}

TEST_CASE("search strategies: a bitcode path that is a directory is passed over, as os.path.isfile does") {
  using cudadiag::probes::ComponentKind;
  SyntheticWorld world;
  world.tree.mkdir("tk/nvvm/libdevice/libdevice.10.bc");
  world.env.set("CUDA_PATH", world.tree.path("tk"));
  const auto device = component(world.discover({"device"}), "device", ComponentKind::bitcode_lib);
  CHECK_FALSE(device.selected.has_value());
  CHECK(device.status == cudadiag::discovery::ComponentStatus::not_found);
}

TEST_CASE("search strategies: cuDNN, NCCL and NVSHMEM headers fall back to the system include directories") {
  using cudadiag::probes::ComponentKind;
  SyntheticWorld world;
  const auto multiarch =
      world.tree.write("sysroot/usr/include/x86_64-linux-gnu/cudnn.h", "#define CUDNN_MAJOR 9\n");
  world.tree.write("sysroot/usr/include/cudnn.h", "");
  world.tree.write("sysroot/usr/include/x86_64-linux-gnu/cudnn_version.h",
                   "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 19\n#define CUDNN_PATCHLEVEL 0\n");
  world.tree.write("sysroot/usr/include/nvshmem_3/nvshmem.h", "");
  const auto newest = world.tree.write("sysroot/usr/include/nvshmem_12/nvshmem.h", "");
  world.tree.write("sysroot/usr/local/include/nccl.h",
                   "#define NCCL_MAJOR 2\n#define NCCL_MINOR 28\n#define NCCL_PATCH 9\n");
  const auto result = world.discover({"cudnn", "nvshmem", "nccl"});
  const auto cudnn = component(result, "cudnn", ComponentKind::headers);
  CHECK(cudadiag::testing::chosen(cudnn.selected) == cudadiag::fs::parent(multiarch));
  CHECK(cudnn.selected->via.found_via == "supported_install_dir");
  REQUIRE(cudnn.selected_candidate()->version.has_value());
  CHECK(cudnn.selected_candidate()->version->version == "9.19.0");
  CHECK(component(result, "nvshmem", ComponentKind::headers).selected->via.path ==
        cudadiag::fs::parent(newest));
  const auto nccl = component(result, "nccl", ComponentKind::headers);
  CHECK(nccl.selected_candidate()->version->version == "2.28.9");

  // CUDA_PATH comes before the system directories (cuda-pathfinder searches it for every header set).
  const auto in_toolkit = world.tree.write("tk/include/cudnn.h", "");
  world.env.set("CUDA_PATH", world.tree.path("tk"));
  CHECK(component(world.discover({"cudnn"}), "cudnn", ComponentKind::headers).selected->via.path ==
        cudadiag::fs::parent(in_toolkit));
}

TEST_CASE(
    "search strategies: conda headers: toolkit sets under the one targets/*/, others under the prefix") {
  using cudadiag::probes::ComponentKind;
  SyntheticWorld world;
  const auto nvvm = world.tree.write("conda/targets/x86_64-linux/nvvm/include/nvvm.h", "");
  world.tree.write("conda/nvvm/include/nvvm.h", "");
  const auto cutensor =
      world.tree.write("conda/include/cutensor.h",
                       "#define CUTENSOR_MAJOR 2\n#define CUTENSOR_MINOR 3\n#define CUTENSOR_PATCH 1\n");
  world.tree.write("conda/targets/x86_64-linux/include/cutensor.h", "");
  world.env.set("CONDA_PREFIX", world.tree.path("conda"));
  const auto result = world.discover({"nvvm", "cutensor"});
  CHECK(component(result, "nvvm", ComponentKind::headers).selected->via.path == cudadiag::fs::parent(nvvm));
  const auto tensor = component(result, "cutensor", ComponentKind::headers);
  CHECK(tensor.selected->via.path == cudadiag::fs::parent(cutensor));
  CHECK(tensor.selected_candidate()->version->version == "2.3.1");
}

TEST_CASE("search strategies: a header anchor that is a FIFO is passed over and not read") {
  using cudadiag::probes::ComponentKind;
  SyntheticWorld world;
  world.tree.mkdir("tk/include");
  REQUIRE(::mkfifo(world.tree.path("tk/include/cudnn.h").c_str(), 0644) == 0);
  REQUIRE(::mkfifo(world.tree.path("tk/include/cudnn_version.h").c_str(), 0644) == 0);
  world.env.set("CUDA_PATH", world.tree.path("tk"));
  const auto cudnn = component(world.discover({"cudnn"}), "cudnn", ComponentKind::headers);
  CHECK_FALSE(cudnn.selected.has_value());
  REQUIRE(cudnn.candidates.size() == 1);
  CHECK_FALSE(cudnn.candidates.front().usable());
}

TEST_CASE("search strategies: other wheels' layouts (cuquantum/, cutensor/, nvidia/<lib>/cu13/) and their "
          "versions") {
  SyntheticWorld world;
  const auto site = world.venv("venv");
  world.env.set("VIRTUAL_ENV", world.tree.path("venv"));
  const auto rel = site.substr(world.tree.root().size() + 1);
  const auto statevec = world.library(rel + "/cuquantum/lib/libcustatevec.so.1");
  const auto blasmp = world.library(rel + "/nvidia/cublasmp/cu13/lib/libcublasmp.so.0");
  world.dist_info(site, "custatevec_cu13", "1.10.0");
  world.dist_info(site, "nvidia_cublasmp_cu13", "0.6.0");
  // Their required dependencies, which cuda-pathfinder loads first (without them neither is found).
  world.library("ld/libcublas.so.13");
  world.library("ld/libcublasLt.so.13");
  world.library("ld/libnvshmem_host.so.3");
  world.env.set("LD_LIBRARY_PATH", world.tree.path("ld"));
  const auto result = world.discover({"custatevec", "cublasmp"});
  const auto sv = component(result, "custatevec");
  CHECK(cudadiag::testing::chosen(sv.selected) == statevec);
  CHECK(sv.selected_candidate()->version->version == "1.10.0");
  const auto mp = component(result, "cublasmp");
  CHECK(cudadiag::testing::chosen(mp.selected) == blasmp);
  CHECK(mp.selected_candidate()->version->version == "0.6.0");
}

TEST_CASE("directory cache: a directory under a listed ancestor is answered as opendir would answer") {
  cudadiag::testing::TempTree tree;
  tree.mkdir("site/nvidia/cu13/lib");
  tree.write("site/a-file", "x");
  tree.symlink("site/link", "nvidia");
  tree.symlink("site/dangling", "nowhere");
  // Each path asked cold (nothing listed) and again after its ancestors were listed: same answer.
  const std::vector<std::string> paths = {"site/nvidia/cu13/lib",
                                          "site/nvidia/cu12/lib",
                                          "site/nvidia/cu13/lib/",
                                          "site/link/cu13/lib",
                                          "site/link/cu12",
                                          "site/dangling/lib",
                                          "site/a-file/lib",
                                          "site/nvidia/../nvidia/cu13",
                                          "site/nvidia/./cu13",
                                          "site//nvidia/cu13",
                                          "site/missing/deeper/still",
                                          "site/nvidia/cu13/.."};
  for (const auto& relative : paths) {
    CAPTURE(relative);
    const auto dir = tree.path(relative);
    const cudadiag::probes::DirectoryCache cold;
    const bool expected = cold.listing(dir).is_directory;
    const cudadiag::probes::DirectoryCache warm;
    for (const auto* ancestor :
         {"", "site", "site/nvidia", "site/nvidia/cu13", "site/link", "site/missing"}) {
      (void)warm.listing(tree.path(ancestor));
    }
    CHECK(warm.listing(dir).is_directory == expected);
  }
  const cudadiag::probes::DirectoryCache cache;
  (void)cache.listing(tree.path("site"));
  CHECK(cache.listing(tree.path("site/nvidia/cu13/lib")).is_directory);
  CHECK_FALSE(cache.listing(tree.path("site/torch/lib")).is_directory);
}
