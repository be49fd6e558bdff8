#include "report/output_formats.hpp"

#include "report/html_report.hpp"
#include "report/junit_report.hpp"
#include "report/markdown_report.hpp"
#include "report/prometheus_textfile.hpp"

#include <chrono>

namespace cudadiag::report {

const std::vector<OutputFormat>& output_formats() {
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
