#include "report/markdown_report.hpp"

#include "findings/findings.hpp"
#include "report/output_formats.hpp"
#include "report/report_layout.hpp"
#include "report/terminal_style.hpp"

#include <algorithm>

namespace cudadiag::report {
namespace {

std::string_view severity_label(std::string_view severity) {
  switch (findings::parse_severity(severity).value_or(findings::Severity::info)) {
  case findings::Severity::error: return "**error**";
  case findings::Severity::warning: return "**warning**";
  case findings::Severity::info: return "info";
  }
  return "info";
}

std::string verdict_label(const Verdict& verdict) {
  if (!verdict.status) {
    return verdict.status_text;
  }
  switch (*verdict.status) {
  case SummaryStatus::ok: return "OK";
  case SummaryStatus::warning: return "WARNING";
  case SummaryStatus::error: return "ERROR";
  }
  return "ERROR";
}

std::string cell_text(const Cell& cell) {
  std::string out = markdown_escape(cell.text);
  if (cell.tone == Tone::error && !out.empty()) {
    out = "**" + out + "**";
  }
  if (!cell.code.empty()) {
    out += (out.empty() ? "" : "<br>") + markdown_code(cell.code);
  }
  return out.empty() ? " " : out;
}

void append_table(std::string& out, const Table& table) {
  out += "|";
  for (const auto& header : table.headers) {
    out += " " + markdown_escape(header) + " |";
  }
  out += "\n|";
  for (std::size_t i = 0; i < table.headers.size(); ++i) {
    out += "---|";
  }
  out += "\n";
  for (const auto& row : table.rows) {
    out += "|";
    for (const auto& cell : row) {
      out += " " + cell_text(cell) + " |";
    }
    out += "\n";
  }
  out += "\n";
}

void append_finding(std::string& out, const FindingView& finding) {
  out += "<a id=\"" + finding.anchor + "\"></a>\n";
  out += "### " + std::string(severity_label(finding.severity)) + " " + markdown_code(finding.id) + "\n\n";
  out += markdown_escape(finding.message) + "\n\n";
  if (!finding.remedy.empty()) {
    out += "**Remedy:** " + markdown_escape(finding.remedy) + "\n\n";
  }
  if (!finding.components.empty()) {
    std::string names;
    for (const auto& name : finding.components) {
      names += (names.empty() ? "" : ", ") + markdown_code(name);
    }
    out += "Components: " + names + "\n\n";
  }
}

} // namespace

std::string markdown_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\r') {
      continue;
    }
    if (c == '\n') {
      out += "<br>";
    } else if (std::string_view("\\`*_[]<>|#").find(c) != std::string_view::npos) {
      out += '\\';
      out += c;
    } else {
      out += c;
    }
  }
  return out;
}

std::string markdown_code(std::string_view text) {
  // A code span is fenced by a backtick run longer than any inside it; '|' must still be escaped
  // in GitHub tables, and line breaks cannot appear in a span.
  std::size_t longest = 0;
  std::size_t run = 0;
  std::string body;
  for (const char c : text) {
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
    body += c == '\n' || c == '\r' ? ' ' : c;
  }
  std::string escaped;
  for (const char c : body) {
    escaped += c == '|' ? std::string("\\|") : std::string(1, c);
  }
  const std::string fence(longest + 1, '`');
  const bool pad = !escaped.empty() && (escaped.front() == '`' || escaped.back() == '`');
  return fence + (pad ? " " : "") + escaped + (pad ? " " : "") + fence;
}

std::string render_markdown(const nlohmann::json& report) {
  const auto layout = lay_out_report(report);
  std::string out = "# " + markdown_escape(layout.title) + "\n\n";
  out += "**Verdict: " + verdict_label(layout.verdict) + "** — " + markdown_escape(layout.verdict.headline) +
         "\n\n";
  for (const auto& [label, value] : layout.verdict.facts) {
    out += "- **" + markdown_escape(label) + ":** " + markdown_escape(value) + "\n";
  }
  out += "\n";
  if (!layout.verdict.attention.empty()) {
    out += "Needs attention:\n\n";
    for (const auto& finding : layout.verdict.attention) {
      out += "- " + std::string(severity_label(finding.severity)) + " [" + markdown_code(finding.id) + "](#" +
             finding.anchor + ") — " + markdown_escape(finding.message) + "\n";
    }
    out += "\n";
  }
  for (const auto& section : layout.sections) {
    out += "## " + markdown_escape(section.title) + "\n\n";
    for (const auto& note : section.notes) {
      out += markdown_escape(note) + "\n\n";
    }
    for (const auto& table : section.tables) {
      append_table(out, table);
    }
    for (const auto& finding : section.findings) {
      append_finding(out, finding);
    }
    if (section.tables.empty() && section.findings.empty() && !section.empty_text.empty()) {
      out += markdown_escape(section.empty_text) + "\n\n";
    }
  }
  out += "---\nMade by " + markdown_escape(layout.tool) + ".\n";
  return escape_controls(out, TextStyle{});
}

} // namespace cudadiag::report
