// Splitting launcher output into node documents: srun --label and kubectl --prefix lines,
// interleaved, pretty-printed and split into pieces; stray text and cut-off documents reported.
#include "fleet/json_stream.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

namespace {

using cudadiag::fleet::split_prefix;
using cudadiag::fleet::StrayText;
using cudadiag::fleet::StreamDocument;
using cudadiag::fleet::StreamSplitter;

struct Split {
  std::vector<StreamDocument> documents;
  std::vector<StrayText> stray;
};

Split split(const std::vector<std::string>& lines) {
  StreamSplitter splitter("stdin");
  Split out;
  for (const auto& line : lines) {
    splitter.add_line(line, out.documents, out.stray);
  }
  splitter.finish(out.stray);
  return out;
}

} // namespace

TEST_CASE("fleet stream: launcher prefixes") {
  CHECK(split_prefix("0: {").label() == "task 0");
  CHECK(split_prefix("0: {").key == "0");
  CHECK(split_prefix("  12: {\"a\": 1}").rest == "{\"a\": 1}");
  CHECK(split_prefix("[pod/cudadiag-x7f2k/cudadiag] {}").label() == "pod/cudadiag-x7f2k/cudadiag");
  CHECK(split_prefix("[pod/cudadiag-x7f2k/cudadiag] {}").rest == "{}");
  CHECK(split_prefix("{\"schema_version\": 1}").key.empty());
  CHECK(split_prefix("    1,").key.empty()); // a number in a pretty-printed array
  CHECK(split_prefix("12:30 is not a label").key.empty());
}

TEST_CASE("fleet stream: one document per line, and several on one line") {
  const auto out = split({R"({"a": 1})", "", R"(  {"b": "}"} {"c": [1, {"d": 2}]})"});
  REQUIRE(out.documents.size() == 3);
  CHECK(out.documents[0].text == R"({"a": 1})");
  CHECK(out.documents[1].text == R"({"b": "}"})");
  CHECK(out.documents[2].text == R"({"c": [1, {"d": 2}]})");
  CHECK(out.documents[2].first_line == 3);
  CHECK(out.stray.empty());
}

TEST_CASE("fleet stream: interleaved labelled tasks, long lines split into pieces") {
  // srun --label cuts a long line into pieces, each on a line of its own with the label.
  const auto out = split(
      {"0: {\"node\": \"a\", \"te", "1: {", "0: xt\": \"x\\\"y\"", "1:   \"node\": \"b\"", "0: }", "1: }"});
  REQUIRE(out.documents.size() == 2);
  CHECK(out.documents[0].source == "stdin: task 0");
  CHECK(out.documents[0].text == R"({"node": "a", "text": "x\"y"})");
  CHECK(out.documents[1].source == "stdin: task 1");
  CHECK(out.documents[1].text == R"({  "node": "b"})");
  CHECK(out.stray.empty());
}

TEST_CASE("fleet stream: stray text and a cut-off document are reported, not dropped") {
  const auto out =
      split({"[pod/p1/c] slurmstepd: error: execve(): cudadiag: No such file", "[pod/p2/c] {\"a\": [1,"});
  CHECK(out.documents.empty());
  REQUIRE(out.stray.size() == 2);
  CHECK(out.stray[0].source == "stdin: pod/p1/c");
  CHECK(out.stray[0].text.find("No such file") != std::string::npos);
  CHECK(out.stray[1].source == "stdin: pod/p2/c");
  CHECK(out.stray[1].text.find("cut off") != std::string::npos);
}

