// Splitting launcher output into node documents: srun --label and kubectl --prefix lines,
// interleaved, pretty-printed and split into pieces; stray text and cut-off documents reported.
#include "fleet/json_stream.hpp"

#include <doctest/doctest.h>

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
  const auto out = split({"0: {\"node\": \"a\", \"te", "1: {", "0: xt\": \"x\\\"y\"", "1:   \"node\": \"b\"", "0: }", "1: }"});
  REQUIRE(out.documents.size() == 2);
  CHECK(out.documents[0].source == "stdin: task 0");
  CHECK(out.documents[0].text == R"({"node": "a", "text": "x\"y"})");
  CHECK(out.documents[1].source == "stdin: task 1");
  CHECK(out.documents[1].text == R"({  "node": "b"})");
  CHECK(out.stray.empty());
}

TEST_CASE("fleet stream: stray text and a cut-off document are reported, not dropped") {
  const auto out = split({"[pod/p1/c] slurmstepd: error: execve(): cudadiag: No such file", "[pod/p2/c] {\"a\": [1,"});
  CHECK(out.documents.empty());
  REQUIRE(out.stray.size() == 2);
  CHECK(out.stray[0].source == "stdin: pod/p1/c");
  CHECK(out.stray[0].text.find("No such file") != std::string::npos);
  CHECK(out.stray[1].source == "stdin: pod/p2/c");
  CHECK(out.stray[1].text.find("cut off") != std::string::npos);
}
