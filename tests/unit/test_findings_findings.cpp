// Each finding id the discovery stage can emit, produced from a situation built for it.
#include "checks.hpp"
#include "findings/findings.hpp"
#include "synthetic_world.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <sys/stat.h>

using cudadiag::findings::evaluate_discovery;
using cudadiag::findings::Finding;
using cudadiag::findings::Severity;
using cudadiag::testing::SyntheticWorld;
using cudadiag::testing::with_id;

namespace {

std::vector<Finding> findings_for(const SyntheticWorld& world, std::vector<std::string> only = {}) {
  return evaluate_discovery(world.discover(std::move(only)), world.env);
}

} // namespace

TEST_CASE("findings: driver.missing when no libcuda.so.1 is reachable, naming a stub if one exists") {
  SyntheticWorld world;
  world.library("usr/local/cuda/lib64/stubs/libcuda.so");
  const auto found = findings_for(world, {"cuda"});
  const auto* finding = with_id(found, "driver.missing");
  REQUIRE(finding != nullptr);
  CHECK(finding->severity == Severity::error);
  CHECK(finding->message.find("stub") != std::string::npos);
}

TEST_CASE("findings: driver.stub when LD_LIBRARY_PATH puts the toolkit stub first") {
  SyntheticWorld world;
  world.library("usr/local/cuda/lib64/stubs/libcuda.so.1");
  world.env.set("LD_LIBRARY_PATH", world.tree.path("usr/local/cuda/lib64/stubs"));
  const auto found = findings_for(world, {"cuda"});
  REQUIRE(with_id(found, "driver.stub") != nullptr);
  CHECK(with_id(found, "driver.missing") == nullptr);
}

TEST_CASE("findings: env.cuda_path_home_differ only when both are set and name different directories") {
  SyntheticWorld world;
  world.tree.mkdir("a");
  world.tree.mkdir("b");
  world.tree.symlink("a-link", "a");
  world.env.set("CUDA_PATH", world.tree.path("a"));
  world.env.set("CUDA_HOME", world.tree.path("a-link"));
  CHECK(with_id(findings_for(world, {"nvrtc"}), "env.cuda_path_home_differ") == nullptr);
  world.env.set("CUDA_HOME", world.tree.path("b"));
  CHECK(with_id(findings_for(world, {"nvrtc"}), "env.cuda_path_home_differ") != nullptr);
  world.env.set("CUDA_HOME", "");
  CHECK(with_id(findings_for(world, {"nvrtc"}), "env.cuda_path_home_differ") == nullptr);
}

TEST_CASE(
    "findings: env.bad_search_path for empty, relative and missing LD_LIBRARY_PATH entries and bad roots") {
  SyntheticWorld world;
  world.env.set("LD_LIBRARY_PATH", "::relative:" + world.tree.path("missing"));
  auto found = findings_for(world, {"nvrtc"});
  const auto* finding = with_id(found, "env.bad_search_path");
  REQUIRE(finding != nullptr);
  CHECK(finding->evidence.at("entries").size() == 4); // "", "", "relative", missing
  world.env.set("LD_LIBRARY_PATH", world.tree.mkdir("fine"));
  world.env.set("CONDA_PREFIX", world.tree.write("not-a-dir", "x"));
  found = findings_for(world, {"nvrtc"});
  finding = with_id(found, "env.bad_search_path");
  REQUIRE(finding != nullptr);
  CHECK(finding->evidence.at("variable") == "CONDA_PREFIX");
}

