#pragma once
// `cudadiag bundle`: everything a support engineer asks for, in one .tar.gz, with secrets
// redacted. Layout (one top-level directory named after the archive):
//   manifest.json       every file, how it was obtained and what was redacted in it; what could
//                       not be collected and why; the redaction rules
//   report.json         the report (schema_version 1), redacted
//   report.md, .html    the same, rendered: every output format with a bundle file
//                       (report/output_formats.hpp: Markdown and HTML, verdict first)
//   trace.txt           every component's search trace and candidates
//   evidence/*.txt      raw evidence (see evidence.hpp)
// Every file passes through the Redactor; the archive is written atomically (temporary file in
// the target directory, then rename), so a failed write leaves nothing behind.

#include "bundle/evidence.hpp"
#include "bundle/redaction.hpp"
#include "core/environment.hpp"
#include "core/expected.hpp"
#include "report/report.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace cudadiag::bundle {

inline constexpr int k_bundle_format_version = 1;

struct BundleOptions {
  // The archive path; "" = default_bundle_name() in env.cwd; a directory (an existing one, or any
  // path ending in '/') = default_bundle_name() inside it (which must exist).
  std::string output;
  RedactionOptions redaction;
  EvidenceSources sources;
  std::int64_t created_unix = 0; // creation time (seconds since the epoch): manifest and tar mtimes
  report::FailOn fail_on = report::FailOn::error; // the level of the report's summary, for its renderings
};

struct AssembledBundle {
  std::vector<BundleFile> files;           // redacted, manifest.json first
  std::vector<NotCollected> not_collected; // redacted likewise
};

// The bundle's files. `report` is the unredacted report document (evidence collectors need its
// real paths); everything returned has been through the Redactor.
AssembledBundle assemble_bundle(const nlohmann::json& report, const Environment& env,
                                const BundleOptions& options);

struct BundleResult {
  std::string path;               // where the archive was written
  std::size_t bytes = 0;          // its size
  std::vector<std::string> files; // member names inside the bundle directory
  RedactionCounts redacted;       // totals over every file
  std::vector<NotCollected> not_collected;
};

// Assembles, archives, compresses and writes the bundle. Errors name the target and the reason;
// on error no file is left at (or next to) the target path.
Expected<BundleResult> write_bundle(const nlohmann::json& report, const Environment& env,
                                    const BundleOptions& options);

// "cudadiag-bundle-<hostname>-<YYYYmmdd-HHMMSS>.tar.gz" (UTC), the hostname reduced to [A-Za-z0-9.-].
std::string default_bundle_name(const nlohmann::json& report, std::int64_t created_unix);

// The name of the member holding the report inside a bundle archive's entries: "<dir>/report.json"
// (or "report.json" at the top), as listed by the manifest.
inline constexpr std::string_view k_report_member = "report.json";

} // namespace cudadiag::bundle
