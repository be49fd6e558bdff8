// Report diffs over pairs made from the H200 host's report: what counts as a difference, what is
// ignored, and the "most likely cause first" order.
#include "checks.hpp"
#include "core/filesystem.hpp"
#include "diff/diff_render.hpp"
#include "diff/report_diff.hpp"

#include <doctest/doctest.h>

#include <algorithm>

namespace {

using cudadiag::diff::Area;
using cudadiag::diff::diff_reports;
using cudadiag::diff::Difference;
using nlohmann::json;

json h200_report_with_selftest() {
  auto report = cudadiag::testing::h200_example_report();
  report["selftest"] = {
      {"ran", true},
      {"skipped_reason", nullptr},
      {"level", "quick"},
      {"status", "pass"},
      {"wall_ms", 812.5},
      {"module", nullptr},
      {"score", {{"value", 97.1}, {"correctness_passed", true}, {"components", json::array()}}},
      {"tests",
       json::array(
           {{{"key", "sort"},
             {"device", 0},
             {"description", "CUB radix sort"},
             {"status", "pass"},
             {"reason", nullptr},
             {"wall_ms", 120.0},
             {"metrics", json::array({{{"name", "u32_gkeys_per_s"}, {"value", 42.4}, {"unit", "Gkeys/s"}},
                                      {{"name", "u64_gkeys_per_s"}, {"value", 16.3}, {"unit", "Gkeys/s"}}})},
             {"primary", {{"name", "u32_gkeys_per_s"}, {"value", 42.4}, {"unit", "Gkeys/s"}}},
             {"details", json::object()}}})}};
  return report;
}

json& component(json& report, const std::string& name, const std::string& kind = "dynamic_lib") {
  for (auto& entry : report["components"]) {
    if (entry["name"] == name && entry["kind"] == kind) {
      return entry;
    }
  }
  FAIL("no component " << name);
  throw std::logic_error("unreachable");
}

json& verification_result(json& report, const std::string& name) {
  for (auto& step : report["verification"]["steps"]) {
    if (step["component"] == name) {
      return step["result"];
    }
  }
  FAIL("no verification step " << name);
  throw std::logic_error("unreachable");
}

bool has(const std::vector<Difference>& differences, Area area, const std::string& subject,
         const std::string& aspect) {
  return std::any_of(differences.begin(), differences.end(), [&](const Difference& d) {
    return d.area == area && d.subject == subject && d.aspect == aspect;
  });
}

std::size_t index_of(const std::vector<Difference>& differences, Area area, const std::string& subject,
                     const std::string& aspect) {
  const auto it = std::find_if(differences.begin(), differences.end(), [&](const Difference& d) {
    return d.area == area && d.subject == subject && d.aspect == aspect;
  });
  REQUIRE(it != differences.end());
  return static_cast<std::size_t>(it - differences.begin());
}

} // namespace

TEST_CASE("diff: a report is equivalent to itself and to a rerun that differs only in volatile fields") {
  const auto a = h200_report_with_selftest();
  CHECK(diff_reports(a, a).equivalent());
  auto b = a;
  b["host"]["hostname"] = "another-name";
  b["environment"]["cwd"] = "/elsewhere";
  b["environment"]["uid"] = 1000;
  b["verification"]["steps"][0]["elapsed_ms"] = 999;
  b["components"][0]["trace"] = json::array({"different trace"});
  b["selftest"]["wall_ms"] = 900;
  b["selftest"]["tests"][0]["metrics"][0]["value"] = 40.9; // -3.5%: within 10%
  const auto result = diff_reports(a, b);
  CHECK(result.equivalent());
  CHECK(cudadiag::diff::render_diff_text(result, {}).find("equivalent") != std::string::npos);
}

TEST_CASE("diff: a changed driver comes first, before the components and findings it explains") {
  const auto a = h200_report_with_selftest();
  auto b = a;
  verification_result(b, "nvml")["driver_version"] = "575.51.03";
  verification_result(b, "cuda")["driver_version"] = 12090;
  component(b, "cuda")["loader"]["version"] = "575.51.03";
  component(b, "cuda")["loader"]["realpath"] = "/usr/lib/x86_64-linux-gnu/libcuda.so.575.51.03";
  b["findings"].push_back({{"id", "driver.too_old"},
                           {"severity", "error"},
                           {"message", "driver 575 is older than CUDA 13"},
                           {"remedy", "upgrade"},
                           {"components", {"cuda", "cudart"}},
                           {"evidence", json::object()}});
  const auto result = diff_reports(a, b);
  REQUIRE_FALSE(result.equivalent());
  const auto& d = result.differences;
  CHECK(d.front().area == Area::driver);
  CHECK(d.front().aspect == "version");
  CHECK(d.front().a == "580.159.04");
  CHECK(d.front().b == "575.51.03");
  CHECK(has(d, Area::driver, "driver", "CUDA version (cuDriverGetVersion)"));
  CHECK(index_of(d, Area::components, "cuda", "version (native loader)") <
        index_of(d, Area::findings, "driver.too_old [cuda, cudart]", "only in B"));
  const auto json_form = cudadiag::diff::diff_to_json(result);
  CHECK(json_form["equivalent"] == false);
  CHECK(json_form["differences"][0]["area"] == "driver");
}

