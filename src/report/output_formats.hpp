#pragma once
// The report's file renderings as one table: each row is a format the CLI writes with its option
// (`--junit FILE`) and, when it names a bundle file, one that every support bundle holds. Adding a
// format is two files: its renderer, src/report/NAME_report.cpp (src/CMakeLists.txt builds every
// report/*_report.cpp), and here its declaration and its row.

#include "report/report.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::report {

// The renderings of the rows below, each over a report's JSON document (with its "policy" object
// when it has one); what each writes is said in its file's header (junit_report.hpp, ...).
std::string render_junit(const nlohmann::json& report, FailOn fail_on); // junit_report.cpp
std::string render_markdown(const nlohmann::json& report);              // markdown_report.cpp
std::string render_html(const nlohmann::json& report);                  // html_report.cpp
std::string render_prometheus(const nlohmann::json& report,
                              double timestamp_seconds); // prometheus_textfile.cpp

struct OutputFormat {
  std::string_view flag;        // the CLI option that writes it to a file ("--junit")
  std::string_view bundle_file; // its name inside a bundle ("report.md"); "" when bundles leave it out
  std::string_view help;        // the option's help text
  // The rendering of a report's JSON document (with its "policy" object when it has one); `fail_on`
  // is the level the summary was computed under.
  std::string (*render)(const nlohmann::json& document, FailOn fail_on);
};

// Every format, in the order the CLI writes them.
inline const std::vector<OutputFormat>& output_formats() {
  // clang-format off
  static const std::vector<OutputFormat> table = {
    {.flag = "--junit", .bundle_file = "",
     .help = "Also write the report as JUnit XML (components, findings, self-test, policy)",
     .render = [](const nlohmann::json& document, FailOn fail_on) { return render_junit(document, fail_on); }},
    {.flag = "--markdown", .bundle_file = "report.md",
     .help = "Also write the report as Markdown",
     .render = [](const nlohmann::json& document, FailOn) { return render_markdown(document); }},
    {.flag = "--html", .bundle_file = "report.html",
     .help = "Also write the report as one self-contained HTML page",
     .render = [](const nlohmann::json& document, FailOn) { return render_html(document); }},
    {.flag = "--prometheus", .bundle_file = "",
     .help = "Also write the report as Prometheus metrics for node_exporter's textfile collector "
             "(written to a temporary file, then renamed)",
     .render = [](const nlohmann::json& document, FailOn) {
       const auto now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
       return render_prometheus(document, now);
     }},
  };
  // clang-format on
  return table;
}

} // namespace cudadiag::report
