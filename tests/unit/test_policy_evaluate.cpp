// Evaluating requirements against the H200 host's report (plus a synthetic self-test), and the
// policy.unmet findings and the summary that follow.
#include "checks.hpp"
#include "core/filesystem.hpp"
#include "findings/findings.hpp"
#include "policy/evaluate.hpp"
#include "report/json_report.hpp"

#include <doctest/doctest.h>

namespace {

using namespace cudadiag::policy;
using nlohmann::json;

json h200_report_with_sort_figures() {
  auto report = cudadiag::testing::h200_example_report();
  auto sort = [](int device, double u32, double u64) {
    return json{{"key", "sort"},
                {"device", device},
                {"description", "CUB radix sort"},
                {"status", "pass"},
                {"reason", nullptr},
                {"wall_ms", 100.0},
                {"metrics",
                 {{{"name", "u32_gkeys_per_s"}, {"value", u32}, {"unit", "Gkeys/s"}},
                  {{"name", "u64_gkeys_per_s"}, {"value", u64}, {"unit", "Gkeys/s"}}}},
                {"primary", {{"name", "u32_gkeys_per_s"}, {"value", u32}, {"unit", "Gkeys/s"}}},
                {"details", json::object()}};
  };
  report["selftest"] = {
      {"ran", true},
      {"skipped_reason", nullptr},
      {"level", "quick"},
      {"status", "pass"},
      {"wall_ms", 500.0},
      {"module", nullptr},
      {"score", {{"value", 96.0}, {"correctness_passed", true}, {"components", json::array()}}},
      {"tests",
       {sort(0, 42.4, 16.3),
        sort(1, 28.0, 15.0),
        {{"key", "ipc"},
         {"device", 0},
         {"description", "IPC"},
         {"status", "skip"},
         {"reason", "no second process allowed"},
         {"wall_ms", 1.0},
         {"metrics", json::array()},
         {"primary", nullptr},
         {"details", json::object()}}}}};
  return report;
}

Outcome evaluate_one(const json& report, const std::string& spec) {
  const auto requirement = parse_requirement(spec);
  REQUIRE_MESSAGE(requirement, spec);
  const auto outcomes = evaluate_policy(report, {*requirement});
  REQUIRE(outcomes.size() == 1);
  return outcomes.front();
}

void check_met(const json& report, const std::string& spec, bool met, const std::string& detail_part = {}) {
  const auto outcome = evaluate_one(report, spec);
  CHECK_MESSAGE(outcome.met == met, spec << ": " << outcome.detail);
  CHECK_MESSAGE(outcome.detail.find(detail_part) != std::string::npos, spec << ": " << outcome.detail);
}

} // namespace

TEST_CASE("policy: component presence and versions use what CUDA Python loads") {
  const auto report = h200_report_with_sort_figures();
  check_met(report, "nvrtc>=12.4", true, "nvrtc 13.0.88 (CUDA Python, site-packages");
  check_met(report, "nvrtc>=13.1", false, "does not satisfy >= 13.1");
  check_met(report, "nvrtc==13.0", true);
  check_met(report, "cccl", true, "cccl 3.0.1 found");
  check_met(report, "cccl>=3", true);
  check_met(report, "nvJitLink<13", false);
  auto missing = report;
  for (auto& component : missing["components"]) {
    if (component["name"] == "cudnn") {
      component["status"] = "not_found";
      component["selected"] = nullptr;
      component["loader"] = nullptr;
    }
  }
  check_met(missing, "cudnn", false, "cudnn was not found (status not_found)");
  check_met(missing, "cudnn>=9", false, "not found");
}

TEST_CASE("policy: the driver version comes from NVML, else from libcuda's file name") {
  auto report = h200_report_with_sort_figures();
  check_met(report, "driver>=580", true, "driver (NVML) 580.159.04");
  check_met(report, "driver>=590", false, "does not satisfy >= 590");
  check_met(report, "driver.cuda>=13.0", true, "13.0");
  check_met(report, "driver.cuda>=13.1", false);
  report["verification"]["steps"] = json::array();
  check_met(report, "driver>=580", true, "driver (libcuda file name) 580.159.04");
  check_met(report, "driver.cuda>=12", false, "unknown");
}