TEST_CASE("diff: NVRTC shadowed by an older copy on LD_LIBRARY_PATH") {
  const auto a = h200_report_with_selftest();
  auto b = a;
  auto& loader = component(b, "nvrtc")["loader"];
  loader["path"] = "/opt/old/lib/libnvrtc.so.13";
  loader["realpath"] = "/opt/old/lib/libnvrtc.so.13.0.10";
  loader["version"] = "13.0.10";
  loader["found_via"] = "LD_LIBRARY_PATH";
  b["environment"]["variables"]["LD_LIBRARY_PATH"] = "/opt/old/lib:/usr/local/nvidia/lib64";
  const auto d = diff_reports(a, b).differences;
  const auto version = index_of(d, Area::components, "nvrtc", "version (native loader)");
  const auto via = index_of(d, Area::components, "nvrtc", "found_via (native loader)");
  // The variable that caused it comes first (its new entry, not two whole strings), then the effect.
  const auto variable = index_of(d, Area::environment, "LD_LIBRARY_PATH", "entry added");
  const auto removed = index_of(d, Area::environment, "LD_LIBRARY_PATH", "entry removed");
  CHECK(std::max(variable, removed) == 1); // the two causes, before everything else
  CHECK(d[variable].cause);
  CHECK_FALSE(d[variable].a);
  CHECK(d[variable].b == "/opt/old/lib");
  CHECK(d[removed].a == "/usr/local/nvidia/lib");
  CHECK(variable < version);
  CHECK(version < via);
  CHECK(d[version].a == "13.0.88");
  CHECK(d[version].b == "13.0.10");
  // The way it was found and the file it is, on one line.
  CHECK(d[via].b == "LD_LIBRARY_PATH (/opt/old/lib/libnvrtc.so.13.0.10)");
  CHECK_FALSE(has(d, Area::components, "nvrtc", "file (native loader)"));
  CHECK_FALSE(has(d, Area::components, "nvrtc", "version (CUDA Python)")); // the wheel still wins for Python
}

TEST_CASE("diff: one finding added, matched by id and components rather than by message") {
  const auto a = h200_report_with_selftest();
  auto b = a;
  for (auto& finding : b["findings"]) {
    finding["message"] = finding["message"].get<std::string>() + " (paths differ on this machine)";
  }
  b["findings"].push_back({{"id", "env.cuda_path_home_differ"},
                           {"severity", "warning"},
                           {"message", "they differ"},
                           {"remedy", "align them"},
                           {"components", json::array()},
                           {"evidence", json::object()}});
  const auto d = diff_reports(a, b).differences;
  REQUIRE(d.size() == 1);
  CHECK(d[0].area == Area::findings);
  CHECK(d[0].subject == "env.cuda_path_home_differ");
  CHECK(d[0].aspect == "only in B");
  CHECK_FALSE(d[0].a);
  CHECK(d[0].b == "warning: they differ");
}

TEST_CASE("diff: self-test figures beyond the tolerance, status changes, and the score") {
  const auto a = h200_report_with_selftest();
  auto b = a;
  b["selftest"]["tests"][0]["metrics"][1]["value"] = 11.0; // u64: -33%
  b["selftest"]["score"]["value"] = 80.0;
  auto d = diff_reports(a, b).differences;
  REQUIRE(has(d, Area::selftest, "sort (GPU 0)", "u64_gkeys_per_s"));
  const auto& metric = d[index_of(d, Area::selftest, "sort (GPU 0)", "u64_gkeys_per_s")];
  CHECK(metric.a == "16.3 Gkeys/s");
  CHECK(metric.b == "11 Gkeys/s");
  CHECK(metric.note == "-33%");
  CHECK(has(d, Area::selftest, "self-test", "score"));
  CHECK(diff_reports(a, b, {0.5}).differences.empty()); // a 50% tolerance absorbs both

  b = a;
  b["selftest"]["tests"][0]["status"] = "fail";
  b["selftest"]["tests"][0]["reason"] = "keys out of order";
  d = diff_reports(a, b).differences;
  REQUIRE(d.size() == 1);
  CHECK(d[0].aspect == "status");
  CHECK(d[0].b == "fail: keys out of order");

  b = a;
  b["selftest"] = nullptr;
  d = diff_reports(a, b).differences;
  CHECK(d.front().subject == "self-test");
  CHECK(d.front().b == "not run");
}

TEST_CASE("diff: a component found on one side only is one line naming the file") {
  const auto a = h200_report_with_selftest();
  auto b = a;
  auto& cudnn = component(b, "cudnn");
  cudnn["status"] = "not_found";
  cudnn["selected"] = nullptr;
  cudnn["loader"] = nullptr;
  const auto d = diff_reports(a, b).differences;
  const auto status = index_of(d, Area::components, "cudnn", "status");
  CHECK(d[status].a ==
        "found (/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9)");
  CHECK(d[status].b == "not_found");
  CHECK_FALSE(has(d, Area::components, "cudnn", "found (CUDA Python)"));
}

TEST_CASE("diff: a missing GPU ranks before component differences, core components before the rest") {
  const auto a = h200_report_with_selftest();
  auto b = a;
  b["devices"] = json::array();
  component(b, "cudnn")["selected"]["version"] = "9.0.0";
  component(b, "cudart")["selected"]["found_via"] = "conda";
  const auto d = diff_reports(a, b).differences;
  CHECK(d.front().area == Area::devices);
  CHECK(d.front().b == "0");
  // A cuDNN version change weighs like a core component's found_via change; the core one goes first.
  CHECK(index_of(d, Area::components, "cudart", "found_via (CUDA Python)") <
        index_of(d, Area::components, "cudnn", "version (CUDA Python)"));
}
