// `cudadiag fleet` input: a stream of reports from srun --label / kubectl --prefix / .jsonl, split
// into documents per launcher prefix, each read by the fast pruned parser and by the narrower one
// the fleet uses. The vectorised bracket scans (per piece and per line) must agree with the scalar
// ones, and the splitter fed blocks of lines with itself fed one line at a time, on every input (a
// disagreement aborts).
#include "fleet/json_scan.hpp"
#include "fleet/json_stream.hpp"
#include "fleet/node_facts.hpp"
#include "fleet/report_reader.hpp"
#include "targets.hpp"

#include <algorithm>

namespace cudadiag::fuzz {

namespace {

bool same_state(const fleet::json_scan::State& a, const fleet::json_scan::State& b) {
  return a.depth == b.depth && a.in_string == b.in_string && a.escaped == b.escaped;
}

void compare_scans(std::string_view text) {
  fleet::json_scan::State fast{1, false, false};
  fleet::json_scan::State scalar = fast;
  while (true) {
    const auto fast_end = fleet::json_scan::advance(fast, text);
    const auto scalar_end = fleet::json_scan::advance_scalar(scalar, text);
    check(fast_end == scalar_end && same_state(fast, scalar), "the block scan and the scalar scan disagree");
    if (fast_end == fleet::json_scan::npos) {
      return;
    }
    text.remove_prefix(fast_end + 1);
    fast.depth = scalar.depth = 1;
  }
}

void compare_line_scans(std::string_view text) {
  fleet::json_scan::State fast{1, false, false};
  fleet::json_scan::State scalar = fast;
  while (true) {
    const auto fast_end = fleet::json_scan::advance_line(fast, text);
    const auto scalar_end = fleet::json_scan::advance_line_scalar(scalar, text);
    check(fast_end.close == scalar_end.close && fast_end.line_end == scalar_end.line_end &&
              same_state(fast, scalar),
          "the block line scan and the scalar line scan disagree");
    if (fast_end.close != fleet::json_scan::npos) {
      text.remove_prefix(fast_end.close + 1);
      fast.depth = scalar.depth = 1;
    } else if (fast_end.line_end < text.size()) {
      text.remove_prefix(fast_end.line_end + 1);
    } else {
      return;
    }
  }
}

bool same_split(const std::vector<fleet::StreamDocument>& documents,
                const std::vector<fleet::StrayText>& stray,
                const std::vector<fleet::StreamDocument>& other_documents,
                const std::vector<fleet::StrayText>& other_stray) {
  return std::equal(documents.begin(), documents.end(), other_documents.begin(), other_documents.end(),
                    [](const auto& a, const auto& b) {
                      return a.source == b.source && a.first_line == b.first_line && a.text == b.text;
                    }) &&
         std::equal(stray.begin(), stray.end(), other_stray.begin(), other_stray.end(),
                    [](const auto& a, const auto& b) {
                      return a.source == b.source && a.line == b.line && a.text == b.text;
                    });
}

// The whole input through add_lines in one block, and through add_lines_parallel on 3 threads
// however small it is, against the line-at-a-time split.
void compare_block_split(std::string_view text, const std::vector<fleet::StreamDocument>& documents,
                         const std::vector<fleet::StrayText>& stray) {
  fleet::StreamSplitter splitter("fuzz.jsonl");
  std::vector<fleet::StreamDocument> block_documents;
  std::vector<fleet::StrayText> block_stray;
  splitter.add_lines(text, block_documents, block_stray);
  splitter.finish(block_stray);
  check(same_split(documents, stray, block_documents, block_stray),
        "add_lines and add_line split the stream differently");
  fleet::StreamSplitter parallel("fuzz.jsonl");
  std::vector<fleet::StreamDocument> parallel_documents;
  std::vector<fleet::StrayText> parallel_stray;
  parallel.add_lines_parallel(text, 3, parallel_documents, parallel_stray, 0);
  parallel.finish(parallel_stray);
  check(same_split(documents, stray, parallel_documents, parallel_stray),
        "add_lines_parallel and add_line split the stream differently");
}

} // namespace

int fleet_stream(const std::uint8_t* data, std::size_t size) {
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  compare_scans(rest);
  compare_line_scans(rest);
  const auto input = rest;
  fleet::StreamSplitter splitter("fuzz.jsonl");
  std::vector<fleet::StreamDocument> done;
  std::vector<fleet::StrayText> stray;
  while (!rest.empty()) {
    const auto newline = rest.find('\n');
    splitter.add_line(rest.substr(0, newline), done, stray);
    rest = newline == std::string_view::npos ? std::string_view() : rest.substr(newline + 1);
  }
  splitter.finish(stray);
  compare_block_split(input, done, stray);
  for (const auto& document : done) {
    if (const auto report = fleet::read_pruned_report(document.text)) {
      static_cast<void>(report->dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
    if (const auto fields = fleet::read_fleet_fields(document.text)) {
      static_cast<void>(fleet::node_facts(*fields, "fuzz"));
    }
  }
  return 0;
}

} // namespace cudadiag::fuzz
