// The JSON rendering: valid UTF-8 whatever the bytes in paths, and the contract's top-level shape.
#include "pipeline/plan.hpp"
#include "report/json_report.hpp"
#include "synthetic_world.hpp"

#include <doctest/doctest.h>

using cudadiag::report::to_valid_utf8;

TEST_CASE("json report: invalid UTF-8 bytes become \\xNN text, valid sequences pass through") {
  CHECK(to_valid_utf8("plain/ascii") == "plain/ascii");
  CHECK(to_valid_utf8("caf\xc3\xa9") == "caf\xc3\xa9");
  CHECK(to_valid_utf8("/a\xff"
                      "b") == "/a\\xffb");
  CHECK(to_valid_utf8("\xc3") == "\\xc3");                   // truncated sequence
  CHECK(to_valid_utf8("\xc0\xaf") == "\\xc0\\xaf");          // overlong encoding
  CHECK(to_valid_utf8("\xed\xa0\x80") == "\\xed\\xa0\\x80"); // UTF-16 surrogate
  CHECK(to_valid_utf8("\xf0\x9f\x98\x80") == "\xf0\x9f\x98\x80");
}

TEST_CASE(
    "json report: a report over paths with non-UTF-8 bytes dumps as valid JSON with the contract's keys") {
  cudadiag::testing::SyntheticWorld world;
  world.library("bad\xff"
                "dir/libnvrtc.so.13");
  world.env.set("LD_LIBRARY_PATH", world.tree.path("bad\xff"
                                                   "dir") +
                                       ":\xfe");
  cudadiag::pipeline::Plan plan;
  plan.environment = world.env;
  plan.discovery.layout = world.layout;
  plan.discovery.python_search.system_interpreters = {};
  const auto report = cudadiag::pipeline::run(plan);
  REQUIRE(report);
  const auto text = cudadiag::report::render_json(*report);
  const auto parsed = nlohmann::json::parse(text); // throws on invalid UTF-8 or syntax
  CHECK(parsed["schema_version"] == 1);
  CHECK(parsed["tool"]["name"] == "cudadiag");
  for (const char* key :
       {"host", "environment", "components", "devices", "selftest", "findings", "summary"}) {
    CHECK(parsed.contains(key));
  }
  bool saw_escaped = false;
  for (const auto& component : parsed["components"]) {
    for (const auto& candidate : component["candidates"]) {
      saw_escaped = saw_escaped || candidate["path"].get<std::string>().find("\\xff") != std::string::npos;
    }
  }
  CHECK(saw_escaped);
  CHECK(parsed["summary"]["exit_code"] == (parsed["summary"]["counts"]["error"] > 0 ? 1 : 0));
}