TEST_CASE("policy: self-test figures are checked on every device") {
  const auto report = h200_report_with_sort_figures();
  check_met(report, "selftest.sort>=20Gkeys", true, "sort on GPU 1: u32_gkeys_per_s 28 Gkeys/s");
  check_met(report, "selftest.sort>=30Gkeys", false,
            "sort on GPU 1: u32_gkeys_per_s 28 Gkeys/s does not satisfy");
  check_met(report, "selftest.sort.u64_gkeys_per_s>=10", true);
  check_met(report, "selftest.sort.u64_gkeys_per_s>=16", false, "GPU 1");
  check_met(report, "selftest.sort.no_such_metric>=1", false, "no figure named no_such_metric");
  check_met(report, "selftest.sort>=20GB/s", false, "no figure in GB/s");
  check_met(report, "selftest.ipc", false, "ipc on GPU 0: skip (no second process allowed)");
  check_met(report, "selftest.reduce>=1", false, "no 'reduce' result");
  check_met(report, "selftest", true, "self-test pass");
  check_met(report, "selftest.score>=90", true, "score 96");
  check_met(report, "selftest.score>=99", false);

  auto not_run = report;
  not_run["selftest"] = nullptr;
  check_met(not_run, "selftest.sort>=1", false, "the self-test did not run");
}

TEST_CASE("policy: finding counts, and unmet requirements become policy.unmet findings") {
  const auto report = h200_report_with_sort_figures(); // 0 errors, 5 warnings
  check_met(report, "no-errors", true, "0 error findings");
  check_met(report, "no-warnings", false, "5 warning findings, which does not satisfy == 0");
  check_met(report, "findings.warning<=5", true);

  std::vector<Requirement> requirements;
  for (const auto* spec : {"nvrtc>=12.4", "driver>=590", "selftest.sort>=30Gkeys"}) {
    requirements.push_back(*parse_requirement(spec));
  }
  const auto outcomes = evaluate_policy(report, requirements);
  const auto found = unmet_findings(outcomes);
  REQUIRE(found.size() == 2);
  CHECK(found[0].id == "policy.unmet");
  CHECK(found[0].severity == cudadiag::findings::Severity::error);
  CHECK(found[0].message.find("requirement 'driver>=590' is not met: driver (NVML) 580.159.04") !=
        std::string::npos);
  CHECK(found[0].components == std::vector<std::string>{"cuda"});
  CHECK(found[0].evidence.at("requirement") == "driver>=590");
  CHECK_FALSE(found[0].remedy.empty());

  const auto document = cudadiag::report::policy_to_json({{"--require"}, outcomes}, "error");
  CHECK(document["requirements"].size() == 3);
  CHECK(document["requirements"][0]["met"] == true);
  CHECK(document["requirements"][1]["met"] == false);
}

TEST_CASE("policy: gpu.idle holds only when NVML could list the GPU's processes and none was another's") {
  auto report = h200_report_with_sort_figures();
  // No test says who else used the GPU: not known to be idle.
  check_met(report, "gpu.idle", false, "could not list");
  report["selftest"]["tests"][0]["details"]["busy"] = {
      {"known", true}, {"unknown_reason", nullptr}, {"others", json::array()}, {"utilization_before_pct", 0}};
  check_met(report, "gpu.idle", true, "no other process");
  report["findings"].push_back(
      {{"id", "gpu.busy"},
       {"severity", "info"},
       {"message", "GPU 0 was used by 1 other process while the self-test ran: pid 4242"},
       {"remedy", ""},
       {"components", json::array()},
       {"evidence", json::object()}});
  check_met(report, "gpu.idle", false, "pid 4242");
  report["selftest"] = nullptr;
  check_met(report, "gpu.idle", false, "did not run");
  CHECK_FALSE(parse_requirement("gpu.idle>=1"));
}
