#pragma once
// A report's verdict (its summary.status): error when a finding is an error, warning when one is a
// warning, else ok. Renderers, fleet and diff compare it as this enum; its names are spelled by the
// report's JSON codec and parsed back only where a saved report is read (fleet, diff, the layout).

#include <optional>
#include <string_view>

namespace cudadiag::report {

enum class SummaryStatus { ok, warning, error };
// The name the JSON report spells it with: "ok", "warning", "error".
std::string_view to_string(SummaryStatus status);
// The status `text` names; nullopt for any other text.
std::optional<SummaryStatus> parse_summary_status(std::string_view text);

} // namespace cudadiag::report
