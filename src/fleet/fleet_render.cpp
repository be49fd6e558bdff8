#include "fleet/fleet_render.hpp"

#include "diff/diff_render.hpp"
#include "report/html_report.hpp"
#include "report/json_report.hpp"
#include "report/report_document.hpp"

#include <algorithm>
#include <cctype>
#include <map>

namespace cudadiag::fleet {
namespace {

using nlohmann::json;
using report::format_number;
using report::paint;
using report::TextStyle;
using report::to_valid_utf8;

constexpr std::size_t k_text_node_list = 200; // characters of a node list shown in text
constexpr std::size_t k_text_nodes = 50;      // nodes with errors listed in text
constexpr std::size_t k_text_details = 12;    // diff lines per group in text

std::string counted(std::size_t count, std::string_view one, std::string_view many) {
  return std::to_string(count) + " " + std::string(count == 1 ? one : many);
}

std::vector<std::string> member_names(const FleetSummary& summary, const NodeGroup& group) {
  std::vector<std::string> names;
  names.reserve(group.members.size());
  for (const auto index : group.members) {
    names.push_back(summary.nodes[index].name);
  }
  return names;
}

std::string shortened(std::string text, std::size_t limit) {
  if (text.size() <= limit) {
    return text;
  }
  auto cut = text.rfind(',', limit);
  cut = cut == std::string::npos ? limit : cut;
  const auto rest = std::count(text.begin() + static_cast<std::ptrdiff_t>(cut), text.end(), ',');
  return text.substr(0, cut) + ", ... (" + std::to_string(rest) + " more entries)";
}

// Whether the first group is a majority worth the name: more than one group, and it holds more than
// one node (four groups of one have none).
bool has_majority(const FleetSummary& summary) {
  return summary.groups.size() > 1 && summary.groups.front().members.size() > 1;
}

std::string headline(const FleetSummary& summary) {
  std::string line = counted(summary.nodes.size(), "node", "nodes") + " in " +
                     counted(summary.groups.size(), "group", "groups");
  if (has_majority(summary)) {
    const auto odd = summary.nodes.size() - summary.groups.front().members.size();
    line += "; " + counted(odd, "node differs", "nodes differ") + " from the majority";
  } else if (summary.groups.size() > 1) {
    line += "; no majority (every node differs from the others)";
  }
  line += "; " + counted(summary.error_nodes, "node", "nodes") + " with errors, " +
          counted(summary.warning_nodes, "node", "nodes") + " with warnings";
  if (!summary.problems.empty()) {
    line += "; " + counted(summary.problems.size(), "unreadable input", "unreadable inputs");
  }
  return line;
}

// "Repairs: 2 nodes reboot, 1 node reset_gpu", most invasive first; empty when no node needs one.
std::string repairs_line(const FleetSummary& summary) {
  std::string line;
  for (auto it = summary.repair_nodes.rbegin(); it != summary.repair_nodes.rend(); ++it) {
    if (it->first != findings::Repair::none && it->second > 0) {
      line += (line.empty() ? "" : ", ") + counted(it->second, "node", "nodes") + " " +
              std::string(findings::to_string(it->first));
    }
  }
  return line.empty() ? line : "Repairs: " + line;
}

std::string verdict(const FleetSummary& summary) {
  if (summary.exit_code != 0) {
    return "PROBLEM";
  }
  return summary.uniform ? "UNIFORM" : "OK (not uniform)";
}

std::string device_label(int device) {
  return device < 0 ? "node" : "GPU " + std::to_string(device);
}

std::string shown(const std::optional<std::string>& value) {
  return value ? *value : "(absent)";
}

json difference_json(const FieldDifference& d) {
  return {{"field", d.field},
          {"majority", to_valid_utf8(d.majority)},
          {"value", to_valid_utf8(d.value)},
          {"core", d.core}};
}

} // namespace

std::string compress_names(const std::vector<std::string>& names) {
  struct Run {
    std::string prefix;
    std::size_t width = 0;
    std::vector<long long> numbers;
    std::vector<std::string> plain;
    std::size_t reports = 0; // how many names fell into this run
  };
  std::vector<Run> runs;
  std::map<std::pair<std::string, std::size_t>, std::size_t> index;
  for (const auto& name : names) {
    std::size_t digits = name.size();
    while (digits > 0 && std::isdigit(static_cast<unsigned char>(name[digits - 1])) != 0) {
      --digits;
    }
    const auto width = name.size() - digits;
    if (width == 0 || width > 12) {
      auto [it, inserted] = index.try_emplace({name, 0}, runs.size());
      if (inserted) {
        runs.push_back({name, 0, {}, {name}, 0});
      }
      ++runs[it->second].reports;
      continue;
    }
    auto [it, inserted] = index.try_emplace({name.substr(0, digits), width}, runs.size());
    if (inserted) {
      runs.push_back({name.substr(0, digits), width, {}, {}, 0});
    }
    ++runs[it->second].reports;
    runs[it->second].numbers.push_back(std::stoll(name.substr(digits)));
  }
  std::string out;
  for (auto& run : runs) {
    out += out.empty() ? "" : ",";
    // The same name more than once (reports of one host, or nodes that all call themselves "vm").
    const auto repeated = [&run](std::size_t distinct) {
      return run.reports > distinct ? " (" + std::to_string(run.reports) + " reports)" : std::string();
    };
    if (run.numbers.empty()) {
      out += run.plain.front() + repeated(1);
      continue;
    }
    std::sort(run.numbers.begin(), run.numbers.end());
    run.numbers.erase(std::unique(run.numbers.begin(), run.numbers.end()), run.numbers.end());
    const auto suffix = repeated(run.numbers.size());
    auto number = [&run](long long value) {
      auto text = std::to_string(value);
      return std::string(run.width > text.size() ? run.width - text.size() : 0, '0') + text;
    };
    if (run.numbers.size() == 1) {
      out += run.prefix + number(run.numbers.front()) + suffix;
      continue;
    }
    std::string ranges;
    for (std::size_t i = 0; i < run.numbers.size();) {
      std::size_t j = i;
      while (j + 1 < run.numbers.size() && run.numbers[j + 1] == run.numbers[j] + 1) {
        ++j;
      }
      ranges +=
          (ranges.empty() ? "" : ",") + number(run.numbers[i]) + (j > i ? "-" + number(run.numbers[j]) : "");
      i = j + 1;
    }
    out += run.prefix + "[" + ranges + "]" + suffix;
  }
  return out;
}

std::string render_fleet_text(const FleetSummary& summary, TextStyle style) {
  std::string out;
  const auto word = verdict(summary);
  const auto tone = summary.exit_code != 0 ? report::k_red
                    : summary.uniform      ? report::k_green
                                           : report::k_yellow;
  out += paint(style, report::k_bold, "cudadiag fleet") + ": " + paint(style, tone, word) + " — " +
         headline(summary) + "\n";
  for (const auto& reason : summary.reasons) {
    out += "  " + reason + "\n";
  }
  if (const auto repairs = repairs_line(summary); !repairs.empty()) {
    out += "  " + repairs + "\n";
  }
  if (!summary.older.empty()) {
    out += "  " + counted(summary.older.size(), "older report", "older reports") +
           " of the same hosts not counted (each host's newest counts):\n";
    for (std::size_t i = 0; i < summary.older.size() && i < k_text_nodes; ++i) {
      out += "    " + report::pad(to_valid_utf8(summary.older[i].name), 24) +
             paint(style, report::k_dim, to_valid_utf8(summary.older[i].source)) + "\n";
    }
    if (summary.older.size() > k_text_nodes) {
      out += "    ... and " + std::to_string(summary.older.size() - k_text_nodes) + " more (see --json)\n";
    }
  }

  std::size_t listed = 0;
  std::string problems;
  for (const auto index : summary.node_order) {
    const auto& node = summary.nodes[index];
    if (node.status != report::SummaryStatus::error) {
      break;
    }
    if (listed++ < k_text_nodes) {
      std::string ids;
      for (const auto& id : node.errors) {
        ids += (ids.empty() ? "" : ", ") + id;
      }
      problems += "  " + report::pad(to_valid_utf8(node.name), 24) + paint(style, report::k_red, ids) + "  " +
                  (node.repair == findings::Repair::none
                       ? std::string()
                       : "[" + std::string(findings::to_string(node.repair)) + "]  ") +
                  paint(style, report::k_dim, "(" + to_valid_utf8(node.source) + ")") + "\n";
    }
  }
  if (listed > 0) {
    out += "\nNodes with errors\n" + problems;
    if (listed > k_text_nodes) {
      out += "  ... and " + std::to_string(listed - k_text_nodes) + " more (see --json)\n";
    }
  }

  for (std::size_t g = 0; g < summary.groups.size(); ++g) {
    const auto& group = summary.groups[g];
    const auto names =
        shortened(to_valid_utf8(compress_names(member_names(summary, group))), k_text_node_list);
    if (group.majority) {
      const std::string title = summary.groups.size() == 1 ? "All nodes"
                                : has_majority(summary)
                                    ? "Majority"
                                    : "Group 1 (the reference the others are compared with)";
      out += "\n" + paint(style, report::k_bold, title) + " (" +
             counted(group.members.size(), "node", "nodes") + "): " + names + "\n";
      for (const auto& field : group.fingerprint) {
        out += "  " + report::pad(field.name, 26) + to_valid_utf8(field.value) + "\n";
      }
      continue;
    }
    out += "\n" + paint(style, report::k_bold, "Group " + std::to_string(g + 1)) + " (" +
           counted(group.members.size(), "node", "nodes") + "): " + names + "\n";
    for (const auto& d : group.differs) {
      out += "  " + report::pad(d.field, 26) + to_valid_utf8(d.majority) + " -> " +
             paint(style, d.core ? report::k_red : report::k_yellow, to_valid_utf8(d.value)) + "\n";
    }
    if (group.detailed && !group.details.empty()) {
      out += "  " +
             paint(style, report::k_dim,
                   has_majority(summary) ? "cudadiag diff (majority -> this group):"
                                         : "cudadiag diff (group 1 -> this group):") +
             "\n";
      for (std::size_t i = 0; i < group.details.size() && i < k_text_details; ++i) {
        const auto& d = group.details[i];
        out += "    " + std::string(diff::to_string(d.area)) + ": " + to_valid_utf8(d.subject) + " " +
               to_valid_utf8(d.aspect) + ": " + to_valid_utf8(shown(d.a)) + " -> " +
               to_valid_utf8(shown(d.b)) + "\n";
      }
      if (group.details.size() > k_text_details) {
        out +=
            "    ... and " + std::to_string(group.details.size() - k_text_details) + " more (see --json)\n";
      }
    }
  }

  if (!summary.figures.empty()) {
    out += "\nSelf-test per GPU model (flagged: more than " + format_number(summary.tolerance_percent) +
           "% worse than the fleet median)\n";
    for (const auto& spread : summary.figures) {
      out += "  " + report::pad(to_valid_utf8(spread.gpu_model), 16) + report::pad(spread.metric, 26) +
             "n=" + report::pad(std::to_string(spread.count), 6) + "median " + format_number(spread.median) +
             " " + spread.unit + "  min " + format_number(spread.min) + "  max " + format_number(spread.max) +
             "\n";
      for (std::size_t i = 0; i < spread.outliers.size() && i < k_text_nodes; ++i) {
        const auto& low = spread.outliers[i];
        out += "    " + paint(style, report::k_yellow, to_valid_utf8(summary.nodes[low.node].name)) + " " +
               device_label(low.device) + ": " + format_number(low.value) + " " + spread.unit + " (" +
               format_number(low.percent_of_median) + "% of the median)\n";
      }
      if (spread.outliers.size() > k_text_nodes) {
        out += "    ... and " + std::to_string(spread.outliers.size() - k_text_nodes) + " more\n";
      }
    }
  }

  if (!summary.problems.empty()) {
    out += "\nInputs that are not node reports\n";
    for (std::size_t i = 0; i < summary.problems.size() && i < k_text_nodes; ++i) {
      const auto& problem = summary.problems[i];
      out += "  " + to_valid_utf8(problem.source) +
             (problem.line > 0 ? " line " + std::to_string(problem.line) : "") + ": " +
             to_valid_utf8(problem.message) + "\n";
    }
    if (summary.problems.size() > k_text_nodes) {
      out += "  ... and " + std::to_string(summary.problems.size() - k_text_nodes) + " more (see --json)\n";
    }
  }
  return out;
}

json fleet_to_json(const FleetSummary& summary) {
  json nodes = json::array();
  std::vector<std::size_t> group_of(summary.nodes.size(), 0);
  for (std::size_t g = 0; g < summary.groups.size(); ++g) {
    for (const auto index : summary.groups[g].members) {
      group_of[index] = g;
    }
  }
  for (const auto index : summary.node_order) {
    const auto& node = summary.nodes[index];
    json figures = json::array();
    for (const auto& figure : node.figures) {
      figures.push_back({{"gpu_model", to_valid_utf8(figure.gpu_model)},
                         {"metric", figure.metric},
                         {"unit", figure.unit},
                         {"device", figure.device < 0 ? json(nullptr) : json(figure.device)},
                         {"value", figure.value}});
    }
    nodes.push_back({{"name", to_valid_utf8(node.name)},
                     {"source", to_valid_utf8(node.source)},
                     {"status", node.status ? report::to_string(*node.status) : "unknown"},
                     {"group", group_of[index]},
                     {"errors", node.errors},
                     {"warnings", node.warnings},
                     {"repair", std::string(findings::to_string(node.repair))},
                     {"tool_version", to_valid_utf8(node.tool_version)},
                     {"selftest", figures}});
  }
  json groups = json::array();
  for (std::size_t g = 0; g < summary.groups.size(); ++g) {
    const auto& group = summary.groups[g];
    json fingerprint = json::array();
    for (const auto& field : group.fingerprint) {
      fingerprint.push_back(
          {{"field", field.name}, {"value", to_valid_utf8(field.value)}, {"core", field.core}});
    }
    json differs = json::array();
    for (const auto& d : group.differs) {
      differs.push_back(difference_json(d));
    }
    json details = nullptr;
    if (group.detailed) {
      diff::ReportDiff result;
      result.differences = group.details;
      details = diff::diff_to_json(result)["differences"];
    }
    const auto names = member_names(summary, group);
    json members = json::array();
    for (const auto& name : names) {
      members.push_back(to_valid_utf8(name));
    }
    groups.push_back({{"id", g},
                      {"majority", group.majority},
                      {"size", group.members.size()},
                      {"nodes", members},
                      {"hostlist", to_valid_utf8(compress_names(names))},
                      {"error_nodes", group.error_nodes},
                      {"fingerprint", fingerprint},
                      {"differs", differs},
                      {"differences", details}});
  }
  json figures = json::array();
  for (const auto& spread : summary.figures) {
    json outliers = json::array();
    for (const auto& low : spread.outliers) {
      outliers.push_back({{"node", to_valid_utf8(summary.nodes[low.node].name)},
                          {"device", low.device < 0 ? json(nullptr) : json(low.device)},
                          {"value", low.value},
                          {"percent_of_median", low.percent_of_median}});
    }
    figures.push_back({{"gpu_model", to_valid_utf8(spread.gpu_model)},
                       {"metric", spread.metric},
                       {"unit", spread.unit},
                       {"higher_is_better", spread.higher_is_better},
                       {"count", spread.count},
                       {"median", spread.median},
                       {"min", spread.min},
                       {"max", spread.max},
                       {"outliers", outliers}});
  }
  json older = json::array();
  for (const auto& report : summary.older) {
    older.push_back({{"name", to_valid_utf8(report.name)}, {"source", to_valid_utf8(report.source)}});
  }
  json problems = json::array();
  for (const auto& problem : summary.problems) {
    problems.push_back({{"source", to_valid_utf8(problem.source)},
                        {"line", problem.line == 0 ? json(nullptr) : json(problem.line)},
                        {"message", to_valid_utf8(problem.message)}});
  }
  json repairs = json::object();
  for (const auto& [repair, count] : summary.repair_nodes) {
    repairs[std::string(findings::to_string(repair))] = count;
  }
  return {{"schema_version", k_fleet_schema_version},
          {"tool", {{"name", "cudadiag"}, {"version", CUDADIAG_VERSION}}},
          {"kind", "fleet"},
          {"tolerance_percent", summary.tolerance_percent},
          {"counts",
           {{"nodes", summary.nodes.size()},
            {"groups", summary.groups.size()},
            {"error_nodes", summary.error_nodes},
            {"warning_nodes", summary.warning_nodes},
            {"differing_nodes",
             summary.groups.empty() ? 0 : summary.nodes.size() - summary.groups.front().members.size()},
            {"input_problems", summary.problems.size()},
            {"repairs", repairs}}},
          {"groups", groups},
          {"nodes", nodes},
          {"selftest", figures},
          {"input_problems", problems},
          {"older_reports", older},
          {"summary",
           {{"status", summary.exit_code != 0 ? "problem"
                       : summary.uniform      ? "uniform"
                                              : "ok"},
            {"uniform", summary.uniform},
            {"reasons", summary.reasons},
            {"exit_code", summary.exit_code}}}};
}

std::string render_fleet_html(const FleetSummary& summary) {
  using report::html_escape;
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>cudadiag fleet: " +
      html_escape(headline(summary)) +
      "</title>\n<style>"
      "body{font-family:system-ui,sans-serif;margin:2em;max-width:80em}"
      "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.2em "
      ".6em;text-align:left}"
      ".banner{padding:.8em;border-radius:.4em}.problem{background:#fdd}.uniform{background:#dfd}.ok{"
      "background:#ffd}"
      ".core{color:#b00;font-weight:bold}code{font-size:90%}"
      "</style>\n</head>\n<body>\n";
  const auto status = summary.exit_code != 0 ? "problem" : summary.uniform ? "uniform" : "ok";
  out += "<div class=\"banner " + std::string(status) +
         "\"><h1>cudadiag fleet: " + html_escape(verdict(summary)) + "</h1><p>" +
         html_escape(headline(summary)) + "</p>";
  for (const auto& reason : summary.reasons) {
    out += "<p>" + html_escape(reason) + "</p>";
  }
  out += "</div>\n";
  std::string errors;
  for (const auto index : summary.node_order) {
    const auto& node = summary.nodes[index];
    if (node.status != report::SummaryStatus::error) {
      break;
    }
    std::string ids;
    for (const auto& id : node.errors) {
      ids += (ids.empty() ? "" : " ") + std::string("<code>") + html_escape(id) + "</code>";
    }
    errors += "<tr><td>" + html_escape(node.name) + "</td><td>" + ids + "</td><td>" +
              html_escape(node.source) + "</td></tr>\n";
  }
  if (!errors.empty()) {
    out += "<h2>Nodes with errors</h2>\n<table><tr><th>Node</th><th>Errors</th><th>Source</th></tr>\n" +
           errors + "</table>\n";
  }
  for (std::size_t g = 0; g < summary.groups.size(); ++g) {
    const auto& group = summary.groups[g];
    const auto names = shortened(compress_names(member_names(summary, group)), 2000);
    out +=
        "<h2>" +
        std::string(group.majority && has_majority(summary) ? "Majority" : "Group " + std::to_string(g + 1)) +
        " (" + counted(group.members.size(), "node", "nodes") + ")</h2>\n<p><code>" + html_escape(names) +
        "</code></p>\n";
    out += "<table><tr><th>Field</th><th>" + std::string(group.majority ? "Value" : "Majority") + "</th>" +
           (group.majority ? "" : "<th>This group</th>") + "</tr>\n";
    if (group.majority) {
      for (const auto& field : group.fingerprint) {
        out += "<tr><td>" + html_escape(field.name) + "</td><td>" + html_escape(field.value) + "</td></tr>\n";
      }
    } else {
      for (const auto& d : group.differs) {
        out += "<tr><td" + std::string(d.core ? " class=\"core\"" : "") + ">" + html_escape(d.field) +
               "</td><td>" + html_escape(d.majority) + "</td><td>" + html_escape(d.value) + "</td></tr>\n";
      }
      for (const auto& d : group.details) {
        out += "<tr><td>" +
               html_escape(std::string(diff::to_string(d.area)) + ": " + d.subject + " " + d.aspect) +
               "</td><td>" + html_escape(shown(d.a)) + "</td><td>" + html_escape(shown(d.b)) + "</td></tr>\n";
      }
    }
    out += "</table>\n";
  }
  if (!summary.figures.empty()) {
    out += "<h2>Self-test per GPU model</h2>\n<p>Flagged: more than " +
           html_escape(format_number(summary.tolerance_percent)) +
           "% worse than the fleet median.</p>\n<table><tr><th>GPU "
           "model</th><th>Figure</th><th>n</th><th>Median</th>"
           "<th>Min</th><th>Max</th><th>Flagged</th></tr>\n";
    for (const auto& spread : summary.figures) {
      std::string flagged;
      for (const auto& low : spread.outliers) {
        flagged += (flagged.empty() ? "" : ", ") + summary.nodes[low.node].name + " " +
                   device_label(low.device) + " " + format_number(low.value);
      }
      out += "<tr><td>" + html_escape(spread.gpu_model) + "</td><td>" +
             html_escape(spread.metric + " (" + spread.unit + ")") + "</td><td>" +
             std::to_string(spread.count) + "</td><td>" + format_number(spread.median) + "</td><td>" +
             format_number(spread.min) + "</td><td>" + format_number(spread.max) + "</td><td>" +
             html_escape(flagged) + "</td></tr>\n";
    }
    out += "</table>\n";
  }
  if (!summary.problems.empty()) {
    out += "<h2>Inputs that are not node reports</h2>\n<ul>\n";
    for (const auto& problem : summary.problems) {
      out += "<li>" +
             html_escape(problem.source + (problem.line > 0 ? " line " + std::to_string(problem.line) : "") +
                         ": " + problem.message) +
             "</li>\n";
    }
    out += "</ul>\n";
  }
  out += "<footer>Made by cudadiag " + html_escape(CUDADIAG_VERSION) + ".</footer>\n</body>\n</html>\n";
  return out;
}

} // namespace cudadiag::fleet
