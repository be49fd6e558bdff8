#include "report/prometheus_textfile.hpp"

#include "core/json_fields.hpp"
#include "findings/repair.hpp"
#include "report/json_report.hpp"
#include "report/output_formats.hpp"
#include "report/report_document.hpp"

#include <cmath>
#include <cstdio>
#include <map>
#include <tuple>
#include <vector>

namespace cudadiag::report {
namespace {

using nlohmann::json;

using Labels = std::vector<std::pair<std::string_view, std::string>>;

std::string number(double value) {
  if (std::isnan(value)) {
    return "NaN";
  }
  if (std::isinf(value)) {
    return value > 0 ? "+Inf" : "-Inf";
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", value);
  return buffer;
}

class Exposition {
public:
  void family(std::string_view name, std::string_view help) {
    m_out += "# HELP " + std::string(name) + " " + std::string(help) + "\n";
    m_out += "# TYPE " + std::string(name) + " gauge\n";
  }

  void sample(std::string_view name, const Labels& labels, double value) {
    m_out += name;
    if (!labels.empty()) {
      m_out += '{';
      bool first = true;
      for (const auto& [label, text] : labels) {
        m_out += (first ? "" : ",") + std::string(label) + "=\"" + prometheus_label_value(text) + "\"";
        first = false;
      }
      m_out += '}';
    }
    m_out += " " + number(value) + "\n";
  }

  std::string take() { return std::move(m_out); }

private:
  std::string m_out;
};

const json& member(const json& object, std::string_view key) {
  static const json null_value;
  if (!object.is_object()) {
    return null_value;
  }
  const auto it = object.find(key);
  return it == object.end() ? null_value : *it;
}

} // namespace

std::string prometheus_label_value(std::string_view text) {
  const auto valid = to_valid_utf8(text);
  std::string out;
  out.reserve(valid.size());
  for (const char c : valid) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string render_prometheus(const json& report, double timestamp_seconds) {
  Exposition out;
  out.family("cudadiag_up", "1 when cudadiag made a report of this node's CUDA stack.");
  out.sample("cudadiag_up", {}, 1);

  out.family("cudadiag_findings",
             "Findings of the last report by id, severity (error, warning, info) and repair class.");
  std::map<std::tuple<std::string, std::string, std::string>, int> findings;
  std::map<findings::Repair, int> repairs;
  for (const auto repair : findings::k_repairs) {
    repairs[repair] = 0;
  }
  const auto& listed = member(report, "findings");
  if (listed.is_array()) {
    for (const auto& finding : listed) {
      // A report of an earlier release has no repair class: "none" is the truth it can tell.
      const auto repair = json_fields::string_or(finding, "repair", "none");
      ++findings[{json_fields::string_or(finding, "id", "?"),
                  json_fields::string_or(finding, "severity", "?"), repair}];
      if (const auto known = findings::parse_repair(repair)) {
        ++repairs[*known];
      }
    }
  }
  for (const auto& [key, count] : findings) {
    const auto& [id, severity, repair] = key;
    out.sample("cudadiag_findings", {{"id", id}, {"severity", severity}, {"repair", repair}}, count);
  }

  out.family("cudadiag_repair",
             "Findings of the last report that ask for each repair class (none, fix_environment, "
             "reinstall_package, restart_process, reset_gpu, reboot, hardware_inspection); every class "
             "is listed, 0 when none asks for it.");
  for (const auto& [repair, count] : repairs) {
    out.sample("cudadiag_repair", {{"repair", std::string(findings::to_string(repair))}}, count);
  }

  out.family("cudadiag_component_info",
             "1 per CUDA component found: the version of the file a program loads and how it was found.");
  std::map<std::tuple<std::string, std::string, std::string, std::string>, int> components;
  const auto& all = member(report, "components");
  if (all.is_array()) {
    for (const auto& component : all) {
      const auto* answer = chosen_answer(component);
      if (answer == nullptr) {
        continue;
      }
      components[{json_fields::string_or(component, "name", "?"),
                  json_fields::string_or(component, "kind", "?"), display(*answer, "version"),
                  display(*answer, "found_via")}] = 1;
    }
  }
  for (const auto& [key, one] : components) {
    const auto& [name, kind, version, found_via] = key;
    out.sample("cudadiag_component_info",
               {{"name", name}, {"kind", kind}, {"version", version}, {"found_via", found_via}}, one);
  }

  const auto& tests = selftest_tests(report);
  std::map<std::tuple<std::string, std::string, std::string, std::string>, double> figures;
  for (const auto& test : tests) {
    const auto device = display(test, "device", "");
    const auto key = json_fields::string_or(test, "key", "?");
    const auto& metrics = member(test, "metrics");
    if (!metrics.is_array()) {
      continue;
    }
    for (const auto& metric : metrics) {
      const auto& value = member(metric, "value");
      if (value.is_number()) {
        figures[{device, key, json_fields::string_or(metric, "name", "?"),
                 json_fields::string_or(metric, "unit")}] = value.get<double>();
      }
    }
  }
  if (!figures.empty()) {
    out.family("cudadiag_selftest_value",
               "Self-test figures of the last report by device, test and metric (see unit).");
    for (const auto& [key, value] : figures) {
      const auto& [device, test, metric, unit] = key;
      out.sample("cudadiag_selftest_value",
                 {{"device", device}, {"test", test}, {"metric", metric}, {"unit", unit}}, value);
    }
  }
  const auto& score = member(member(member(report, "selftest"), "score"), "value");
  if (score.is_number()) {
    out.family("cudadiag_selftest_score",
               "The self-test score of the last report (100 = the reference figures).");
    out.sample("cudadiag_selftest_score", {}, score.get<double>());
  }

  out.family("cudadiag_last_run_timestamp_seconds",
             "When cudadiag made the last report, in seconds since the Unix epoch.");
  out.sample("cudadiag_last_run_timestamp_seconds", {}, timestamp_seconds);
  return out.take();
}

} // namespace cudadiag::report
