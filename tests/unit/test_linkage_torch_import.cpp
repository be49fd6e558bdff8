// torch/__init__.py's and the JAX plugin's loading of their CUDA libraries (linkage/torch_import.hpp,
// jax_import.hpp) on synthetic wheel
// trees: which branch each release takes, what its globs pick, and when `import torch` fails.

#include "closure_fixtures.hpp"
#include "linkage/jax_import.hpp"
#include "linkage/torch_import.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

using cudadiag::linkage::FrameworkImport;
using cudadiag::linkage::FrameworkPreload;
using cudadiag::linkage::model_torch_import;
using cudadiag::loader::ObjectStore;
using cudadiag::loader::SearchSetting;
using cudadiag::testing::library;
using cudadiag::testing::setting_in;
using cudadiag::testing::SyntheticLibrary;
using cudadiag::testing::TempTree;

namespace {

// A torch whose libtorch_global_deps.so needs `cudart` through DT_RUNPATH into site/nvidia/<dir>/lib.
std::string torch_in(const TempTree& tree, const std::string& site, const std::string& cudart,
                     const std::string& runpath_dir) {
  return library(tree, site + "/torch/lib/libtorch_global_deps.so",
                 {.needed = {cudart}, .runpath = "$ORIGIN/../../nvidia/" + runpath_dir + "/lib"});
}

const FrameworkPreload* preload_of(const FrameworkImport& torch_import, const std::string& pattern) {
  const auto found =
      std::find_if(torch_import.preloads.begin(), torch_import.preloads.end(),
                   [&](const FrameworkPreload& preload) { return preload.pattern == pattern; });
  return found == torch_import.preloads.end() ? nullptr : &*found;
}

// The CUDA 13 wheels' one directory, nvidia/cu13/lib, with every library torch 2.10+ preloads.
void cu13_wheels(const TempTree& tree, const std::string& site) {
  for (const auto* name : {"libcublasLt.so.13", "libcublas.so.13", "libcudnn.so.9", "libnvrtc.so.13",
                           "libnvrtc-builtins.so.13.0", "libcudart.so.13", "libcupti.so.13", "libcufft.so.12",
                           "libcurand.so.10", "libnvJitLink.so.13", "libcusparse.so.12", "libcusparseLt.so.0",
                           "libcusolver.so.12", "libnccl.so.2", "libnvshmem_host.so.3", "libcufile.so.0"}) {
    library(tree, site + "/nvidia/cu13/lib/" + name, {.soname = name});
  }
}

} // namespace

TEST_CASE(
    "torch import: 2.11 preloads every library from nvidia/cu13/lib after global deps loaded a cudart") {
  TempTree tree;
  ObjectStore store;
  cu13_wheels(tree, "site");
  const auto global_deps = torch_in(tree, "site", "libcudart.so.13", "cu13");
  const auto result =
      model_torch_import(global_deps, "2.11.0", "13.0", {tree.path("site")}, setting_in(tree), store);
  CHECK(result.model == "torch 2.11");
  CHECK_FALSE(result.import_error);
  REQUIRE(result.preloads.size() == 17); // 16 required, then nvToolsExt (optional, absent)
  CHECK(result.preloads.front().pattern == "libcublasLt.so.*[0-9]");
  CHECK(result.preloads.back().pattern == "libnvToolsExt.so.*[0-9]");
  CHECK(result.preloads.back().outcome == "not found");
  CHECK(preload_of(result, "libcudart.so.*[0-9]")->outcome == "already loaded");
  CHECK(preload_of(result, "libcudnn.so.*[0-9]")->path == tree.path("site/nvidia/cu13/lib/libcudnn.so.9"));
  CHECK(result.load_order.front() == global_deps);
  CHECK(result.load_order.size() == 17); // global deps and the 16 picks (cudart among them, once)

  // torch 2.10 has no libcublasLt glob: it starts with libcublas.
  const auto older =
      model_torch_import(global_deps, "2.10.0", "13.0", {tree.path("site")}, setting_in(tree), store);
  CHECK(older.model == "torch 2.10");
  CHECK(older.preloads.front().pattern == "libcublas.so.*[0-9]");
  CHECK(older.preloads.size() == 16);
}

