#include "report/junit_report.hpp"

#include "core/json_fields.hpp"
#include "discovery/discovery.hpp"
#include "findings/findings.hpp"
#include "report/output_formats.hpp"
#include "report/report_document.hpp"
#include "selftest/test_status.hpp"

#include <vector>

namespace cudadiag::report {
namespace {

using json_fields::string_or;
using nlohmann::json;

enum class Outcome { passed, failure, error, skipped };

struct TestCase {
  std::string name;
  Outcome outcome = Outcome::passed;
  std::string message; // the failure/error/skipped message attribute
  std::string type;    // the failure type attribute (a finding id)
  std::string body;    // text inside the failure/error element
  std::string out;     // <system-out>
  double seconds = 0;
};

struct Suite {
  std::string name;
  std::vector<TestCase> cases;
  [[nodiscard]] int count(Outcome outcome) const {
    int total = 0;
    for (const auto& test : cases) {
      total += test.outcome == outcome ? 1 : 0;
    }
    return total;
  }
  [[nodiscard]] double seconds() const {
    double total = 0;
    for (const auto& test : cases) {
      total += test.seconds;
    }
    return total;
  }
};

const json& array_at(const json& object, std::string_view key) {
  static const json empty = json::array();
  if (!object.is_object()) {
    return empty;
  }
  const auto it = object.find(key);
  return it != object.end() && it->is_array() ? *it : empty;
}

bool fails(std::string_view severity, FailOn fail_on) {
  const auto parsed = findings::parse_severity(severity);
  return parsed == findings::Severity::error ||
         (parsed == findings::Severity::warning && fail_on == FailOn::warning);
}

bool names_component(const json& finding, std::string_view name) {
  for (const auto& entry : array_at(finding, "components")) {
    if (entry.is_string() && entry.get<std::string>() == name) {
      return true;
    }
  }
  return false;
}

std::string answer_line(std::string_view label, const json& component, std::string_view key) {
  const auto it = component.find(key);
  if (it == component.end() || !it->is_object()) {
    return std::string(label) + ": none\n";
  }
  return std::string(label) + ": " + display(*it, "version", "version unknown") + " via " +
         display(*it, "found_via", "?") + " at " + display(*it, "path", "?") + "\n";
}

Suite components_suite(const json& report, FailOn fail_on) {
  Suite suite{"cudadiag.components", {}};
  for (const auto& component : array_at(report, "components")) {
    const auto name = string_or(component, "name", "?");
    const auto kind = string_or(component, "kind");
    const auto status = string_or(component, "status", "?");
    TestCase test;
    test.name = name;
    test.name += kind == "dynamic_lib" || kind.empty() ? "" : " (" + kind + ")";
    test.out = "status: " + status + "\n";
    test.out += answer_line("CUDA Python loads", component, "selected");
    test.out += answer_line("native loader loads", component, "loader");
    if (const auto* step = kind == "dynamic_lib" ? verification_step(report, name) : nullptr) {
      test.out += "verification: " + display(*step, "status", "?") + "\n";
      test.seconds = static_cast<double>(json_fields::integer(*step, "elapsed_ms").value_or(0)) / 1000.0;
    }
    for (const auto& finding : array_at(report, "findings")) {
      const auto severity = string_or(finding, "severity");
      if (!names_component(finding, name) || !fails(severity, fail_on)) {
        continue;
      }
      test.outcome = Outcome::failure;
      test.type = test.type.empty() ? string_or(finding, "id") : test.type;
      test.message += (test.message.empty() ? "" : "; ") + string_or(finding, "id");
      test.body += severity + " " + string_or(finding, "id") + ": " + string_or(finding, "message") + "\n";
    }
    const auto found = discovery::parse_component_status(status);
    if (test.outcome == Outcome::passed && found == discovery::ComponentStatus::error) {
      test.outcome = Outcome::failure;
      test.message = "discovery failed for " + name;
    } else if (test.outcome == Outcome::passed && found != discovery::ComponentStatus::found) {
      test.outcome = Outcome::skipped;
      test.message = "not found";
    }
    suite.cases.push_back(std::move(test));
  }
  return suite;
}

Suite findings_suite(const json& report, FailOn fail_on) {
  Suite suite{"cudadiag.findings", {}};
  for (const auto& finding : array_at(report, "findings")) {
    TestCase test;
    const auto id = string_or(finding, "id", "?");
    std::string names;
    for (const auto& entry : array_at(finding, "components")) {
      names += (names.empty() ? "" : ", ") + (entry.is_string() ? entry.get<std::string>() : entry.dump());
    }
    const auto severity = string_or(finding, "severity", "info");
    test.name = id;
    test.name += names.empty() ? "" : " [" + names + "]";
    std::string text = severity + ": " + string_or(finding, "message");
    text += "\nremedy: " + string_or(finding, "remedy") + "\n";
    if (fails(severity, fail_on)) {
      test.outcome = Outcome::failure;
      test.type = id;
      test.message = string_or(finding, "message");
      test.body = text;
    } else {
      test.out = text;
    }
    suite.cases.push_back(std::move(test));
  }
  return suite;
}

Suite selftest_suite(const json& report) {
  Suite suite{"cudadiag.selftest", {}};
  const auto& tests = selftest_tests(report);
  if (tests.empty()) {
    const auto selftest = report.is_object() ? report.value("selftest", json()) : json();
    TestCase test;
    test.name = "selftest";
    test.outcome = Outcome::skipped;
    test.message = selftest.is_object() ? "not run: " + display(selftest, "skipped_reason", "no tests ran")
                                        : "the self-test did not run";
    suite.cases.push_back(std::move(test));
    return suite;
  }
  for (const auto& entry : tests) {
    TestCase test;
    const auto device = display(entry, "device");
    test.name = display(entry, "key", "?") + (device.empty() ? "" : " (device " + device + ")");
    test.seconds = entry.contains("wall_ms") && entry["wall_ms"].is_number()
                       ? entry["wall_ms"].get<double>() / 1000.0
                       : 0;
    for (const auto& metric : array_at(entry, "metrics")) {
      test.out += string_or(metric, "name") + " = " + format_metric(metric) + "\n";
    }
    const auto reason = display(entry, "reason", display(entry, "status", "?"));
    const auto status = selftest::parse_test_status(display(entry, "status", "?"));
    if (status == selftest::TestStatus::fail) {
      test.outcome = Outcome::failure;
      test.message = reason;
      test.body = display(entry, "description") + "\n" + reason + "\n";
    } else if (status == selftest::TestStatus::skip) {
      test.outcome = Outcome::skipped;
      test.message = reason;
    } else if (status != selftest::TestStatus::pass) {
      test.outcome = Outcome::error;
      test.message = reason;
      test.body = display(entry, "description") + "\n" + reason + "\n";
    }
    suite.cases.push_back(std::move(test));
  }
  return suite;
}

Suite policy_suite(const json& policy) {
  Suite suite{"cudadiag.policy", {}};
  for (const auto& requirement : array_at(policy, "requirements")) {
    TestCase test;
    test.name = display(requirement, "spec", "?");
    if (!json_fields::bool_or(requirement, "met", false)) {
      test.outcome = Outcome::failure;
      test.type = "policy.unmet";
      test.message = display(requirement, "detail", "requirement not met");
      test.body = test.message + "\n";
    } else {
      test.out = display(requirement, "detail") + "\n";
    }
    suite.cases.push_back(std::move(test));
  }
  return suite;
}

std::string seconds_text(double seconds) {
  return format_number(seconds < 0 ? 0 : seconds);
}

void append_case(std::string& out, const std::string& suite_name, const TestCase& test) {
  out += "    <testcase name=\"" + xml_escape(test.name) + "\" classname=\"" + xml_escape(suite_name) +
         "\" time=\"" + seconds_text(test.seconds) + "\"";
  if (test.outcome == Outcome::passed && test.out.empty()) {
    out += "/>\n";
    return;
  }
  out += ">\n";
  switch (test.outcome) {
  case Outcome::passed: break;
  case Outcome::skipped: out += "      <skipped message=\"" + xml_escape(test.message) + "\"/>\n"; break;
  case Outcome::failure:
  case Outcome::error: {
    const std::string element = test.outcome == Outcome::failure ? "failure" : "error";
    out += "      <" + element + " message=\"" + xml_escape(test.message) + "\"";
    if (!test.type.empty()) {
      out += " type=\"" + xml_escape(test.type) + "\"";
    }
    out += ">" + xml_escape(test.body) + "</" + element + ">\n";
    break;
  }
  }
  if (!test.out.empty()) {
    out += "      <system-out>" + xml_escape(test.out) + "</system-out>\n";
  }
  out += "    </testcase>\n";
}

} // namespace

std::string xml_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&apos;"; break;
    case '\n': out += "&#10;"; break; // kept through attribute-value normalisation
    case '\t': out += "&#9;"; break;
    default:
      if (byte < 0x20 || byte == 0x7f) {
        constexpr std::string_view k_hex = "0123456789abcdef";
        out += "\\x";
        out += k_hex[byte >> 4U];
        out += k_hex[byte & 0x0fU];
      } else {
        out += c;
      }
    }
  }
  return out;
}

