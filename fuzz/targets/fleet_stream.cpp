// `cudadiag fleet` input: a stream of reports from srun --label / kubectl --prefix / .jsonl, split
// into documents per launcher prefix, each read by the fast pruned parser. The vectorised bracket
// scan must agree with the scalar one on every input (a disagreement aborts).
#include "fleet/json_scan.hpp"
#include "fleet/json_stream.hpp"
#include "fleet/report_reader.hpp"
#include "targets.hpp"

#include <cstdlib>

namespace cudadiag::fuzz {

namespace {

void compare_scans(std::string_view text) {
  fleet::json_scan::State fast{1, false, false};
  fleet::json_scan::State scalar = fast;
  while (true) {
    const auto fast_end = fleet::json_scan::advance(fast, text);
    const auto scalar_end = fleet::json_scan::advance_scalar(scalar, text);
    if (fast_end != scalar_end || fast.depth != scalar.depth || fast.in_string != scalar.in_string ||
        fast.escaped != scalar.escaped) {
      std::abort();
    }
    if (fast_end == fleet::json_scan::npos) {
      return;
    }
    text.remove_prefix(fast_end + 1);
    fast.depth = scalar.depth = 1;
  }
}

} // namespace

int fleet_stream(const std::uint8_t* data, std::size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  compare_scans(rest);
  fleet::StreamSplitter splitter("fuzz.jsonl");
  std::vector<fleet::StreamDocument> done;
  std::vector<fleet::StrayText> stray;
  while (!rest.empty()) {
    const auto newline = rest.find('\n');
    splitter.add_line(rest.substr(0, newline), done, stray);
    rest = newline == std::string_view::npos ? std::string_view() : rest.substr(newline + 1);
  }
  splitter.finish(stray);
  for (const auto& document : done) {
    if (const auto report = fleet::read_pruned_report(document.text)) {
      static_cast<void>(report->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
  }
  return 0;
}

} // namespace cudadiag::fuzz