namespace {

// The text's lines through add_line, one at a time, and through add_lines and add_lines_parallel in
// blocks of `block_lines` lines (each block but the last ends after a '\n', as the reader hands them over).
bool same_split(const std::string& text, std::size_t block_lines) {
  Split one;
  StreamSplitter by_line("stdin");
  for (std::size_t at = 0; at < text.size();) {
    const auto newline = text.find('\n', at);
    const auto end = newline == std::string::npos ? text.size() : newline;
    by_line.add_line(std::string_view(text).substr(at, end - at), one.documents, one.stray);
    at = end + 1;
  }
  by_line.finish(one.stray);
  // The text in blocks of `block_lines` lines, each handed to `add` in order.
  const auto in_blocks = [&](const auto& add) {
    for (std::size_t at = 0; at < text.size();) {
      std::size_t end = at;
      for (std::size_t line = 0; line < block_lines && end < text.size(); ++line) {
        const auto newline = text.find('\n', end);
        end = newline == std::string::npos ? text.size() : newline + 1;
      }
      add(std::string_view(text).substr(at, end - at));
      at = end;
    }
  };
  Split blocks;
  StreamSplitter by_block("stdin");
  in_blocks([&](std::string_view block) { by_block.add_lines(block, blocks.documents, blocks.stray); });
  by_block.finish(blocks.stray);
  // The same blocks through add_lines_parallel on 3 threads, however small (min_bytes 0).
  Split parallel;
  StreamSplitter by_parallel("stdin");
  in_blocks([&](std::string_view block) {
    by_parallel.add_lines_parallel(block, 3, parallel.documents, parallel.stray, 0);
  });
  by_parallel.finish(parallel.stray);
  auto same_documents = [](const StreamDocument& a, const StreamDocument& b) {
    return a.source == b.source && a.first_line == b.first_line && a.text == b.text;
  };
  auto same_stray = [](const StrayText& a, const StrayText& b) {
    return a.source == b.source && a.line == b.line && a.text == b.text;
  };
  return by_line.lines() == by_block.lines() && by_line.lines() == by_parallel.lines() &&
         std::equal(one.documents.begin(), one.documents.end(), blocks.documents.begin(),
                    blocks.documents.end(), same_documents) &&
         std::equal(one.stray.begin(), one.stray.end(), blocks.stray.begin(), blocks.stray.end(),
                    same_stray) &&
         std::equal(one.documents.begin(), one.documents.end(), parallel.documents.begin(),
                    parallel.documents.end(), same_documents) &&
         std::equal(one.stray.begin(), one.stray.end(), parallel.stray.begin(), parallel.stray.end(),
                    same_stray);
}

} // namespace

TEST_CASE("fleet stream: blocks of lines split as the lines one by one") {
  const std::vector<std::string> cases = {
      "0: {\"a\": [1,\n1: {\n0: 2]}\n1: \"b\": \"}\\\\\"}\n",
      "  12: {\"a\": 1} {\"b\": 2} stray\n12:\n12: \n12:{\n{\"c\": \"x\\\n\"}\n",
      "[pod/p1/c] {\"a\":\n[pod/p2/c] no report\n[pod/p1/c] 1}\n[pod/x\n[not a prefix]\n",
      "{\"a\": \"" + std::string(200, 'x') + "\"}\n\n\t\r{}\n{\"cut\": ",
      "3: {\"s\": \"a\\\n3: \"b\"}",
  };
  for (const auto& text : cases) {
    CAPTURE(text);
    CHECK(same_split(text, 1));
    CHECK(same_split(text, 3));
    CHECK(same_split(text, 1000));
  }
  std::mt19937 random(20261203);
  const std::vector<std::string> pieces = {
      "{",  "}",     "[",     "]",       "\"",           "\\",           "x",     " ", ": ", ",",
      "\n", "\n0: ", "\n1: ", "\n 12: ", "\n[pod/a/b] ", "\n[pod/c/d] ", "\n12:", "\t"};
  for (int round = 0; round < 2000; ++round) {
    std::string text;
    const auto count = std::uniform_int_distribution<std::size_t>(0, 120)(random);
    for (std::size_t i = 0; i < count; ++i) {
      text += pieces[std::uniform_int_distribution<std::size_t>(0, pieces.size() - 1)(random)];
    }
    CAPTURE(text);
    REQUIRE(same_split(text, std::uniform_int_distribution<std::size_t>(1, 8)(random)));
  }
}