TEST_CASE("torch import: the first required library not found ends the silent preloads") {
  TempTree tree;
  ObjectStore store;
  library(tree, "site/nvidia/cu13/lib/libcudart.so.13", {.soname = "libcudart.so.13"});
  library(tree, "site/nvidia/cu13/lib/libcudnn.so.9", {.soname = "libcudnn.so.9"});
  const auto global_deps = torch_in(tree, "site", "libcudart.so.13", "cu13");
  const auto result =
      model_torch_import(global_deps, "2.11.0", "13.0", {tree.path("site")}, setting_in(tree), store);
  CHECK_FALSE(result.import_error); // swallowed: import torch goes on
  REQUIRE(result.preloads.size() == 1);
  CHECK(result.preloads.front().outcome == "not found"); // libcublasLt: the loop ends there
  CHECK(result.load_order == std::vector<std::string>{global_deps});
}

TEST_CASE("torch import: after success 2.8 preloads only for a cudart from nvidia/cuda_runtime/lib and 2.9 "
          "for any") {
  TempTree tree;
  ObjectStore store;
  // The runtime comes from LD_LIBRARY_PATH, not from the wheel directory.
  library(tree, "ctk/lib/libcudart.so.12", {.soname = "libcudart.so.12"});
  library(tree, "site/nvidia/cuda_nvrtc/lib/libnvrtc.so.12", {.soname = "libnvrtc.so.12"});
  library(tree, "site/nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.12.8",
          {.soname = "libnvrtc-builtins.so.12.8"});
  library(tree, "site/nvidia/nvjitlink/lib/libnvJitLink.so.12", {.soname = "libnvJitLink.so.12"});
  const auto global_deps = torch_in(tree, "site", "libcudart.so.12", "cuda_runtime");
  auto setting = setting_in(tree);
  setting.ld_library_path = {tree.path("ctk/lib")};
  const auto old =
      model_torch_import(global_deps, "2.8.0+cu128", "12.8", {tree.path("site")}, setting, store);
  CHECK(old.model == "torch 2.8");
  CHECK(old.preloads.empty());
  CHECK(old.branch.find("nothing is preloaded") != std::string::npos);

  const auto newer = model_torch_import(global_deps, "2.9.1", "12.8", {tree.path("site")}, setting, store);
  CHECK(newer.model == "torch 2.9");
  REQUIRE(newer.preloads.size() == 3);
  CHECK(newer.preloads[0].path == tree.path("site/nvidia/cuda_nvrtc/lib/libnvrtc.so.12"));
  CHECK(newer.preloads[1].path == tree.path("site/nvidia/cuda_nvrtc/lib/libnvrtc-builtins.so.12.8"));
  CHECK(newer.preloads[2].outcome == "loaded");
}

TEST_CASE("torch import: a failed global-deps load preloads from the first sys.path entry with a match "
          "(pytorch#147001)") {
  TempTree tree;
  ObjectStore store;
  const std::vector<std::pair<std::string, std::string>> wheels = {
      {"cublas", "libcublas.so.12"},     {"cudnn", "libcudnn.so.9"},
      {"cuda_nvrtc", "libnvrtc.so.12"},  {"cuda_runtime", "libcudart.so.12"},
      {"cuda_cupti", "libcupti.so.12"},  {"cufft", "libcufft.so.11"},
      {"curand", "libcurand.so.10"},     {"nvjitlink", "libnvJitLink.so.12"},
      {"cusparse", "libcusparse.so.12"}, {"cusparselt", "libcusparseLt.so.0"},
      {"cusolver", "libcusolver.so.11"}, {"nccl", "libnccl.so.2"},
      {"cufile", "libcufile.so.0"}};
  for (const auto& [folder, name] : wheels) {
    library(tree, "cu12/nvidia/" + folder + "/lib/" + name, {.soname = name});
  }
  library(tree, "cu11/nvidia/cuda_runtime/lib/libcudart.so.11.0", {.soname = "libcudart.so.11.0"});
  // torch's RUNPATH reaches its own site-packages' nvidia/, which is empty.
  const auto global_deps = torch_in(tree, "site", "libcudart.so.12", "cuda_runtime");

  const auto wrong = model_torch_import(global_deps, "2.8.0", "12.8", {tree.path("cu11"), tree.path("cu12")},
                                        setting_in(tree), store);
  REQUIRE(wrong.import_error);
  CHECK(*wrong.import_error ==
        "OSError: libcudart.so.12: cannot open shared object file: No such file or directory");
  CHECK(preload_of(wrong, "libcudart.so.*[0-9]")->path ==
        tree.path("cu11/nvidia/cuda_runtime/lib/libcudart.so.11.0"));
  CHECK(wrong.branch.find("fails to load") != std::string::npos);

  const auto right =
      model_torch_import(global_deps, "2.8.0", "12.8", {tree.path("cu12")}, setting_in(tree), store);
  CHECK_FALSE(right.import_error);
  CHECK(right.load_order.back() == global_deps); // loaded again, after the preloads
  CHECK(right.load_order.size() == wheels.size() + 1);

  // One wheel missing: _preload_cuda_deps raises ValueError, import torch fails.
  std::filesystem::remove(tree.path("cu12/nvidia/nccl/lib/libnccl.so.2"));
  const auto missing =
      model_torch_import(global_deps, "2.8.0", "12.8", {tree.path("cu12")}, setting_in(tree), store);
  REQUIRE(missing.import_error);
  CHECK(*missing.import_error == "ValueError: libnccl.so.*[0-9] not found in the system path");
}

