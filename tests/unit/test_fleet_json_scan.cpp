// The stream splitter's bracket/string state machine: the vectorised scan agrees with the scalar
// one byte for byte — on hand-picked edge cases and on generated JSON-like text cut into pieces at
// every kind of place (inside strings, after a backslash, at block boundaries).
#include "fleet/json_scan.hpp"

#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

namespace {

namespace json_scan = cudadiag::fleet::json_scan;

struct Outcome {
  std::vector<std::size_t> ends; // offset of each close, per piece
  int depth;
  bool in_string;
  bool escaped;
  bool operator==(const Outcome&) const = default;
};

// Feeds the pieces in order; after a close, goes on after it with the state left (as the splitter
// does with a fresh state, but carrying the state on checks more of the machine).
template <typename Advance> Outcome run(const std::vector<std::string>& pieces, Advance advance) {
  json_scan::State state;
  Outcome outcome{};
  for (const auto& piece : pieces) {
    std::string_view rest = piece;
    std::size_t consumed = 0;
    while (true) {
      const auto end = advance(state, rest);
      if (end == json_scan::npos) {
        outcome.ends.push_back(json_scan::npos);
        break;
      }
      outcome.ends.push_back(consumed + end);
      consumed += end + 1;
      rest.remove_prefix(end + 1);
      state.depth = 1; // reopen so that later closes are found too
    }
  }
  outcome.depth = state.depth;
  outcome.in_string = state.in_string;
  outcome.escaped = state.escaped;
  return outcome;
}

Outcome scalar(const std::vector<std::string>& pieces) {
  return run(pieces, json_scan::advance_scalar);
}
Outcome in_use(const std::vector<std::string>& pieces) {
  return run(pieces, json_scan::advance);
}

} // namespace

TEST_CASE("fleet json_scan: where a document closes") {
  json_scan::State state;
  const std::string_view document = R"({"a": [1, {"b": "}"}], "c": "\"}"} trailing)";
  CHECK(json_scan::advance(state, document) == document.find(" trailing") - 1);
  CHECK(state.depth == 0);

  json_scan::State open;
  CHECK(json_scan::advance(open, R"({"a": "x\)") == json_scan::npos);
  CHECK(open.in_string);
  CHECK(open.escaped);
  CHECK(json_scan::advance(open, R"("}"})") == 3); // the escaped quote does not end the string
  CHECK(open.depth == 0);
}

TEST_CASE("fleet json_scan: the vectorised scan agrees with the scalar one") {
  INFO("vectorised: " << json_scan::vectorised());
  const std::vector<std::vector<std::string>> cases = {
      {""},
      {"{"},
      {"{\"a\\\\\": 1}"},
      {"{\"", "\\", "\"", "\"}"},
      {"{\"0123456789abcd\\", "\"}\"}"},
      {std::string(15, ' ') + "{" + std::string(16, 'x') + "}"},
      {"{\"" + std::string(31, 'x') + "\\\"" + "}\"}"},
      {"}}}{"},
      {"\\{}"},
  };
  for (const auto& pieces : cases) {
    CAPTURE(pieces.front());
    CHECK(in_use(pieces) == scalar(pieces));
  }

  std::mt19937 random(20261202);
  const std::string alphabet("{}[]\"\\ax :,\0", 12); // the structural bytes, often, and a zero byte
  for (int round = 0; round < 3000; ++round) {
    std::string text(std::uniform_int_distribution<std::size_t>(0, 200)(random), ' ');
    for (auto& c : text) {
      c = alphabet[std::uniform_int_distribution<std::size_t>(0, alphabet.size() - 1)(random)];
    }
    std::vector<std::string> pieces{"{"}; // every input opens a document first
    for (std::size_t at = 0; at < text.size();) {
      const auto length = std::uniform_int_distribution<std::size_t>(0, 40)(random);
      pieces.push_back(text.substr(at, length));
      at += length;
    }
    CAPTURE(text);
    REQUIRE(in_use(pieces) == scalar(pieces));
  }
}

namespace {

// A text's lines scanned one after another, with the state carried over (as the splitter does for
// one source): each line's answer.
template <typename AdvanceLine>
std::vector<std::size_t> run_lines(std::string_view text, AdvanceLine advance_line) {
  json_scan::State state{1, false, false};
  std::vector<std::size_t> out;
  for (std::size_t at = 0; at <= text.size();) {
    const auto scanned = advance_line(state, text.substr(at));
    out.push_back(scanned.close);
    out.push_back(scanned.line_end);
    if (scanned.close != json_scan::npos) {
      at += scanned.close + 1;
      state.depth = 1;
      continue;
    }
    at += scanned.line_end + 1;
  }
  out.push_back(static_cast<std::size_t>(state.depth));
  out.push_back(state.in_string ? 1U : 0U);
  out.push_back(state.escaped ? 1U : 0U);
  return out;
}

} // namespace

TEST_CASE("fleet json_scan: a line's piece, scanned to its close or its end") {
  json_scan::State state{1, false, false};
  const auto closed = json_scan::advance_line(state, "\"a\": [1, \"]\"]}, x\n{");
  CHECK(closed.close == 13);
  CHECK(state.depth == 0);
  json_scan::State open{1, false, false};
  const auto line = json_scan::advance_line(open, "\"a\\\n\"}");
  CHECK(line.close == json_scan::npos);
  CHECK(line.line_end == 3);
  CHECK(open.escaped); // the escape reaches over the line break, as advance() leaves it for the next piece
  CHECK(json_scan::advance_line(open, "").line_end == 0);
}

TEST_CASE("fleet json_scan: the vectorised line scan agrees with the scalar one") {
  const std::vector<std::string> cases = {
      "",
      "\n",
      "{\n}\n",
      std::string(63, ' ') + "\n}",
      std::string(64, ' ') + "}",
      "\"" + std::string(62, 'x') + "\\\n\"}",
      "\"" + std::string(63, 'x') + "\\" + "\"}\"}",
      "\\\n\\\n\"\\\n\"}",
  };
  for (const auto& text : cases) {
    CAPTURE(text);
    CHECK(run_lines(text, json_scan::advance_line) == run_lines(text, json_scan::advance_line_scalar));
  }
  std::mt19937 random(20261203);
  const std::string alphabet("{}[]\"\\ax :,\n\0", 13);
  for (int round = 0; round < 3000; ++round) {
    std::string text(std::uniform_int_distribution<std::size_t>(0, 300)(random), ' ');
    for (auto& c : text) {
      c = alphabet[std::uniform_int_distribution<std::size_t>(0, alphabet.size() - 1)(random)];
    }
    CAPTURE(text);
    REQUIRE(run_lines(text, json_scan::advance_line) == run_lines(text, json_scan::advance_line_scalar));
  }
}
