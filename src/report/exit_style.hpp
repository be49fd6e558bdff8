#pragma once
// Exit codes for node health frameworks (`--exit-style`), mapped from cudadiag's own
// (0 no error finding, 1 error finding or a warning under --fail-on warning, 2 usage, 3 internal):
//   cudadiag  as above (the default)
//   npd       Kubernetes node-problem-detector custom plugins: 0 OK, 1 problem, 2 unknown
//             (cudadiag 0 -> 0, 1 -> 1, 2 and 3 -> 2)
//   nagios    Nagios/Icinga/Sensu plugins: 0 OK, 1 WARNING, 2 CRITICAL, 3 UNKNOWN (error findings
//             or exit 1 -> 2; warnings only -> 1; none -> 0; usage and internal errors -> 3)
// The CLI maps the report's and selftest's codes; an error in the command line itself exits 2
// before any style is known. With a style, stdout carries one status line (what NPD shows as the condition's
// message and Nagios as the service output) unless --json is given.

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>

namespace cudadiag::report {

enum class ExitStyle { cudadiag, npd, nagios };

// "cudadiag", "npd", "nagios" -> the style; nullopt for anything else.
std::optional<ExitStyle> parse_exit_style(std::string_view name);

// The exit code in `style` for cudadiag's `exit_code`, given the report's error and warning counts.
int styled_exit_code(ExitStyle style, int exit_code, long long errors, long long warnings);

// The one status line: "cudadiag OK: no findings", "cudadiag CRITICAL: 1 error: driver.init_failed
// (...); 2 warnings | errors=1 warnings=2 score=94.8" (Nagios adds performance data after '|').
std::string status_line(ExitStyle style, const nlohmann::json& report, int styled_code);

} // namespace cudadiag::report
