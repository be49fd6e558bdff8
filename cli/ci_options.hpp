#pragma once
// The report's CI options — policy gates (--require, --policy) and report files (--junit, --html,
// --markdown, --prometheus) and the exit style — and what the report command does with them once the report is made. They apply to
// the full report (`cudadiag`) and to `cudadiag bundle`.

#include "core/expected.hpp"
#include "policy/policy_file.hpp"
#include "report/report.hpp"

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace cudadiag::cli {

struct CiOptions {
  std::vector<std::string> requirements; // --require, repeatable
  std::string policy_file;               // --policy
  std::string junit;                     // --junit FILE
  std::string html;                      // --html FILE
  std::string markdown;                  // --markdown FILE
  std::string prometheus;                // --prometheus FILE (node_exporter textfile collector)
  std::string exit_style = "cudadiag";   // --exit-style cudadiag|npd|nagios (report/exit_style.hpp)

  [[nodiscard]] bool any() const;
};

// Registers the options on the top-level app (they are global, like --json).
void add_ci_options(CLI::App& app, CiOptions& options);

// The policy the options describe. An Error (a malformed spec, an unreadable or invalid policy
// file) is a usage error: it names the bad token or file.
Expected<policy::Policy> load_policy(const CiOptions& options);

// What the report command prints and returns under --exit-style: the exit code in that style and,
// for npd and nagios without --json, the one status line that replaces the report on stdout.
struct StyledResult {
  int exit_code = 0;
  std::optional<std::string> status_line;
};
StyledResult styled_result(const nlohmann::json& document, int exit_code, bool json, const CiOptions& options);

// Applies the policy to `report` (policy.unmet findings, summary under the stricter fail-on
// level), writes the --junit, --html, --markdown and --prometheus files, and returns the report's JSON document
// (with its "policy" object). An Error names the output file that could not be written.
Expected<nlohmann::json> gate_and_write(report::Report& report, const policy::Policy& policy,
                                        report::FailOn fail_on, const CiOptions& options);

} // namespace cudadiag::cli
