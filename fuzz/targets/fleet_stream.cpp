// `cudadiag fleet` input: a stream of reports from srun --label / kubectl --prefix / .jsonl, split
// into documents per launcher prefix, each read by the fast pruned parser.
#include "fleet/json_stream.hpp"
#include "fleet/report_reader.hpp"
#include "targets.hpp"

namespace cudadiag::fuzz {

int fleet_stream(const std::uint8_t* data, std::size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
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
