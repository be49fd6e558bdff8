#pragma once
// The JSON rendering of a report (schema_version 1, docs/schema/report.schema.json).
// Every string is valid UTF-8: bytes that are not are written as the text "\xNN".

#include "report/report.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace cudadiag::report {

inline constexpr int k_schema_version = 1;

// `text` with every byte that is not part of valid UTF-8 replaced by the four characters \xNN.
std::string to_valid_utf8(std::string_view text);

nlohmann::json component_to_json(const discovery::ComponentResult& component);
nlohmann::json finding_to_json(const findings::Finding& finding);
nlohmann::json report_to_json(const Report& report);

// Two-space indented JSON document with a trailing newline.
std::string render_json(const Report& report);

} // namespace cudadiag::report
