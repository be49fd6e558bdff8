// The TOML subset policy files use: what it reads, and what it refuses (with the line).
#include "policy/toml_subset.hpp"

#include <doctest/doctest.h>

using cudadiag::policy::parse_toml_subset;

TEST_CASE("toml subset: keys, strings, arrays over several lines, booleans, integers, comments") {
  const auto parsed = parse_toml_subset(R"toml(
# CI gate for the training cluster
require = [
  "nvrtc>=12.4",   # JIT needs 12.4
  'cccl',
  "selftest.sort>=30Gkeys",
]
fail_on = "warning"  # strict
escaped = "tab\there \"quoted\" \u00e9"
flag = true
count = -3
empty = []
)toml");
  REQUIRE(parsed);
  const auto& document = *parsed;
  CHECK(document["require"] == nlohmann::json::array({"nvrtc>=12.4", "cccl", "selftest.sort>=30Gkeys"}));
  CHECK(document["fail_on"] == "warning");
  CHECK(document["escaped"] == "tab\there \"quoted\" \xc3\xa9");
  CHECK(document["flag"] == true);
  CHECK(document["count"] == -3);
  CHECK(document["empty"].empty());
  CHECK(parse_toml_subset("").value().empty());
}

TEST_CASE("toml subset: what it does not support is refused with the line number") {
  const std::pair<const char*, const char*> cases[] = {
      {"[policy]\nrequire = []", "line 1: tables"},
      {"require = [\"a\"]\n\nfail_on \"x\"", "line 3: expected '=' after key 'fail_on'"},
      {"a = 1\na = 2", "line 2: duplicate key 'a'"},
      {"require = [\"a\",\n \"b\"", "line 1: unterminated array"},
      {"x = \"open", "line 1: unterminated string"},
      {"x = 1.5", "unsupported value '1.5'"},
      {"x = bare", "unsupported value 'bare'"},
      {"x = {a = 1}", "inline tables"},
      {"x = \"\"\"multi\"\"\"", "multi-line strings"},
      {"a.b = 1", "expected '=' after key 'a'"},
      {"x = \"a\" junk", "unexpected text after the value of 'x'"},
      {"x = [\"a\" \"b\"]", "expected ',' or ']'"},
      {"x = \"\\q\"", "unsupported escape"},
  };
  for (const auto& [text, expected] : cases) {
    const auto parsed = parse_toml_subset(text);
    REQUIRE_FALSE_MESSAGE(parsed, text);
    CHECK_MESSAGE(parsed.error().message.find(expected) != std::string::npos,
                  text << " -> " << parsed.error().message);
  }
}
