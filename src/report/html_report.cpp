#include "report/html_report.hpp"

#include "findings/findings.hpp"
#include "report/output_formats.hpp"
#include "report/report_layout.hpp"

namespace cudadiag::report {
namespace {

constexpr std::string_view k_style = R"css(
:root { color-scheme: light; }
body { font: 14px/1.45 -apple-system, "Segoe UI", "DejaVu Sans", Arial, sans-serif; color: #1b1f24;
       margin: 0; padding: 0 24px 32px; background: #fff; }
h1 { font-size: 16px; font-weight: 600; margin: 0 0 6px; color: #1b1f24; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #d0d7de; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 16px 0 4px; }
code { font: 12px/1.4 "DejaVu Sans Mono", Menlo, Consolas, monospace; background: #f3f4f6; padding: 1px 4px;
       border-radius: 4px; word-break: break-all; }
.verdict { margin: 16px 0 8px; padding: 14px 18px; border-radius: 8px; border: 2px solid; }
.verdict .status { font-size: 26px; font-weight: 700; letter-spacing: 0.5px; }
.verdict .headline { font-size: 15px; margin-left: 10px; }
.verdict-ok { background: #dafbe1; border-color: #1a7f37; }
.verdict-ok .status { color: #1a7f37; }
.verdict-warning { background: #fff8c5; border-color: #9a6700; }
.verdict-warning .status { color: #9a6700; }
.verdict-error { background: #ffebe9; border-color: #cf222e; }
.verdict-error .status { color: #cf222e; }
.facts { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 10px 0 0; }
.facts dt { font-weight: 600; }
.facts dd { margin: 0; }
.attention { margin: 10px 0 0; padding-left: 20px; }
table { border-collapse: collapse; margin: 8px 0 12px; width: 100%; }
th, td { border: 1px solid #d0d7de; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
td .detail { display: block; margin-top: 2px; }
.tone-ok { color: #1a7f37; font-weight: 600; }
.tone-warning { color: #9a6700; font-weight: 600; }
.tone-error { color: #cf222e; font-weight: 700; }
.tone-muted { color: #6e7781; }
.finding { border-left: 4px solid #d0d7de; padding: 2px 12px; margin: 10px 0; }
.finding-error { border-color: #cf222e; }
.finding-warning { border-color: #9a6700; }
.severity { text-transform: uppercase; font-size: 12px; font-weight: 700; margin-right: 6px; }
.remedy { background: #f6f8fa; padding: 6px 10px; border-radius: 6px; }
.empty { color: #6e7781; }
footer { margin-top: 28px; color: #6e7781; font-size: 12px; }
/* Fits a window of 800 px and less: long paths, UUIDs and ids break anywhere rather than widen the
   page, and wide tables scroll inside their own box. */
dd, p, li, h3 { overflow-wrap: anywhere; }
th, td { overflow-wrap: break-word; }
.table-box { max-width: 100%; overflow-x: auto; }
@media (max-width: 900px) {
  body { padding: 0 12px 24px; }
  th, td { padding: 3px 5px; }
  table { font-size: 13px; }
  .verdict .status { font-size: 22px; }
  .verdict .headline { display: block; margin: 4px 0 0; }
}
)css";

std::string_view tone_class(Tone tone) {
  switch (tone) {
  case Tone::ok: return "tone-ok";
  case Tone::warning: return "tone-warning";
  case Tone::error: return "tone-error";
  case Tone::muted: return "tone-muted";
  case Tone::plain: return "";
  }
  return "";
}

std::string verdict_word(const Verdict& verdict) {
  if (!verdict.status) {
    return html_escape(verdict.status_text);
  }
  switch (*verdict.status) {
  case SummaryStatus::ok: return "OK";
  case SummaryStatus::warning: return "WARNING";
  case SummaryStatus::error: return "ERROR";
  }
  return "ERROR";
}

// "error", "warning", or "info" for any other severity.
std::string severity_class(std::string_view severity) {
  return std::string(
      findings::to_string(findings::parse_severity(severity).value_or(findings::Severity::info)));
}

void append_cell(std::string& out, const Cell& cell) {
  const auto tone = tone_class(cell.tone);
  out += "<td>";
  if (!cell.text.empty()) {
    out += tone.empty() ? html_escape(cell.text)
                        : "<span class=\"" + std::string(tone) + "\">" + html_escape(cell.text) + "</span>";
  }
  if (!cell.code.empty()) {
    out += "<code class=\"detail\">" + html_escape(cell.code) + "</code>";
  }
  out += "</td>";
}

void append_table(std::string& out, const Table& table) {
  out += "<div class=\"table-box\"><table><thead><tr>";
  for (const auto& header : table.headers) {
    out += "<th>" + html_escape(header) + "</th>";
  }
  out += "</tr></thead><tbody>\n";
  for (const auto& row : table.rows) {
    out += "<tr>";
    for (const auto& cell : row) {
      append_cell(out, cell);
    }
    out += "</tr>\n";
  }
  out += "</tbody></table></div>\n";
}

void append_finding(std::string& out, const FindingView& finding) {
  const auto kind = severity_class(finding.severity);
  out += "<div class=\"finding finding-" + kind + "\" id=\"" + html_escape(finding.anchor) + "\">";
  out += "<h3><span class=\"severity tone-" + (kind == "info" ? std::string("muted") : kind) + "\">" +
         html_escape(finding.severity) + "</span><code>" + html_escape(finding.id) + "</code></h3>";
  out += "<p>" + html_escape(finding.message) + "</p>";
  if (!finding.remedy.empty()) {
    out += "<p class=\"remedy\"><strong>Remedy:</strong> " + html_escape(finding.remedy) + "</p>";
  }
  if (!finding.components.empty()) {
    out += "<p>Components:";
    for (const auto& name : finding.components) {
      out += " <code>" + html_escape(name) + "</code>";
    }
    out += "</p>";
  }
  out += "</div>\n";
}

void append_verdict(std::string& out, const std::string& title, const Verdict& verdict) {
  const auto status = verdict.status.value_or(SummaryStatus::error);
  out += "<section class=\"verdict verdict-" + std::string(to_string(status)) + "\" id=\"verdict\">";
  out += "<h1>" + html_escape(title) + "</h1>";
  out += "<span class=\"status\">" + verdict_word(verdict) + "</span>";
  out += "<span class=\"headline\">" + html_escape(verdict.headline) + "</span>";
  out += "<dl class=\"facts\">";
  for (const auto& [label, value] : verdict.facts) {
    out += "<dt>" + html_escape(label) + "</dt><dd>" + html_escape(value) + "</dd>";
  }
  out += "</dl>";
  if (!verdict.attention.empty()) {
    out += "<ul class=\"attention\">";
    for (const auto& finding : verdict.attention) {
      out += "<li><span class=\"severity tone-" + severity_class(finding.severity) + "\">" +
             html_escape(finding.severity) + "</span><a href=\"#" + html_escape(finding.anchor) +
             "\"><code>" + html_escape(finding.id) + "</code></a> " + html_escape(finding.message) + "</li>";
    }
    out += "</ul>";
  }
  out += "</section>\n";
}

} // namespace

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
    case '&': out += "&amp;"; break;
    case '<': out += "&lt;"; break;
    case '>': out += "&gt;"; break;
    case '"': out += "&quot;"; break;
    case '\'': out += "&#39;"; break;
    default:
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
        out += "\xef\xbf\xbd"; // U+FFFD
      } else {
        out += c;
      }
    }
  }
  return out;
}

std::string render_html(const nlohmann::json& report) {
  const auto layout = lay_out_report(report);
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n";
  out += "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n";
  out += "<title>" + html_escape(layout.title) + "</title>\n<style>" + std::string(k_style) + "</style>\n";
  out += "</head>\n<body>\n";
  append_verdict(out, layout.title, layout.verdict);
  for (const auto& section : layout.sections) {
    out +=
        "<section id=\"" + html_escape(section.anchor) + "\">\n<h2>" + html_escape(section.title) + "</h2>\n";
    for (const auto& note : section.notes) {
      out += "<p>" + html_escape(note) + "</p>\n";
    }
    for (const auto& table : section.tables) {
      append_table(out, table);
    }
    for (const auto& finding : section.findings) {
      append_finding(out, finding);
    }
    if (section.tables.empty() && section.findings.empty() && !section.empty_text.empty()) {
      out += "<p class=\"empty\">" + html_escape(section.empty_text) + "</p>\n";
    }
    out += "</section>\n";
  }
  out += "<footer>Made by " + html_escape(layout.tool) + ".</footer>\n</body>\n</html>\n";
  return out;
}

} // namespace cudadiag::report
