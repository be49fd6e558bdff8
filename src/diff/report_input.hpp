#pragma once
// Reading the two sides of `cudadiag diff`: a report JSON file (what `cudadiag --json` printed) or
// a support bundle (.tar.gz; its report.json is used). Every failure is a message a user can act
// on: which file, and whether it is unreadable, not JSON, truncated JSON, JSON that is not a
// cudadiag report, or a bundle without a report.

#include "core/expected.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <optional>
#include <string>

namespace cudadiag::diff {

// Inputs larger than this are refused (reports are a few hundred KiB; bundles a few MiB).
inline constexpr std::size_t k_max_input_bytes = std::size_t{256} << 20U;
// Reports nest about 8 levels deep; a document nested deeper than this is refused, not parsed.
inline constexpr std::size_t k_max_report_depth = 128;

struct LoadedReport {
  std::string label;       // the path as given
  std::string kind;        // "report" or "bundle"
  nlohmann::json document; // the report; a cudadiag report of some schema_version
  int schema_version = 0;
};

// Reads `path`. Errors read like "B (/tmp/x.json) is truncated JSON: it ends after 1200 bytes,
// inside a value", "A (notes.txt) is not JSON (syntax error at byte 1)", "A (x.json) is JSON nested
// deeper than 128 levels" or "... holds a number out of range at byte 9"; `side` is "A" or "B".
Expected<LoadedReport> load_report(const std::string& path, std::string_view side);

// load_report for bytes already read from `path` (a report's JSON or a bundle's gzip bytes).
Expected<LoadedReport> report_from_bytes(std::string bytes, const std::string& path, std::string_view side);

// The text of the report.json inside a bundle's gzip-compressed bytes; `name` says which file in
// the Error ("NAME is a damaged gzip file: ...", "... an archive without a report.json").
Expected<std::string> report_text_from_bundle(const std::string& bytes, const std::string& name);

// nullopt when the two can be compared; else why not: both must carry the schema_version this
// cudadiag reads (report::k_schema_version).
std::optional<std::string> incomparable(const LoadedReport& a, const LoadedReport& b);

} // namespace cudadiag::diff
