#pragma once
// The findings reference (docs/findings.md, compiled into the library at build time: the page is
// the one source of `cudadiag explain ID` and of the installed documentation).

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::findings {

// docs/findings.md as it was when this library was built.
std::string_view reference_markdown();

// The ids that have a section ("## `id`") in the reference, in page order.
std::vector<std::string> documented_ids();

// The section of `id` (its "## `id`" heading to the next heading), as plain terminal text: the
// heading becomes "id", Markdown emphasis and code marks are dropped, paragraphs are kept. nullopt
// when the page has no section for it.
std::optional<std::string> reference_text(std::string_view id);

} // namespace cudadiag::findings
