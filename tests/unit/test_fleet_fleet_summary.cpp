// Fleet grouping: majority, minority groups and what differs, nodes with errors first, self-test
// spread per GPU model, exit codes; and the host-list folding.
#include "core/filesystem.hpp"
#include "fleet/fleet_render.hpp"
#include "fleet/fleet_summary.hpp"
#include "fleet/report_reader.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

namespace {

using cudadiag::fleet::FleetBuilder;
using cudadiag::fleet::node_facts;
using nlohmann::json;

json example() {
  static const auto text =
      cudadiag::fs::read_file_prefix(CUDADIAG_SOURCE_DIR "/docs/examples/h200-selftest-quick.json", 1U << 24U)
          .value();
  return json::parse(text);
}

json with_driver(json report, const std::string& version) {
  for (auto& step : report["verification"]["steps"]) {
    if (step["component"] == "nvml") {
      step["result"]["driver_version"] = version;
    }
  }
  return report;
}

void add(FleetBuilder& builder, json report, const std::string& host) {
  report["host"]["hostname"] = host;
  const auto text = report.dump();
  auto pruned = cudadiag::fleet::read_pruned_report(text);
  REQUIRE(pruned);
  builder.add(node_facts(*pruned, host + ".json"), text);
}

} // namespace

TEST_CASE("fleet: the pruned report keeps what the fingerprint reads") {
  const auto text = example().dump();
  const auto pruned = cudadiag::fleet::read_pruned_report(text);
  REQUIRE(pruned);
  CHECK(pruned->dump().size() < text.size() / 3);
  const auto whole = node_facts(example(), "x");
  const auto small = node_facts(*pruned, "x");
  CHECK(cudadiag::fleet::fingerprint_key(whole.fingerprint) ==
        cudadiag::fleet::fingerprint_key(small.fingerprint));
  CHECK(whole.figures.size() == small.figures.size());
  CHECK_FALSE(small.figures.empty());
  CHECK_FALSE(cudadiag::fleet::read_pruned_report("{\"a\": 1}"));
  CHECK(cudadiag::fleet::read_pruned_report("{\"a\": ").error().message.find("not JSON") == 0);
}

TEST_CASE("fleet: majority, the odd node and what differs") {
  FleetBuilder builder;
  for (const auto* host : {"node01", "node02", "node03"}) {
    add(builder, example(), host);
  }
  add(builder, with_driver(example(), "575.57.08"), "node04");
  const auto summary = std::move(builder).finish({});
  REQUIRE(summary.groups.size() == 2);
  CHECK(summary.groups[0].majority);
  CHECK(summary.groups[0].members.size() == 3);
  const auto& odd = summary.groups[1];
  REQUIRE(odd.members.size() == 1);
  CHECK(summary.nodes[odd.members[0]].name == "node04");
  REQUIRE_FALSE(odd.differs.empty());
  CHECK(odd.differs[0].field == "driver version");
  CHECK(odd.differs[0].majority == "580.159.04");
  CHECK(odd.differs[0].value == "575.57.08");
  CHECK(odd.differs[0].core);
  CHECK(odd.detailed);
  REQUIRE_FALSE(odd.details.empty());
  CHECK(odd.details[0].subject == "driver");
  CHECK(summary.exit_code == 1);
  CHECK_FALSE(summary.uniform);
  const auto doc = cudadiag::fleet::fleet_to_json(summary);
  CHECK(doc["groups"][0]["hostlist"] == "node[01-03]");
  CHECK(doc["summary"]["exit_code"] == 1);
}

TEST_CASE("fleet: a uniform healthy fleet exits 0, one slow GPU is flagged") {
  FleetBuilder builder;
  for (int i = 0; i < 5; ++i) {
    auto report = example();
    if (i == 4) {
      for (auto& test : report["selftest"]["tests"]) {
        if (test["key"] == "reduce") {
          test["primary"]["value"] = test["primary"]["value"].get<double>() * 0.5;
        }
      }
    }
    add(builder, report, "gpu" + std::to_string(i));
  }
  const auto summary = std::move(builder).finish({});
  CHECK(summary.groups.size() == 1);
  CHECK(summary.uniform);
  CHECK(summary.exit_code == 0);
  bool flagged = false;
  for (const auto& spread : summary.figures) {
    CHECK(spread.gpu_model == "NVIDIA H200");
    if (spread.metric == "reduce.f32_gbps") {
      REQUIRE(spread.outliers.size() == 1);
      CHECK(summary.nodes[spread.outliers[0].node].name == "gpu4");
      CHECK(spread.outliers[0].percent_of_median == doctest::Approx(50.0));
      flagged = true;
    } else {
      CHECK(spread.outliers.empty());
    }
  }
  CHECK(flagged);
}

