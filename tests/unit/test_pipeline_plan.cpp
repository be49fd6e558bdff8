// The one run: discovery prepared once, inputs checked, policy findings in before the summary.
#include "linkage/linkage.hpp"
#include "pipeline/plan.hpp"
#include "synthetic_world.hpp"

#include <doctest/doctest.h>

#include <algorithm>

namespace {

using cudadiag::pipeline::Plan;

Plan world_plan(const cudadiag::testing::SyntheticWorld& world) {
  Plan plan;
  plan.environment = world.env;
  plan.discovery.layout = world.layout;
  plan.discovery.python_search.system_interpreters = {};
  return plan;
}

// A venv, activated, with torch 2.8 built for CUDA 12.8 and its two libraries the closures start from.
void add_torch_venv(cudadiag::testing::SyntheticWorld& world) {
  const auto site = world.venv("venv");
  world.env.set("VIRTUAL_ENV", world.tree.path("venv"));
  world.dist_info(site, "torch", "2.8.0");
  world.tree.write("venv/lib/python3.12/site-packages/torch/version.py",
                   "__version__ = '2.8.0+cu128'\ncuda = '12.8'\n");
  (void)world.library("venv/lib/python3.12/site-packages/torch/lib/libtorch_global_deps.so");
  (void)world.library("venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so");
}

bool has_finding(const cudadiag::report::Report& report, std::string_view id) {
  return std::any_of(report.findings.begin(), report.findings.end(),
                     [id](const auto& finding) { return finding.id == id; });
}

} // namespace

TEST_CASE("pipeline: the report lists the components asked for in catalog order, verified ones included") {
  cudadiag::testing::SyntheticWorld world;
  auto plan = world_plan(world);
  const auto report = cudadiag::pipeline::run(plan);
  REQUIRE(report);
  const auto& catalog = cudadiag::probes::catalog();
  REQUIRE(report->discovery.components.size() == catalog.size());
  for (std::size_t i = 0; i < catalog.size(); ++i) {
    CHECK(report->discovery.components[i].spec == &catalog[i]);
  }
  CHECK_FALSE(report->verification.ran);
  CHECK(report->verification.skipped_reason.find("--no-load") != std::string::npos);

  plan.components = {cudadiag::probes::find_component("nvcc"), cudadiag::probes::find_component("cuda")};
  plan.not_loaded_reason = "asked not to";
  const auto two = cudadiag::pipeline::run(plan);
  REQUIRE(two);
  REQUIRE(two->discovery.components.size() == 2);
  CHECK(two->discovery.components[0].spec->name == "nvcc");
  CHECK(two->discovery.components[1].spec->name == "cuda");
  CHECK(two->verification.skipped_reason == "asked not to");
}

TEST_CASE("pipeline: an unmet requirement is a finding counted in the summary") {
  cudadiag::testing::SyntheticWorld world;
  auto plan = world_plan(world);
  REQUIRE(cudadiag::policy::add_requirements(plan.policy, {"nvrtc>=12.4"}));
  plan.policy.sources = {"--require"};
  const auto report = cudadiag::pipeline::run(plan);
  REQUIRE(report);
  CHECK(has_finding(*report, "policy.unmet"));
  REQUIRE(report->policy);
  REQUIRE(report->policy->outcomes.size() == 1);
  CHECK_FALSE(report->policy->outcomes.front().met);
  CHECK(report->summary.errors >= 1);
  CHECK(report->summary.exit_code == 1);
}

TEST_CASE("pipeline: --fail-on warning and the policy's fail_on give the stricter level") {
  cudadiag::testing::SyntheticWorld world;
  auto plan = world_plan(world);
  plan.policy.fail_on = cudadiag::report::FailOn::warning;
  const auto report = cudadiag::pipeline::run(plan);
  REQUIRE(report);
  CHECK(report->summary.fail_on == cudadiag::report::FailOn::warning);
  CHECK_FALSE(report->policy); // no requirements: no policy object
}

