#include "diff/diff_render.hpp"

#include "report/json_report.hpp"
#include "report/report_document.hpp"

#include <cstdint>
#include <optional>
#include <utility>

namespace cudadiag::diff {
namespace {

using nlohmann::json;

std::string counted(std::int64_t count, std::string_view noun) {
  return std::to_string(count) + " " + std::string(noun) + (count == 1 ? "" : "s");
}

std::string side_line(std::string_view name, const SideSummary& side, report::TextStyle style) {
  const auto color = side.verdict == report::SummaryStatus::error     ? report::k_red
                     : side.verdict == report::SummaryStatus::warning ? report::k_yellow
                                                                      : report::k_green;
  return std::string(name) + ": " + report::to_valid_utf8(side.label) + " (" + side.kind + ") — " +
         report::to_valid_utf8(side.hostname) + ", " + report::to_valid_utf8(side.distro) + ", cudadiag " +
         side.tool_version + ": " + report::paint(style, color, side.status) + " (" +
         counted(side.errors, "error") + ", " + counted(side.warnings, "warning") + ")\n";
}

std::string shown(const std::optional<std::string>& value) {
  return value ? report::to_valid_utf8(*value) : "(none)";
}

json side_json(const SideSummary& side) {
  return {{"label", report::to_valid_utf8(side.label)},
          {"kind", side.kind},
          {"hostname", side.hostname},
          {"distro", side.distro},
          {"tool_version", side.tool_version},
          {"status", side.status},
          {"errors", side.errors},
          {"warnings", side.warnings}};
}

std::string unescaped_diff_text(const ReportDiff& diff, report::TextStyle style) {
  std::string out = side_line("A", diff.a, style) + side_line("B", diff.b, style) + "\n";
  const auto tolerance = report::format_number(diff.metric_tolerance * 100) + "%";
  if (diff.equivalent()) {
    out +=
        report::paint(style, report::k_green, "equivalent") +
        ": the same driver, devices, components, load results, environment, findings and self-test outcome "
        "(hostnames, timings and search traces are not compared; self-test figures within " +
        tolerance + ").\n";
    return out;
  }
  const auto count = diff.differences.size();
  out += report::paint(style, report::k_bold,
                       std::to_string(count) + (count == 1 ? " difference" : " differences")) +
         ", most likely cause first:\n";
  std::optional<std::pair<bool, Area>> area;
  for (const auto& difference : diff.differences) {
    if (!area || *area != std::pair(difference.cause, difference.area)) {
      area = std::pair(difference.cause, difference.area);
      const std::string title = difference.cause ? "Likely cause: " + std::string(area_title(difference.area))
                                                 : std::string(area_title(difference.area));
      out += "\n" + report::paint(style, report::k_bold, title) + "\n";
    }
    // A and B are not "bad" and "good": values are shown plainly, the subject stands out.
    out += "  " + report::paint(style, report::k_bold, report::to_valid_utf8(difference.subject)) + " · " +
           difference.aspect + ": " + shown(difference.a) + " -> " + shown(difference.b);
    if (!difference.note.empty()) {
      out += "  " + report::paint(style, report::k_dim, "(" + difference.note + ")");
    }
    out += "\n";
  }
  out += "\nSelf-test figures within " + tolerance +
         " of each other, hostnames, timings and search traces are not compared.\n";
  return out;
}

} // namespace

std::string render_diff_text(const ReportDiff& diff, report::TextStyle style) {
  return report::escape_controls(unescaped_diff_text(diff, style), style);
}

json diff_to_json(const ReportDiff& diff) {
  json differences = json::array();
  for (const auto& difference : diff.differences) {
    differences.push_back({{"area", std::string(to_string(difference.area))},
                           {"subject", report::to_valid_utf8(difference.subject)},
                           {"aspect", difference.aspect},
                           {"a", difference.a ? json(report::to_valid_utf8(*difference.a)) : json(nullptr)},
                           {"b", difference.b ? json(report::to_valid_utf8(*difference.b)) : json(nullptr)},
                           {"note", difference.note.empty() ? json(nullptr) : json(difference.note)}});
  }
  return {{"schema_version", k_diff_schema_version},
          {"tool", {{"name", "cudadiag"}, {"version", CUDADIAG_VERSION}}},
          {"equivalent", diff.equivalent()},
          {"metric_tolerance", diff.metric_tolerance},
          {"a", side_json(diff.a)},
          {"b", side_json(diff.b)},
          {"differences", differences}};
}

} // namespace cudadiag::diff
