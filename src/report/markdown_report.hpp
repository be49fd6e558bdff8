#pragma once
// The report as GitHub-flavoured Markdown, for pasting into an issue or a ticket: the verdict
// first, then components, devices, findings with remedies, self-test figures, policy results and
// the environment (see report_layout.hpp). Reads the report's JSON document.

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace cudadiag::report {

// `text` safe as Markdown prose or a table cell: characters with Markdown meaning are
// backslash-escaped, line breaks become <br>.
std::string markdown_escape(std::string_view text);
// `text` as an inline code span that survives backticks and '|' inside it (in a table cell).
std::string markdown_code(std::string_view text);

} // namespace cudadiag::report