TEST_CASE("pipeline: a loader cache or interpreter that names nothing usable is an error, not a report") {
  cudadiag::testing::SyntheticWorld world;
  auto plan = world_plan(world);
  SUBCASE("missing cache") {
    plan.ld_so_cache = world.tree.path("nope/ld.so.cache");
    const auto report = cudadiag::pipeline::run(plan);
    REQUIRE_FALSE(report);
    CHECK(report.error().message.find("--ld-so-cache") != std::string::npos);
    CHECK(report.error().message.find("does not exist") != std::string::npos);
  }
  SUBCASE("a directory") {
    plan.ld_so_cache = world.tree.mkdir("etc/cache-dir");
    const auto report = cudadiag::pipeline::run(plan);
    REQUIRE_FALSE(report);
    CHECK(report.error().message.find("not a regular file") != std::string::npos);
  }
  SUBCASE("a file that is no cache at all (no magic)") {
    plan.ld_so_cache = world.tree.write("etc/passwd", "root:x:0:0:root:/root:/bin/bash\n");
    const auto report = cudadiag::pipeline::run(plan);
    REQUIRE_FALSE(report);
    CHECK(report.error().message.find("not a loader cache") != std::string::npos);
  }
  SUBCASE("a damaged cache is a status") {
    plan.ld_so_cache = world.tree.write("etc/truncated.cache", "glibc-ld.so.cache1.1");
    const auto report = cudadiag::pipeline::run(plan);
    REQUIRE(report);
    CHECK(report->discovery.ld_cache.error);
  }
  SUBCASE("missing interpreter") {
    plan.discovery.python_exe = world.tree.path("nope/python3");
    const auto report = cudadiag::pipeline::run(plan);
    REQUIRE_FALSE(report);
    CHECK(report.error().message.find("--python") != std::string::npos);
  }
}

TEST_CASE("pipeline: observed findings come first, problems_only drops info") {
  cudadiag::testing::SyntheticWorld world;
  auto plan = world_plan(world);
  plan.observed = {cudadiag::findings::make_finding("process.duplicate_lib", "two copies", {"cudart"}),
                   cudadiag::findings::make_finding("lib.not_on_search_path", "an info", {"nvrtc"})};
  plan.problems_only = true;
  const auto report = cudadiag::pipeline::run(plan);
  REQUIRE(report);
  REQUIRE_FALSE(report->findings.empty());
  CHECK(report->findings.front().id == "process.duplicate_lib");
  CHECK_FALSE(has_finding(*report, "lib.not_on_search_path"));
}

TEST_CASE("pipeline: the frameworks' own loads are predicted for the whole catalog unless the plan leaves "
          "them out") {
  cudadiag::testing::SyntheticWorld world;
  add_torch_venv(world);
  auto plan = world_plan(world);
  const auto predicted = cudadiag::pipeline::run(plan);
  REQUIRE(predicted);
  REQUIRE_FALSE(predicted->discovery.frameworks.empty());
  CHECK_FALSE(predicted->linkage.frameworks.empty());
  plan.framework_closures = false; // the startup check: another process's import is not its question
  const auto left_out = cudadiag::pipeline::run(plan);
  REQUIRE(left_out);
  CHECK_FALSE(left_out->discovery.frameworks.empty()); // the pins and builds are still read
  CHECK(left_out->linkage.frameworks.empty());
}

TEST_CASE(
    "pipeline: the frameworks' loads predicted ahead of the components are those analyze_linkage predicts") {
  cudadiag::testing::SyntheticWorld world;
  add_torch_venv(world);
  const auto plan = world_plan(world);
  const auto ahead = cudadiag::pipeline::run(plan); // started before the components are resolved
  REQUIRE(ahead);
  const auto here =
      cudadiag::linkage::analyze_linkage(ahead->discovery, plan.environment, plan.discovery.layout);
  REQUIRE(ahead->linkage.frameworks.size() == here.frameworks.size());
  REQUIRE_FALSE(here.frameworks.empty());
  for (std::size_t i = 0; i < here.frameworks.size(); ++i) {
    const auto& early = ahead->linkage.frameworks[i];
    const auto& late = here.frameworks[i];
    CHECK(early.framework == late.framework);
    CHECK(early.library == late.library);
    CHECK(early.loads() == late.loads());
    REQUIRE(early.closure.closure.objects.size() == late.closure.closure.objects.size());
    for (std::size_t j = 0; j < late.closure.closure.objects.size(); ++j) {
      CHECK(early.closure.closure.objects[j].path == late.closure.closure.objects[j].path);
      CHECK(early.closure.facts[j].component == late.closure.facts[j].component);
    }
  }
}
