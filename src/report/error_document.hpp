#pragma once
// The JSON document `--json` prints when a command fails before it has a report (a usage error,
// an unreadable or invalid input file, a process `inspect` cannot read, an internal error), so that
// stdout under --json always carries one JSON document. Schema: docs/schema/error.schema.json.
//
//   {"schema_version": 1, "tool": {"name": "cudadiag", "version": "0.1.0"},
//    "error": {"kind": "usage", "message": "...", "exit_code": 2},
//    "summary": {"status": "error", "exit_code": 2}}

#include <nlohmann/json.hpp>

#include <string_view>

namespace cudadiag::report {

// kind from the exit code: 1 "failed" (e.g. the process to inspect is gone), 2 "usage" (bad
// arguments, or an input file that cannot be read or is not valid), 3 "internal"; other codes
// "failed". `message` is made valid UTF-8.
nlohmann::json error_document(std::string_view message, int exit_code);

} // namespace cudadiag::report