TEST_CASE("fleet: nodes with errors come first and fail the fleet") {
  FleetBuilder builder;
  add(builder, example(), "ok1");
  auto broken = example();
  broken["findings"].push_back({{"id", "driver.init_failed"}, {"severity", "error"}, {"message", "m"}});
  broken["summary"]["status"] = "error";
  add(builder, broken, "bad1");
  add(builder, example(), "ok2");
  builder.add_problem({"stdin: task 3", 7, "not a report"});
  const auto summary = std::move(builder).finish({});
  CHECK(summary.nodes[summary.node_order[0]].name == "bad1");
  CHECK(summary.error_nodes == 1);
  CHECK(summary.exit_code == 1);
  CHECK(summary.reasons.size() == 3); // errors, core drift (error findings), an unreadable input
}

TEST_CASE("fleet: nodes are counted by the most invasive repair their findings ask for") {
  using cudadiag::findings::Repair;
  FleetBuilder builder;
  add(builder, example(), "ok1");
  auto reboot = example();
  reboot["findings"].push_back(
      {{"id", "gpu.xid"}, {"severity", "error"}, {"message", "m"}, {"repair", "reboot"}});
  reboot["findings"].push_back({{"id", "lib.multiple_versions"},
                                {"severity", "warning"},
                                {"message", "m"},
                                {"repair", "fix_environment"}});
  reboot["summary"]["status"] = "error";
  add(builder, reboot, "bad1");
  auto info_only = example();
  // An info finding's class does not count, and neither does a class of a later release.
  info_only["findings"].push_back(
      {{"id", "gpu.busy"}, {"severity", "info"}, {"message", "m"}, {"repair", "reset_gpu"}});
  info_only["findings"].push_back(
      {{"id", "x.later"}, {"severity", "warning"}, {"message", "m"}, {"repair", "replace_node"}});
  add(builder, info_only, "ok2");
  const auto summary = std::move(builder).finish({});
  CHECK(summary.nodes[summary.node_order[0]].repair == Repair::reboot);
  CHECK(summary.repair_nodes.at(Repair::reboot) == 1);
  CHECK(summary.repair_nodes.at(Repair::none) == 2);
  CHECK(summary.repair_nodes.at(Repair::reset_gpu) == 0);
  CHECK(summary.repair_nodes.size() == cudadiag::findings::k_repairs.size());
  const auto text = cudadiag::fleet::render_fleet_text(summary, {});
  CHECK(text.find("Repairs: 1 node reboot\n") != std::string::npos);
  CHECK(text.find("[reboot]") != std::string::npos);
  const auto doc = cudadiag::fleet::fleet_to_json(summary);
  CHECK(doc["counts"]["repairs"]["reboot"] == 1);
  CHECK(doc["counts"]["repairs"]["hardware_inspection"] == 0);
  CHECK(doc["nodes"][0]["repair"] == "reboot");
}

TEST_CASE("fleet: host lists fold numbered names") {
  using cudadiag::fleet::compress_names;
  CHECK(compress_names({"n1", "n2", "n3", "n5"}) == "n[1-3,5]");
  CHECK(compress_names({"gpu-007", "gpu-008", "login", "gpu-010"}) == "gpu-[007-008,010],login");
  CHECK(compress_names({"a"}) == "a");
  CHECK(compress_names({"x9"}) == "x9");
  CHECK(compress_names({"vm", "vm", "vm"}) == "vm (3 reports)");
  CHECK(compress_names({"n1", "n1", "n2"}) == "n[1-2] (3 reports)");
}

TEST_CASE("fleet: a pod's later report replaces its earlier one") {
  FleetBuilder builder;
  auto add_from = [&builder](json report, const std::string& source) {
    const auto text = report.dump();
    auto pruned = cudadiag::fleet::read_pruned_report(text);
    REQUIRE(pruned);
    builder.add(node_facts(*pruned, source), text);
  };
  add_from(with_driver(example(), "575.57.08"), "stdin: pod/cudadiag-a/cudadiag");
  add_from(example(), "stdin: pod/cudadiag-b/cudadiag");
  add_from(example(), "stdin: pod/cudadiag-a/cudadiag"); // the DaemonSet's next run, driver updated
  const auto summary = std::move(builder).finish({});
  CHECK(summary.nodes.size() == 2);
  REQUIRE(summary.groups.size() == 1);
  CHECK(summary.groups[0].members.size() == 2);
  CHECK(summary.uniform);
}

TEST_CASE("fleet: a node is named by host.node_name when the report has one") {
  auto report = example();
  report["host"]["hostname"] = "cudadiag-x7f2k"; // a DaemonSet pod's hostname
  report["host"]["node_name"] = "gpu-node-17";
  CHECK(node_facts(report, "stdin: pod/cudadiag-x7f2k/cudadiag").name == "gpu-node-17");
  auto pruned = cudadiag::fleet::read_pruned_report(report.dump());
  REQUIRE(pruned);
  CHECK(node_facts(*pruned, "x").name == "gpu-node-17");
  report["host"]["node_name"] = nullptr; // a node without one: the hostname
  CHECK(node_facts(report, "x").name == "cudadiag-x7f2k");
  report["host"].erase("node_name"); // a report of an earlier cudadiag
  CHECK(node_facts(report, "x").name == "cudadiag-x7f2k");
}
