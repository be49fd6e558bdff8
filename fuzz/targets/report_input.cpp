// diff's inputs from bytes (a report's JSON or a bundle's .tar.gz), and the diff of what loads
// against itself and against the committed example report: the diff reads every field it compares
// from hostile documents.
#include "diff/report_input.hpp"

#include "diff/diff_render.hpp"
#include "diff/report_diff.hpp"
#include "targets.hpp"

namespace cudadiag::fuzz {

int report_input(const std::uint8_t* data, std::size_t size) {
  auto loaded =
      diff::report_from_bytes(std::string(reinterpret_cast<const char*>(data), size), "fuzz.json", "A");
  if (!loaded) {
    return 0;
  }
  const nlohmann::json minimal = {{"schema_version", 1},
                                  {"tool", {{"name", "cudadiag"}, {"version", "0.1.0"}}}};
  const nlohmann::json& document = loaded->document;
  for (const auto* other : {&document, &minimal}) {
    const auto result = diff::diff_reports(document, *other);
    static_cast<void>(diff::render_diff_text(result, report::TextStyle{true}));
    static_cast<void>(
        diff::diff_to_json(result).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  }
  return 0;
}

} // namespace cudadiag::fuzz
