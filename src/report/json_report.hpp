#pragma once
// The JSON rendering of a report (schema_version 1, docs/schema/report.schema.json).
// Every string is valid UTF-8: bytes that are not are written as the text "\xNN".

#include "core/json_text.hpp"
#include "report/report.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::report {

inline constexpr int k_schema_version = 1;

using cudadiag::to_valid_utf8; // the report's spelling of text: invalid UTF-8 bytes as "\xNN"

// One component's object, written where `stream` stands.
void write_component(JsonStream& stream, const discovery::ComponentResult& component);
nlohmann::json finding_to_json(const findings::Finding& finding);
// A finding's plans as the JSON's `findings[].fix` (docs/schema/report.schema.json): [] for none.
nlohmann::json fix_to_json(const std::vector<findings::Plan>& plans);
// The report as a tree, for the readers of a document (policies, JUnit/HTML/Markdown, bundles):
// render_json's text, parsed.
nlohmann::json report_to_json(const Report& report);

// The report's "policy" object: {"sources": [...], "fail_on": "error"|"warning",
// "requirements": [{"spec", "met", "detail"}]}.
nlohmann::json policy_to_json(const PolicyResult& policy, std::string_view fail_on);

// Two-space indented JSON document with a trailing newline.
std::string render_json(const Report& report);
// The same document in pieces, to be written out one after the other: the components' and the
// closures' texts as they were written, each on a thread (JsonStream::hand_over_arrays_to).
std::vector<std::string> render_json_pieces(const Report& report);

} // namespace cudadiag::report
