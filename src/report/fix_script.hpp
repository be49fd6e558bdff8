#pragma once
// `cudadiag fix`: the best plan (findings/fix_plan.hpp, the first of its ranked plans) of each
// warning and error of a report, as a commented POSIX shell script that cudadiag never runs, or as
// a JSON document for tools (docs/schema/fix.schema.json). An action two findings share is printed
// once, under the first, and the second's comment says so. Findings without a plan are listed as
// comments with their prose remedy.

#include "report/report.hpp"

#include <string>

namespace cudadiag::report {

// Whether any warning or error of `report` carries a plan (`cudadiag fix` exits 1 then, else 0).
bool has_fix(const Report& report);

// The script: a header saying nothing was run, then per planned finding a comment naming it
// (id, severity, message), the plan's why, who runs it and what it touches, and its shell lines.
std::string render_fix_script(const Report& report);

// {"schema_version": 1, "planned": [{"id", "severity", "message", "components", "plan"}],
//  "unplanned": [{"id", "severity", "message", "remedy"}], "script": "..."}, two-space indented.
std::string render_fix_json(const Report& report);

} // namespace cudadiag::report
