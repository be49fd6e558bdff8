#pragma once
// The report as one self-contained HTML page (inline CSS; no scripts, fonts, images or links to
// anything outside the file), for a support ticket or a CI artifact. The verdict comes first — a
// coloured banner with the counts, the key facts and links to every error and warning — then
// components, devices, findings with remedies, self-test figures, policy results and the
// environment (see report_layout.hpp). Reads the report's JSON document.

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace cudadiag::report {

// `text` with &, <, >, " and ' replaced by character references; control characters other than
// tab and newline (not allowed in HTML text) become U+FFFD.
std::string html_escape(std::string_view text);

} // namespace cudadiag::report
