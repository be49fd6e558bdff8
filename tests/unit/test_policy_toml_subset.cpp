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

// Hostile policy files are errors with the line, never a crash or an exception later.
TEST_CASE("toml subset: deep nesting, invalid UTF-8 and control characters are refused") {
  const std::string deep = "x = " + std::string(200000, '[') + std::string(200000, ']');
  const auto nested = parse_toml_subset(deep);
  REQUIRE_FALSE(nested);
  CHECK(nested.error().message.find("line 1: arrays nested deeper than 32 levels") == 0);
  CHECK(parse_toml_subset("x = " + std::string(32, '[') + std::string(32, ']')));

  const auto bad_utf8 = parse_toml_subset("a = 1\nrequire = [\"nvrtc\xff\"]\n");
  REQUIRE_FALSE(bad_utf8);
  CHECK(bad_utf8.error().message.find("line 2: invalid UTF-8") == 0);
  CHECK_FALSE(parse_toml_subset("x = \"\xed\xa0\x80\"")); // an encoded surrogate
  CHECK_FALSE(parse_toml_subset("x = \"\xc0\xaf\""));     // overlong
  CHECK(parse_toml_subset("x = \"\xe2\x9c\x93 \xf0\x9f\x9a\x80\""));

  const auto escape = parse_toml_subset("x = \"\x1b[2J\"");
  REQUIRE_FALSE(escape);
  CHECK(escape.error().message.find("control character 0x1b") != std::string::npos);
}