TEST_CASE("torch import: an error naming no CUDA library is raised as it is, and an unparsable version is "
          "the newest") {
  TempTree tree;
  ObjectStore store;
  const auto global_deps =
      library(tree, "site/torch/lib/libtorch_global_deps.so", {.needed = {"libgomp.so.1"}});
  const auto result =
      model_torch_import(global_deps, "not a version", "", {tree.path("site")}, setting_in(tree), store);
  CHECK(result.model == "torch 2.11");
  REQUIRE(result.import_error);
  CHECK(*result.import_error ==
        "OSError: libgomp.so.1: cannot open shared object file: No such file or directory");
  CHECK(result.preloads.empty());
}

TEST_CASE("torch import: glob keeps the directory's own order and Python's rules") {
  TempTree tree;
  tree.write("d/libcudart.so.12", "x");
  tree.write("d/libcudart.so.11.0", "x");
  tree.write("d/libcudart.so", "x");        // no digit after ".so.": not matched
  tree.write("d/libcudart.so.12.bak", "x"); // does not end with a digit
  tree.write("d/.libcudart.so.12", "x");    // hidden
  auto names = cudadiag::linkage::glob_in_directory_order(tree.path("d"), "libcudart.so.*[0-9]");
  std::sort(names.begin(), names.end());
  CHECK(names == std::vector<std::string>{"libcudart.so.11.0", "libcudart.so.12"});
  CHECK(cudadiag::linkage::glob_in_directory_order(tree.path("nowhere"), "*").empty());
}

TEST_CASE("jax import: the plugin opens each listed library from its nvidia module's first directory") {
  TempTree tree;
  ObjectStore store;
  // nvidia.cu13 in the user site (first on sys.path) and in the venv: __path__[0] is the user's, so
  // the venv's libcublas.so.13 is not looked at.
  library(tree, "user/nvidia/cu13/lib/libcudart.so.13", {.soname = "libcudart.so.13"});
  library(tree, "venv/nvidia/cu13/lib/libcudart.so.13", {.soname = "libcudart.so.13"});
  library(tree, "venv/nvidia/cu13/lib/libcublas.so.13", {.soname = "libcublas.so.13"});
  library(tree, "venv/nvidia/cublas/lib/libcublas.so.12",
          {.soname = "libcublas.so.12", .needed = {"libcublasLt.so.12"}, .runpath = "$ORIGIN"});
  library(tree, "venv/nvidia/cublas/lib/libcublasLt.so.12", {.soname = "libcublasLt.so.12"});
  library(tree, "venv/nvidia/cudnn/lib/libcudnn.so.9",
          {.soname = "libcudnn.so.9", .needed = {"libmissing.so.1"}});
  const auto result =
      cudadiag::linkage::model_jax_import(tree.path("venv/jax_plugins/xla_cuda13"),
                                          {tree.path("user"), tree.path("venv")}, setting_in(tree), store);
  CHECK(result.statement == "jax.devices()");
  CHECK_FALSE(result.import_error); // what is missing or fails is passed over
  REQUIRE(result.preloads.size() == 19);
  CHECK(preload_of(result, "libcudart.so.12")->outcome == "not found");
  CHECK(preload_of(result, "libcudart.so.13")->path == tree.path("user/nvidia/cu13/lib/libcudart.so.13"));
  CHECK(preload_of(result, "libcublas.so.13")->outcome == "not found");
  // libcublas.so.12 brings libcublasLt.so.12 through its RUNPATH: the plugin's own open finds it loaded.
  CHECK(preload_of(result, "libcublas.so.12")->outcome == "loaded");
  CHECK(preload_of(result, "libcublasLt.so.12")->outcome == "already loaded");
  CHECK(preload_of(result, "libcudnn.so.9")->outcome.starts_with("fails: libmissing.so.1"));
  CHECK(result.load_order == std::vector<std::string>{tree.path("user/nvidia/cu13/lib/libcudart.so.13"),
                                                      tree.path("venv/nvidia/cublas/lib/libcublas.so.12"),
                                                      tree.path("venv/nvidia/cublas/lib/libcublasLt.so.12")});
}
