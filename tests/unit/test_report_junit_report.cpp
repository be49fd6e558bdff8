// JUnit XML: the suites and their counts, fail-on semantics, and XML-safe text.
#include "checks.hpp"
#include "core/filesystem.hpp"
#include "report/junit_report.hpp"
#include "report/output_formats.hpp"

#include <doctest/doctest.h>

using cudadiag::testing::h200_example_report;

namespace {

using cudadiag::report::FailOn;
using cudadiag::report::render_junit;
using nlohmann::json;

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

// The attribute `name` of the first element that starts with `element_start`.
std::string attribute(const std::string& xml, const std::string& element_start, const std::string& name) {
  const auto element = xml.find(element_start);
  REQUIRE(element != std::string::npos);
  const auto key = xml.find(" " + name + "=\"", element);
  REQUIRE(key != std::string::npos);
  const auto start = key + name.size() + 3;
  return xml.substr(start, xml.find('"', start) - start);
}

} // namespace

TEST_CASE("junit: one testcase per component, finding and self-test result, warnings pass unless --fail-on "
          "warning") {
  const auto report =
      h200_example_report(); // 21 components, 14 findings (0 errors, 5 warnings), no self-test
  const auto xml = render_junit(report, FailOn::error);
  CHECK(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites", 0) == 0);
  CHECK(attribute(xml, "<testsuite name=\"cudadiag.components\"", "tests") == "21");
  CHECK(attribute(xml, "<testsuite name=\"cudadiag.components\"", "failures") == "0");
  CHECK(attribute(xml, "<testsuite name=\"cudadiag.findings\"", "tests") == "14");
  CHECK(attribute(xml, "<testsuite name=\"cudadiag.findings\"", "failures") == "0");
  CHECK(attribute(xml, "<testsuite name=\"cudadiag.selftest\"", "skipped") == "1");
  CHECK(attribute(xml, "<testsuites", "tests") == "36");
  CHECK(count(xml, "<testcase ") == 36);
  CHECK(xml.find("<testsuite name=\"cudadiag.policy\"") == std::string::npos);

  const auto strict = render_junit(report, FailOn::warning);
  CHECK(attribute(strict, "<testsuite name=\"cudadiag.findings\"", "failures") == "5");
  CHECK(attribute(strict, "<testsuites", "failures") ==
        std::to_string(5 +
                       std::stoi(attribute(strict, "<testsuite name=\"cudadiag.components\"", "failures"))));
}

TEST_CASE("junit: errors fail their finding and the components they name, self-test and policy map to JUnit "
          "states") {
  auto report = h200_example_report();
  report["findings"].push_back({{"id", "driver.stub"},
                                {"severity", "error"},
                                {"message", "stub <libcuda> & co"},
                                {"remedy", "fix"},
                                {"components", {"cuda"}},
                                {"evidence", json::object()}});
  report["selftest"] = {
      {"ran", true},
      {"status", "fail"},
      {"level", "quick"},
      {"tests",
       {{{"key", "jit"},
         {"device", 0},
         {"status", "pass"},
         {"wall_ms", 1500.0},
         {"metrics", {{{"name", "compile_ms"}, {"value", 120.5}, {"unit", "ms"}}}}},
        {{"key", "sort"}, {"device", 0}, {"status", "fail"}, {"reason", "unsorted"}},
        {{"key", "ipc"}, {"device", 0}, {"status", "error"}, {"reason", "worker crashed"}},
        {{"key", "green_ctx"}, {"device", 0}, {"status", "skip"}, {"reason", "driver too old"}}}}};
  report["policy"] = {{"requirements",
                       {{{"spec", "nvrtc>=12.4"}, {"met", true}, {"detail", "13.0.88"}},
                        {{"spec", "driver>=590"}, {"met", false}, {"detail", "580.159.04"}}}}};
  const auto xml = render_junit(report, FailOn::error);
  CHECK(xml.find("<testcase name=\"cuda\" classname=\"cudadiag.components\"") != std::string::npos);
  CHECK(xml.find("<failure message=\"driver.stub\" type=\"driver.stub\">error driver.stub: stub "
                 "&lt;libcuda&gt; &amp; co") != std::string::npos);
  CHECK(attribute(xml, "<testsuite name=\"cudadiag.selftest\"", "tests") == "4");
  CHECK(attribute(xml, "<testsuite name=\"cudadiag.selftest\"", "failures") == "1");
  CHECK(attribute(xml, "<testsuite name=\"cudadiag.selftest\"", "errors") == "1");
  CHECK(attribute(xml, "<testsuite name=\"cudadiag.selftest\"", "skipped") == "1");
  CHECK(attribute(xml, "<testcase name=\"jit (device 0)\"", "time") == "1.5");
  CHECK(xml.find("compile_ms = 120.5 ms") != std::string::npos);
  CHECK(attribute(xml, "<testsuite name=\"cudadiag.policy\"", "failures") == "1");
  CHECK(xml.find("<testcase name=\"driver&gt;=590\" classname=\"cudadiag.policy\"") != std::string::npos);
}

TEST_CASE("junit: XML escaping of markup, quotes and characters XML 1.0 forbids") {
  using cudadiag::report::xml_escape;
  CHECK(xml_escape("a<b>&\"c'") == "a&lt;b&gt;&amp;&quot;c&apos;");
  CHECK(xml_escape("line\nnext\ttab") == "line&#10;next&#9;tab");
  CHECK(xml_escape(std::string("bell\x07 esc\x1b", 10)) == "bell\\x07 esc\\x1b");
  CHECK(xml_escape("caf\xc3\xa9") == "caf\xc3\xa9");
}
