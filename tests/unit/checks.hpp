#pragma once
// Small helpers that several unit test files share (the unit tests build as unity batches, so a
// helper defined in two test files would be defined twice in one batch).

#include "core/filesystem.hpp"
#include "findings/findings.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <sstream>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::testing {

// Whether `part` occurs in `text`.
inline bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

// The first finding with that id, or nullptr.
inline const findings::Finding* with_id(const std::vector<findings::Finding>& found, std::string_view id) {
  for (const auto& finding : found) {
    if (finding.id == id) {
      return &finding;
    }
  }
  return nullptr;
}

// The real report of an H200 host (docs/examples/h200-host-report.json) as a JSON document.
// The cells of a Markdown table row ("| a | `b` |"), each without its padding and backticks.
inline std::vector<std::string> markdown_cells(const std::string& line) {
  std::vector<std::string> cells;
  std::stringstream row(line.substr(1));
  for (std::string cell; std::getline(row, cell, '|');) {
    const auto first = cell.find_first_not_of(" `");
    const auto last = cell.find_last_not_of(" `");
    cells.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
  }
  return cells;
}

inline nlohmann::json h200_example_report() {
  const auto text =
      fs::read_file_prefix(CUDADIAG_SOURCE_DIR "/docs/examples/h200-host-report.json", 1U << 24U);
  REQUIRE(text);
  return nlohmann::json::parse(*text);
}

} // namespace cudadiag::testing
