#pragma once
// Renderings of a ReportDiff: for the terminal (grouped by area, most likely cause first; colour
// only when the caller's TextStyle says so) and as JSON (`cudadiag diff --json`).

#include "diff/report_diff.hpp"
#include "report/terminal_style.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace cudadiag::diff {

std::string render_diff_text(const ReportDiff& diff, report::TextStyle style);

// The schema_version of diff_to_json (docs/schema/diff.schema.json).
inline constexpr int k_diff_schema_version = 1;
// {"schema_version": 1, "tool": {name, version}, "equivalent", "metric_tolerance", "a": {label, kind,
// hostname, distro, tool_version, status,
//  errors, warnings}, "b": {...}, "differences": [{"area", "subject", "aspect", "a", "b", "note"}]}
// with differences in the same order as the text; absent values are null.
nlohmann::json diff_to_json(const ReportDiff& diff);

} // namespace cudadiag::diff
