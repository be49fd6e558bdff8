// The fleet's fast report parser: bounded like every reader of outside input, and pruned.
#include "fleet/report_reader.hpp"

#include <doctest/doctest.h>

#include <string>

using cudadiag::fleet::read_pruned_report;

TEST_CASE("fleet reader: hostile documents are errors, not crashes") {
  CHECK_FALSE(read_pruned_report(""));
  CHECK_FALSE(read_pruned_report(std::string(200000, '[') + std::string(200000, ']')));
  CHECK_FALSE(read_pruned_report(std::string(129, '[') + std::string(129, ']')));
  CHECK_FALSE(read_pruned_report(R"({"schema_version": 1, "tool": {"name": "cudadiag"}, "x": 1e400})"));
  CHECK_FALSE(read_pruned_report("{\"schema_version\": 1, \"tool\": {\"name\": \"cudadiag\"}, \"s\": \"\xff\"}"));
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
