#include "report/exit_style.hpp"

#include "core/json_fields.hpp"
#include "report/json_report.hpp"
#include "report/report_document.hpp"

#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

namespace cudadiag::report {
namespace {

constexpr std::size_t k_line_ids = 4;        // finding ids named in the status line
constexpr std::size_t k_line_components = 4; // components named per id

std::string_view word(ExitStyle style, int code) {
  if (style == ExitStyle::nagios) {
    switch (code) {
    case 0: return "OK";
    case 1: return "WARNING";
    case 2: return "CRITICAL";
    default: return "UNKNOWN";
    }
  }
  if (style == ExitStyle::npd) {
    return code == 0 ? "OK" : code == 1 ? "PROBLEM" : "UNKNOWN";
  }
  return code == 0 ? "OK" : "PROBLEM";
}

// "2 warnings (lib.multiple_versions: cudnn, nccl)": each id once, with the components its findings name.
std::string ids_of(const nlohmann::json& report, std::string_view severity, long long count) {
  std::string out = std::to_string(count) + " " + std::string(severity) + (count == 1 ? "" : "s");
  const auto& findings =
      report.is_object() && report.contains("findings") ? report["findings"] : nlohmann::json();
  if (!findings.is_array() || count == 0) {
    return out;
  }
  std::vector<std::pair<std::string, std::vector<std::string>>> ids; // in report order
  for (const auto& finding : findings) {
    if (json_fields::string_or(finding, "severity") != severity) {
      continue;
    }
    const auto id = json_fields::string_or(finding, "id", "?");
    auto it = std::find_if(ids.begin(), ids.end(), [&id](const auto& entry) { return entry.first == id; });
    if (it == ids.end()) {
      ids.emplace_back(id, std::vector<std::string>());
      it = std::prev(ids.end());
    }
    if (finding.contains("components") && finding["components"].is_array()) {
      for (const auto& component : finding["components"]) {
        if (component.is_string() && std::find(it->second.begin(), it->second.end(),
                                               component.get<std::string>()) == it->second.end()) {
          it->second.push_back(component.get<std::string>());
        }
      }
    }
  }
  std::string named;
  for (std::size_t i = 0; i < ids.size() && i < k_line_ids; ++i) {
    std::string components;
    for (std::size_t c = 0; c < ids[i].second.size() && c < k_line_components; ++c) {
      components += (components.empty() ? "" : ", ") + ids[i].second[c];
    }
    if (ids[i].second.size() > k_line_components) {
      components += ", ...";
    }
    named += (named.empty() ? "" : "; ") + ids[i].first + (components.empty() ? "" : ": " + components);
  }
  if (ids.size() > k_line_ids) {
    named += "; ...";
  }
  return out + " (" + named + ")";
}

} // namespace

std::optional<ExitStyle> parse_exit_style(std::string_view name) {
  if (name == "cudadiag") {
    return ExitStyle::cudadiag;
  }
  if (name == "npd") {
    return ExitStyle::npd;
  }
  if (name == "nagios") {
    return ExitStyle::nagios;
  }
  return std::nullopt;
}

int styled_exit_code(ExitStyle style, int exit_code, long long errors, long long warnings) {
  switch (style) {
  case ExitStyle::cudadiag: return exit_code;
  case ExitStyle::npd: return exit_code == 0 ? 0 : exit_code == 1 ? 1 : 2;
  case ExitStyle::nagios:
    if (exit_code >= 2) {
      return 3;
    }
    if (errors > 0 || exit_code == 1) {
      return 2;
    }
    return warnings > 0 ? 1 : 0;
  }
  return exit_code;
}

std::string status_line(ExitStyle style, const nlohmann::json& report, int styled_code) {
  const auto& summary =
      report.is_object() && report.contains("summary") ? report["summary"] : nlohmann::json();
  const auto& counts =
      summary.is_object() && summary.contains("counts") ? summary["counts"] : nlohmann::json();
  const auto errors = json_fields::integer(counts, "error").value_or(0);
  const auto warnings = json_fields::integer(counts, "warning").value_or(0);
  std::string line = "cudadiag " + std::string(word(style, styled_code)) + ": ";
  if (errors == 0 && warnings == 0) {
    line += "no errors or warnings";
  } else {
    line += ids_of(report, "error", errors) + "; " + ids_of(report, "warning", warnings);
  }
  if (style == ExitStyle::nagios) {
    line += " | errors=" + std::to_string(errors) + " warnings=" + std::to_string(warnings);
    const auto& selftest =
        report.is_object() && report.contains("selftest") ? report["selftest"] : nlohmann::json();
    const auto& score = selftest.is_object() && selftest.contains("score") && selftest["score"].is_object() &&
                                selftest["score"].contains("value")
                            ? selftest["score"]["value"]
                            : nlohmann::json();
    if (score.is_number()) {
      line += " score=" + format_number(score.get<double>());
    }
  }
  return to_valid_utf8(line) + "\n";
}

} // namespace cudadiag::report