std::string render_junit(const json& report, FailOn fail_on) {
  std::vector<Suite> suites = {components_suite(report, fail_on), findings_suite(report, fail_on),
                               selftest_suite(report)};
  if (report.is_object() && report.contains("policy") && report["policy"].is_object()) {
    suites.push_back(policy_suite(report["policy"]));
  }
  int tests = 0;
  int failures = 0;
  int errors = 0;
  int skipped = 0;
  double seconds = 0;
  for (const auto& suite : suites) {
    tests += static_cast<int>(suite.cases.size());
    failures += suite.count(Outcome::failure);
    errors += suite.count(Outcome::error);
    skipped += suite.count(Outcome::skipped);
    seconds += suite.seconds();
  }
  const auto hostname =
      display(report.is_object() ? report.value("host", json::object()) : json::object(), "hostname");
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += "<testsuites name=\"cudadiag\" tests=\"" + std::to_string(tests) + "\" failures=\"" +
         std::to_string(failures) + "\" errors=\"" + std::to_string(errors) + "\" skipped=\"" +
         std::to_string(skipped) + "\" time=\"" + seconds_text(seconds) + "\">\n";
  for (const auto& suite : suites) {
    out += "  <testsuite name=\"" + xml_escape(suite.name) + "\" tests=\"" +
           std::to_string(suite.cases.size()) + "\" failures=\"" +
           std::to_string(suite.count(Outcome::failure)) + "\" errors=\"" +
           std::to_string(suite.count(Outcome::error)) + "\" skipped=\"" +
           std::to_string(suite.count(Outcome::skipped)) + "\" time=\"" + seconds_text(suite.seconds()) +
           "\" hostname=\"" + xml_escape(hostname) + "\">\n";
    for (const auto& test : suite.cases) {
      append_case(out, suite.name, test);
    }
    out += "  </testsuite>\n";
  }
  out += "</testsuites>\n";
  return out;
}

} // namespace cudadiag::report