TEST_CASE(
    "findings: a wheel and a toolkit of different versions: python_native_differ, not multiple_versions") {
  SyntheticWorld world;
  const auto site = world.venv("venv");
  world.env.set("VIRTUAL_ENV", world.tree.path("venv"));
  world.library("venv/lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc.so.13");
  world.dist_info(site, "nvidia_cuda_nvrtc", "13.1.80");
  world.toolkit("opt/cuda-13.0", "13.0.88");
  world.library("opt/cuda-13.0/lib64/libnvrtc.so.13");
  world.env.set("LD_LIBRARY_PATH", world.tree.path("opt/cuda-13.0/lib64"));
  const auto found = findings_for(world, {"nvrtc"});
  CHECK(with_id(found, "lib.multiple_versions") == nullptr); // the pair is python_native_differ's
  const auto* differ = with_id(found, "lib.python_native_differ");
  REQUIRE(differ != nullptr);
  CHECK(differ->evidence.at("python").at("version") == "13.1.80");
  CHECK(differ->evidence.at("native").at("version") == "13.0.88");

  // A third route with a third version: the toolkit CUDA_HOME names (builds, cuda-pathfinder's
  // fallback). Against the copy the loader binds it is env.root_release_differs's: newer, a warning.
  world.toolkit("opt/cuda-13.2", "13.2.51");
  world.library("opt/cuda-13.2/lib64/libnvrtc.so.13");
  world.env.set("CUDA_HOME", world.tree.path("opt/cuda-13.2"));
  const auto third = findings_for(world, {"nvrtc"});
  CHECK(with_id(third, "lib.multiple_versions") == nullptr);
  const auto* root = with_id(third, "env.root_release_differs");
  REQUIRE(root != nullptr);
  CHECK(root->severity == Severity::warning);
  CHECK(root->message.find("13.2.51") != std::string::npos);

  // Without a native answer to compare the root with, the CUDA_HOME route is lib.multiple_versions's.
  world.env.unset("LD_LIBRARY_PATH");
  const auto* versions = with_id(findings_for(world, {"nvrtc"}), "lib.multiple_versions");
  REQUIRE(versions != nullptr);
  CHECK(versions->message.find("13.2.51") != std::string::npos);
  CHECK(with_id(findings_for(world, {"nvrtc"}), "env.root_release_differs") == nullptr);
}

TEST_CASE("findings: lib.unusable_candidate and lib.wrong_arch") {
  SyntheticWorld world;
  std::string aarch64(64, '\0');
  aarch64.replace(0, 4,
                  "\x7f"
                  "ELF");
  aarch64[4] = 2; // ELFCLASS64
  aarch64[5] = 1;
  aarch64[6] = 1;
  aarch64[16] = 3;
  aarch64[18] = static_cast<char>(183); // EM_AARCH64
  world.tree.write("tk/lib64/libnvrtc.so.13", aarch64);
  world.env.set("CUDA_HOME", world.tree.path("tk"));
  world.library("tk2/lib64/libnvrtc.so.13");
  world.env.set("LD_LIBRARY_PATH", world.tree.path("tk2/lib64"));
  const auto found = findings_for(world, {"nvrtc"});
  const auto* skipped = with_id(found, "lib.wrong_arch");
  REQUIRE(skipped != nullptr);
  // The loader's answer comes before CUDA_HOME in cuda-pathfinder's order: nothing loads the foreign file.
  CHECK(skipped->severity == Severity::warning);
  CHECK(with_id(found, "lib.unusable_candidate") == nullptr);
  world.env.unset("LD_LIBRARY_PATH");
  world.library("tk/lib64/libcublasLt.so.13"); // cuDNN's required dependency loads, then NVRTC fails it
  world.library("tk/lib64/libcudnn.so.9");
  const auto without_loader = findings_for(world, {"nvrtc", "cudnn"});
  // cuda-pathfinder now reaches the foreign file through CUDA_HOME and fails: one cause, one finding,
  // an error listing what it breaks (cuDNN loads NVRTC first), and no lib.unusable_candidate.
  CHECK(with_id(without_loader, "lib.unusable_candidate") == nullptr);
  CHECK(std::count_if(without_loader.begin(), without_loader.end(),
                      [](const auto& finding) { return finding.id == "lib.wrong_arch"; }) == 1);
  const auto* taken = with_id(without_loader, "lib.wrong_arch");
  REQUIRE(taken != nullptr);
  CHECK(taken->severity == Severity::error);
  auto broken = taken->components;
  std::sort(broken.begin(), broken.end());
  CHECK(broken == std::vector<std::string>{"cudnn", "nvrtc"});
  CHECK(taken->message.find("it breaks cudnn too") != std::string::npos);
}

TEST_CASE("findings: lib.not_on_search_path for a toolkit nobody searches") {
  SyntheticWorld world;
  world.library("usr/local/cuda-12.8/lib64/libnvJitLink.so.12");
  const auto found = findings_for(world, {"nvJitLink"});
  CHECK(with_id(found, "lib.not_on_search_path") != nullptr);
}

TEST_CASE("findings: path.world_writable for a world-writable directory a library is loaded from") {
  SyntheticWorld world;
  const auto dir = world.tree.mkdir("open");
  world.library("open/libcudart.so.13");
  ::chmod(dir.c_str(), 0777);
  world.env.set("LD_LIBRARY_PATH", dir);
  CHECK(with_id(findings_for(world, {"cudart"}), "path.world_writable") != nullptr);
  ::chmod(dir.c_str(), 0755);
  CHECK(with_id(findings_for(world, {"cudart"}), "path.world_writable") == nullptr);
}

