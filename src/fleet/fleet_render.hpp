#pragma once
// Renderings of a FleetSummary: terminal text (a verdict line, nodes with errors first, the
// majority, each differing group with what differs, self-test spreads per GPU model, input
// problems), JSON (`cudadiag fleet --json`; docs/schema/fleet.schema.json) and one self-contained
// HTML page (`--html FILE`). Long node lists are shortened in text and HTML ("and 497 more"),
// never in JSON.

#include "fleet/fleet_summary.hpp"
#include "report/terminal_style.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace cudadiag::fleet {

inline constexpr int k_fleet_schema_version = 1;

std::string render_fleet_text(const FleetSummary& summary, report::TextStyle style);
nlohmann::json fleet_to_json(const FleetSummary& summary);
std::string render_fleet_html(const FleetSummary& summary);

// "node[01-03,07],gpu-a" style: names sharing a prefix and differing in a trailing number are
// folded into ranges (as Slurm writes host lists); others are listed; order is kept per prefix.
std::string compress_names(const std::vector<std::string>& names);

} // namespace cudadiag::fleet
