#pragma once
// A report laid out for reading, independent of the output format: a verdict first, then sections
// of notes, tables and findings. The Markdown and HTML renderers format this layout; neither reads
// the report document itself, so both always show the same facts in the same order.

#include "report/summary_status.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace cudadiag::report {

// How a cell or a verdict should stand out; renderers map it to colour or emphasis.
enum class Tone { plain, ok, warning, error, muted };

struct Cell {
  std::string text; // the main text ("13.0.88 · site-packages")
  std::string code; // an optional literal shown under it as code (a path); "" for none
  Tone tone = Tone::plain;
};

struct Table {
  std::vector<std::string> headers;
  std::vector<std::vector<Cell>> rows; // every row has headers.size() cells
};

struct FindingView {
  std::string anchor;   // "finding-3": unique within the layout
  std::string severity; // "error" | "warning" | "info"
  std::string id;
  std::string message;
  std::string remedy;
  std::vector<std::string> components;
};

struct Section {
  std::string anchor;             // "components"
  std::string title;              // "Components"
  std::vector<std::string> notes; // paragraphs before the table
  std::vector<Table> tables;
  std::vector<FindingView> findings;
  std::string empty_text; // shown when the section has no table rows and no findings
};

struct Verdict {
  std::optional<SummaryStatus> status; // nullopt: the report names none this release knows
  std::string status_text;             // as the report spells it ("unknown" when it names none)
  std::string headline;                // "2 errors, 3 warnings, 9 info findings (exit code 1)"
  std::vector<std::pair<std::string, std::string>> facts; // ("Driver", "580.159.04 (NVML), CUDA 13.0"), ...
  std::vector<FindingView> attention; // error and warning findings, errors first (they link to Findings)
};

struct ReportLayout {
  std::string title; // "cudadiag report: <hostname>"
  std::string tool;  // "cudadiag 0.1.0"
  Verdict verdict;
  // Components, Verification, Devices, Findings, Self-test, Policy (when the report has one), Python
  // frameworks, Environment.
  std::vector<Section> sections;
};

ReportLayout lay_out_report(const nlohmann::json& report);

} // namespace cudadiag::report