TEST_CASE("findings: ids are unique, dotted lower-case, and each is documented in docs/findings.md") {
  std::ifstream doc(CUDADIAG_SOURCE_DIR "/docs/findings.md");
  REQUIRE(doc.good());
  std::stringstream text;
  text << doc.rdbuf();
  std::set<std::string_view> ids;
  for (const auto& definition : cudadiag::findings::finding_definitions()) {
    CAPTURE(std::string(definition.id));
    CHECK(ids.insert(definition.id).second);
    CHECK(definition.id.find('.') != std::string_view::npos);
    CHECK(std::string(definition.id).find_first_of("ABCDEFGHIJKLMNOPQRSTUVWXYZ ") == std::string::npos);
    CHECK(text.str().find("## `" + std::string(definition.id) + "`") != std::string::npos);
  }
}

TEST_CASE("findings: docs/findings.md's repair table is the findings table's repair column") {
  using cudadiag::findings::parse_repair;
  std::ifstream doc(CUDADIAG_SOURCE_DIR "/docs/findings.md");
  REQUIRE(doc.good());
  // Rows "| `id` | severity | `class` |" of the section "## Repair classes".
  std::map<std::string, std::pair<std::string, std::string>> documented;
  bool in_section = false;
  for (std::string line; std::getline(doc, line);) {
    if (line.rfind("## ", 0) == 0) {
      in_section = line == "## Repair classes";
      continue;
    }
    if (!in_section || line.rfind("| `", 0) != 0) {
      continue;
    }
    const auto cells = cudadiag::testing::markdown_cells(line);
    if (cells.size() == 3) { // the id table (the class table has two columns)
      documented[cells[0]] = {cells[1], cells[2]};
    }
  }
  CHECK(documented.size() == cudadiag::findings::finding_definitions().size());
  for (const auto& definition : cudadiag::findings::finding_definitions()) {
    CAPTURE(std::string(definition.id));
    const auto it = documented.find(std::string(definition.id));
    REQUIRE(it != documented.end());
    CHECK(it->second.first == cudadiag::findings::to_string(definition.severity));
    CHECK(parse_repair(it->second.second) == definition.repair);
  }
}

TEST_CASE("findings: repair classes name and order themselves, and a finding takes its id's default") {
  using cudadiag::findings::Repair;
  for (const auto repair : cudadiag::findings::k_repairs) {
    CHECK(cudadiag::findings::parse_repair(cudadiag::findings::to_string(repair)) == repair);
  }
  CHECK_FALSE(cudadiag::findings::parse_repair("drain"));
  CHECK(Repair::none < Repair::fix_environment);
  CHECK(Repair::reboot < Repair::hardware_inspection);
  CHECK(cudadiag::findings::make_finding("verify.timeout", "m", {}).repair == Repair::reboot);
  CHECK(cudadiag::findings::make_finding("driver.forward_compat", "m", {}).repair == Repair::none);
  cudadiag::discovery::Sighting via;
  via.found_via = "LD_LIBRARY_PATH";
  CHECK(cudadiag::findings::repair_for_route(via) == Repair::fix_environment);
  via.found_via = "site-packages";
  CHECK(cudadiag::findings::repair_for_route(via) == Repair::reinstall_package);
}

TEST_CASE("findings: lib.python_native_differ is only info when both copies are the same version") {
  SyntheticWorld world;
  const auto site = world.venv("venv");
  world.env.set("VIRTUAL_ENV", world.tree.path("venv"));
  world.library("venv/lib/python3.12/site-packages/nvidia/cu13/lib/libnvrtc.so.13");
  world.dist_info(site, "nvidia_cuda_nvrtc", "13.0.88");
  world.library("opt/cuda-13.0/lib64/libnvrtc.so.13.0.88");
  world.tree.symlink("opt/cuda-13.0/lib64/libnvrtc.so.13", "libnvrtc.so.13.0.88");
  world.env.set("LD_LIBRARY_PATH", world.tree.path("opt/cuda-13.0/lib64"));
  const auto found = findings_for(world, {"nvrtc"});
  const auto* differ = with_id(found, "lib.python_native_differ");
  REQUIRE(differ != nullptr);
  CHECK(differ->severity == Severity::info);
  CHECK(with_id(found, "lib.multiple_versions") == nullptr);
}

