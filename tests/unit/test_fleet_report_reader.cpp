// The fleet's fast report parser: bounded like every reader of outside input, pruned, and narrowed
// to the members the node facts read.
#include "core/filesystem.hpp"
#include "fleet/node_facts.hpp"
#include "fleet/report_reader.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <string>
#include <vector>

using cudadiag::fleet::read_pruned_report;

TEST_CASE("fleet reader: hostile documents are errors, not crashes") {
  CHECK_FALSE(read_pruned_report(""));
  CHECK_FALSE(read_pruned_report(std::string(200000, '[') + std::string(200000, ']')));
  CHECK_FALSE(read_pruned_report(std::string(129, '[') + std::string(129, ']')));
  CHECK_FALSE(read_pruned_report(R"({"schema_version": 1, "tool": {"name": "cudadiag"}, "x": 1e400})"));
  CHECK_FALSE(
      read_pruned_report("{\"schema_version\": 1, \"tool\": {\"name\": \"cudadiag\"}, \"s\": \"\xff\"}"));
  CHECK_FALSE(read_pruned_report(R"({"schema_version": 1, "tool": {"name": "cudadiag"}} trailing)"));
  const auto other = read_pruned_report(R"({"schema_version": 2, "tool": {"name": "cudadiag"}})");
  REQUIRE_FALSE(other);
  CHECK(other.error().message.find("schema_version 2") != std::string::npos);
}

TEST_CASE("fleet reader: pruned keys go at every depth, the rest stays") {
  const auto report = read_pruned_report(
      R"({"schema_version": 1, "tool": {"name": "cudadiag", "version": "0.1.0"},
          "components": [{"name": "nvrtc", "candidates": [1, 2], "selected": {"version": "13.0.88", "trace": []}}],
          "environment": {"variables": {}}})");
  REQUIRE(report);
  CHECK_FALSE(report->contains("environment"));
  const auto& component = (*report)["components"][0];
  CHECK_FALSE(component.contains("candidates"));
  CHECK(component["selected"]["version"] == "13.0.88");
  CHECK_FALSE(component["selected"].contains("trace"));
  CHECK(cudadiag::fleet::is_pruned_key("candidates"));
  CHECK_FALSE(cudadiag::fleet::is_pruned_key("version"));
}

namespace {

using cudadiag::fleet::NodeFacts;
using nlohmann::json;

// Every member of the facts, as one comparable text.
std::string facts_text(const NodeFacts& facts) {
  std::string out = facts.name + '|' + facts.source + '|' +
                    std::string(facts.status ? cudadiag::report::to_string(*facts.status) : "unknown") + '|' +
                    facts.tool_version + '|';
  for (const auto& list : {facts.errors, facts.warnings}) {
    for (const auto& id : list) {
      out += id + ',';
    }
    out += '|';
  }
  for (const auto& field : facts.fingerprint) {
    out += field.name + '=' + field.value + (field.core ? "*" : "") + ';';
  }
  for (const auto& figure : facts.figures) {
    out += figure.gpu_model + ' ' + figure.metric + ' ' + figure.unit + ' ' + std::to_string(figure.device) +
           ' ' + std::to_string(figure.value) + ';';
  }
  return out;
}

// The example report changed in each member the facts read, one kind of change at a time.
std::vector<json> variants() {
  const auto base = json::parse(
      cudadiag::fs::read_file_prefix(CUDADIAG_SOURCE_DIR "/docs/examples/h200-selftest-quick.json", 1U << 24U)
          .value());
  std::vector<json> out{base};
  auto changed = [&out, &base](auto change) {
    auto report = base;
    change(report);
    out.push_back(std::move(report));
  };
  changed([](json& r) { r["host"]["node_name"] = "k8s-node-7"; });
  changed([](json& r) { r["verification"]["steps"] = json::array(); });
  changed([](json& r) { r["verification"] = nullptr; });
  changed([](json& r) {
    for (auto& component : r["components"]) {
      component["selected"] = nullptr;
      component["loader"]["is_stub"] = true;
    }
  });
  changed([](json& r) { r["components"][0]["selected"] = "not an object"; });
  changed([](json& r) {
    r["findings"].push_back(
        {{"id", "driver.init_failed"}, {"severity", "error"}, {"message", "cuInit failed"}});
  });
  changed([](json& r) { r["devices"].push_back({{"name", 7}, {"nvml", {{"pcie", {{"gen_max", 4}}}}}}); });
  changed([](json& r) { r["selftest"]["tests"][0]["primary"]["value"] = "fast"; });
  changed([](json& r) { r["selftest"]["score"] = {{"value", 12.5}, {"trace", {1, 2}}}; });
  changed([](json& r) { r["summary"] = json::array({1, 2}); });
  return out;
}

} // namespace

TEST_CASE("fleet reader: the fields node_facts reads give the facts of the whole report") {
  for (const auto& report : variants()) {
    const auto text = report.dump();
    const auto fields = cudadiag::fleet::read_fleet_fields(text);
    REQUIRE(fields);
    CHECK(fields->dump().size() < text.size() / 20);
    CHECK(facts_text(cudadiag::fleet::node_facts(*fields, "x")) ==
          facts_text(cudadiag::fleet::node_facts(report, "x")));
    std::string owned = text;
    const auto in_place = cudadiag::fleet::read_fleet_fields_in_place(owned);
    REQUIRE(in_place);
    CHECK(*in_place == *fields);
    CHECK(owned == text);
  }
  CHECK_FALSE(cudadiag::fleet::read_fleet_fields(std::string(129, '[') + std::string(129, ']')));
  CHECK_FALSE(cudadiag::fleet::read_fleet_fields(
      R"({"schema_version": 1, "tool": {"name": "cudadiag"}, "x": 1e400})"));
  CHECK_FALSE(cudadiag::fleet::read_fleet_fields(R"({"schema_version": 1, "tool": {"name": "other"}})"));
  CHECK(cudadiag::fleet::read_fleet_fields(R"({"schema_version": 2, "tool": {"name": "cudadiag"}})")
            .error()
            .message.find("schema_version 2") != std::string::npos);
}
