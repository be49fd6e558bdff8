// The Prometheus textfile rendering: every family with HELP and TYPE, label escaping. (A real
// node_exporter and prometheus_client read it in tests/fleet/test_node_exporter.py.)
#include "core/filesystem.hpp"
#include "report/output_formats.hpp"
#include "report/prometheus_textfile.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

TEST_CASE("prometheus: families and samples of the H200 example") {
  const auto report = nlohmann::json::parse(
      cudadiag::fs::read_file_prefix(CUDADIAG_SOURCE_DIR "/docs/examples/h200-selftest-quick.json", 1U << 24U)
          .value());
  const auto text = cudadiag::report::render_prometheus(report, 1764700000.5);
  for (const auto* family :
       {"cudadiag_up", "cudadiag_findings", "cudadiag_component_info", "cudadiag_selftest_value",
        "cudadiag_selftest_score", "cudadiag_last_run_timestamp_seconds"}) {
    CHECK(text.find(std::string("# HELP ") + family + " ") != std::string::npos);
    CHECK(text.find(std::string("# TYPE ") + family + " gauge\n") != std::string::npos);
  }
  CHECK(text.find("cudadiag_up 1\n") != std::string::npos);
  CHECK(text.find("cudadiag_last_run_timestamp_seconds 1764700000.5\n") != std::string::npos);
  CHECK(
      text.find(
          "cudadiag_component_info{name=\"cuda\",kind=\"dynamic_lib\",version=\"580.159.04\",found_via=\"LD_"
          "LIBRARY_PATH\"} 1\n") != std::string::npos);
  CHECK(
      text.find("cudadiag_selftest_value{device=\"0\",test=\"reduce\",metric=\"f32_gbps\",unit=\"GB/s\"}") !=
      std::string::npos);
  CHECK(text.back() == '\n');
}

TEST_CASE("prometheus: findings carry their repair class - every class is counted") {
  const auto report = nlohmann::json::parse(R"({"findings": [
      {"id": "gpu.xid", "severity": "error", "repair": "reset_gpu"},
      {"id": "gpu.xid", "severity": "error", "repair": "reset_gpu"},
      {"id": "gpu.xid", "severity": "error", "repair": "hardware_inspection"},
      {"id": "lib.multiple_versions", "severity": "warning"}]})");
  const auto text = cudadiag::report::render_prometheus(report, 1);
  CHECK(text.find("cudadiag_findings{id=\"gpu.xid\",severity=\"error\",repair=\"reset_gpu\"} 2\n") !=
        std::string::npos);
  CHECK(
      text.find("cudadiag_findings{id=\"gpu.xid\",severity=\"error\",repair=\"hardware_inspection\"} 1\n") !=
      std::string::npos);
  // A report of an earlier release (no repair) reads as none.
  CHECK(
      text.find("cudadiag_findings{id=\"lib.multiple_versions\",severity=\"warning\",repair=\"none\"} 1\n") !=
      std::string::npos);
  CHECK(text.find("# TYPE cudadiag_repair gauge\n") != std::string::npos);
  CHECK(text.find("cudadiag_repair{repair=\"reset_gpu\"} 2\n") != std::string::npos);
  CHECK(text.find("cudadiag_repair{repair=\"none\"} 1\n") != std::string::npos);
  CHECK(text.find("cudadiag_repair{repair=\"reboot\"} 0\n") != std::string::npos);
}

TEST_CASE("prometheus: label values are escaped") {
  CHECK(cudadiag::report::prometheus_label_value("a\"b\\c\nd") == "a\\\"b\\\\c\\nd");
  CHECK(cudadiag::report::prometheus_label_value("plain 1.2") == "plain 1.2");
}