TEST_CASE("findings: a file-name suffix in another numbering does not count as a second version") {
  SyntheticWorld world;
  const auto site = world.venv("venv");
  world.env.set("VIRTUAL_ENV", world.tree.path("venv"));
  world.library("venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcupti.so.13");
  world.dist_info(site, "nvidia_cuda_cupti", "13.0.85");
  world.tree.write("opt/cuda-13.0/version.json", R"({"cuda_cupti": {"version": "13.0.85"}})");
  world.library("opt/cuda-13.0/lib64/libcupti.so.2025.3.1");
  world.tree.symlink("opt/cuda-13.0/lib64/libcupti.so.13", "libcupti.so.2025.3.1");
  world.env.set("LD_LIBRARY_PATH", world.tree.path("opt/cuda-13.0/lib64"));
  const auto result = world.discover({"cupti"});
  const auto lib = cudadiag::testing::component(result, "cupti");
  REQUIRE(lib.loader.has_value());
  CHECK(lib.loader_candidate()->version->version == "13.0.85");
  CHECK(with_id(evaluate_discovery(result, world.env), "lib.multiple_versions") == nullptr);
}

TEST_CASE("findings: a CUPTI-style year-numbered file without other metadata is not a second version") {
  SyntheticWorld world;
  const auto site = world.venv("venv");
  world.env.set("VIRTUAL_ENV", world.tree.path("venv"));
  world.library("venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcupti.so.13");
  world.dist_info(site, "nvidia_cuda_cupti", "13.0.85");
  world.library("opt/cupti/lib64/libcupti.so.2025.3.1");
  world.tree.symlink("opt/cupti/lib64/libcupti.so.13", "libcupti.so.2025.3.1");
  world.env.set("LD_LIBRARY_PATH", world.tree.path("opt/cupti/lib64"));
  const auto found = findings_for(world, {"cupti"});
  CHECK(with_id(found, "lib.multiple_versions") == nullptr);
  CHECK(with_id(found, "lib.python_native_differ") != nullptr);
}

TEST_CASE("findings: a lib.release_mismatch takes in its pair's lib.python_native_differ and the undefined "
          "symbol between its two files") {
  using cudadiag::Evidence;
  using cudadiag::findings::make_finding;
  const std::vector<std::string> paths = {"/w/nvidia/cublas/lib/libcublas.so.12", "/old/libcublasLt.so.12"};
  auto mismatch =
      make_finding("lib.release_mismatch", "cublas and cublasLt must come from one cublas release.",
                   {"cublas", "cublasLt"},
                   Evidence{{"pair", std::vector<std::string>{"cublas", "cublasLt"}}, {"paths", paths}});
  auto differ = make_finding("lib.python_native_differ", "cublasLt differs.", {"cublasLt"}, {});
  auto other_differ = make_finding("lib.python_native_differ", "nvrtc differs.", {"nvrtc"}, {});
  auto symbol = make_finding("lib.undefined_symbol", "libcublas.so.12 needs cublasLtHSHMatmulAlgoInit.",
                             {"cublas"}, Evidence{{"needed_by", paths[0]}, {"bound", paths[1]}});
  auto other_symbol =
      make_finding("lib.undefined_symbol", "libcusparse.so.12 needs __nvJitLinkCreate_13_0.", {"cusparse"},
                   Evidence{{"needed_by", std::string("/a/libcusparse.so.12")},
                            {"bound", std::string("/a/libnvJitLink.so.13")}});
  std::vector<Finding> found = {differ, mismatch, other_differ, symbol, other_symbol};
  cudadiag::findings::merge_shared_causes(found);
  std::vector<std::string> ids;
  for (const auto& finding : found) {
    ids.push_back(finding.id + ":" + finding.components.front());
  }
  CHECK(ids == std::vector<std::string>{"lib.release_mismatch:cublas", "lib.python_native_differ:nvrtc",
                                        "lib.undefined_symbol:cusparse"});
  const auto& kept = found.front();
  CHECK(kept.severity == Severity::error); // the folded undefined symbol fails the load
  CHECK(kept.message.find("Here the load fails: libcublas.so.12 needs cublasLtHSHMatmulAlgoInit.") !=
        std::string::npos);
  const auto* folded = kept.evidence.find("folded");
  REQUIRE(folded != nullptr);
  REQUIRE(folded->list() != nullptr);
  CHECK(folded->size() == 2);
}
