// Reading diff's inputs: reports and bundles, and a clear message for everything else.
#include "bundle/bundle.hpp"
#include "core/filesystem.hpp"
#include "diff/report_input.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

namespace {

using cudadiag::diff::incomparable;
using cudadiag::diff::load_report;

std::string example_text() {
  return cudadiag::fs::read_file_prefix(CUDADIAG_SOURCE_DIR "/docs/examples/h200-host-report.json", 1U << 24U)
      .value();
}

std::string error_for(const std::string& path) {
  const auto loaded = load_report(path, "A");
  REQUIRE_FALSE(loaded);
  return loaded.error().message;
}

} // namespace

TEST_CASE("diff input: a report file and a bundle both load") {
  cudadiag::testing::TempTree tree;
  const auto report_path = tree.write("a.json", example_text());
  const auto report = load_report(report_path, "A");
  REQUIRE(report);
  CHECK(report->kind == "report");
  CHECK(report->schema_version == 1);

  cudadiag::Environment env;
  env.cwd = tree.root();
  cudadiag::bundle::BundleOptions options;
  options.output = tree.path("b.tar.gz");
  options.sources.nvidia_smi = tree.path("no-nvidia-smi");
  REQUIRE(cudadiag::bundle::write_bundle(report->document, env, options));
  const auto bundle = load_report(options.output, "B");
  REQUIRE(bundle);
  CHECK(bundle->kind == "bundle");
  CHECK(bundle->document["components"] == report->document["components"]);
  CHECK_FALSE(incomparable(*report, *bundle));
}

TEST_CASE("diff input: every kind of bad input gets a message naming the file and the problem") {
  cudadiag::testing::TempTree tree;
  CHECK(error_for(tree.path("missing.json")).find("cannot read A (") != std::string::npos);
  CHECK(error_for(tree.mkdir("dir")).find("is a directory") != std::string::npos);
  CHECK(error_for(tree.write("empty.json", "")).find("is empty") != std::string::npos);
  CHECK(error_for(tree.write("notes.txt", "hello world")).find("is not JSON (syntax error at byte 1)") !=
        std::string::npos);
  const auto text = example_text();
  const auto truncated = error_for(tree.write("cut.json", text.substr(0, text.size() / 2)));
  CHECK(truncated.find("is truncated JSON") != std::string::npos);
  CHECK(error_for(tree.write("other.json", "{\"name\": \"something else\"}")).find("not a cudadiag report") !=
        std::string::npos);
  CHECK(error_for(tree.write("bad.gz", std::string("\x1f\x8b\x08\x00garbage", 12))).find("damaged gzip") !=
        std::string::npos);
}

TEST_CASE("diff input: reports of different or unknown schema versions are refused with a clear message") {
  cudadiag::testing::TempTree tree;
  auto document = nlohmann::json::parse(example_text());
  const auto one = load_report(tree.write("one.json", document.dump()), "A");
  document["schema_version"] = 2;
  const auto two = load_report(tree.write("two.json", document.dump()), "B");
  REQUIRE(one);
  REQUIRE(two);
  const auto mixed = incomparable(*one, *two);
  REQUIRE(mixed);
  CHECK(mixed->find("has schema_version 1") != std::string::npos);
  CHECK(mixed->find("has schema_version 2") != std::string::npos);
  const auto both_new = incomparable(*two, *two);
  REQUIRE(both_new);
  CHECK(both_new->find("reads schema_version 1") != std::string::npos);
}

// Hostile inputs are input errors naming the file (exit 2), never an exception (exit 3).
TEST_CASE("diff input: numbers out of range and deep nesting are refused with the file named") {
  cudadiag::testing::TempTree tree;
  auto text = example_text();
  const auto at = text.find("\"schema_version\": 1");
  REQUIRE(at != std::string::npos);
  text.replace(at, std::string_view("\"schema_version\": 1").size(), "\"schema_version\": 1e400");
  const auto huge = error_for(tree.write("huge.json", text));
  CHECK_MESSAGE(huge.find("A (") == 0, huge);
  CHECK_MESSAGE(huge.find("holds a number out of range") != std::string::npos, huge);
  const auto deep = error_for(tree.write("deep.json", std::string(200000, '[') + std::string(200000, ']')));
  CHECK_MESSAGE(deep.find("nested deeper than 128 levels") != std::string::npos, deep);
  const auto bad_utf8 = error_for(tree.write("utf8.json", "{\"tool\": \"\xff\"}"));
  CHECK_MESSAGE(bad_utf8.find("is not JSON") != std::string::npos, bad_utf8);
}
