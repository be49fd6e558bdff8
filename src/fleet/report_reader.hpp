#pragma once
// Parsing one node's report for the fleet, fast and small: 10,000 reports of ~100 KiB each must be
// read in seconds, so the parser (simdjson when the build found it, else nlohmann) keeps only what
// the fleet reads — identity, devices, verification results, components' chosen answers, finding
// ids and severities, self-test statuses and headline figures — and drops search traces, candidate
// lists, paths, evidence, messages, remedies and the environment. `cudadiag diff` of whole reports is done
// separately, from the original text, for the few group representatives.

#include "core/expected.hpp"

#include <nlohmann/json.hpp>

#include <string_view>

namespace cudadiag::fleet {

// The report in `text`, pruned as above. An Error says why it is not a cudadiag report ("not
// JSON (…)", "JSON but not a cudadiag report", "schema_version 2; this cudadiag reads 1").
Expected<nlohmann::json> read_pruned_report(std::string_view text);

// The same for a document the caller owns: parsed in place (no copy), after growing `text`'s
// capacity by the parser's padding if it has less room to spare. `text` keeps its contents.
Expected<nlohmann::json> read_pruned_report_in_place(std::string& text);

// The report in `text` with only the members node_facts() reads (node_facts_fields(), each pruned
// as above below the path's end) and those that say it is a cudadiag report: a few KiB, however
// large the report. The same errors as read_pruned_report; the same facts from node_facts().
Expected<nlohmann::json> read_fleet_fields(std::string_view text);

// The same for a document the caller owns, parsed in place as read_pruned_report_in_place.
Expected<nlohmann::json> read_fleet_fields_in_place(std::string& text);

// Whether a key is among those the pruned form drops (at any depth).
bool is_pruned_key(std::string_view key);

// The name of the parser in use: "simdjson" or "nlohmann" (the benchmark prints it).
std::string_view parser_name();

} // namespace cudadiag::fleet
