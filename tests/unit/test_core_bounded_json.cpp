// The bounded JSON parser every reader of outside JSON uses: same documents as nlohmann's parser,
// and a failure value (never an exception, never deep recursion) for everything hostile.
#include "core/bounded_json.hpp"

#include <doctest/doctest.h>

#include <string>

using cudadiag::bounded_json::Failure;
using cudadiag::bounded_json::parse;
using cudadiag::bounded_json::Problem;

namespace {

Failure failure_of(std::string_view text, cudadiag::bounded_json::Limits limits = {}) {
  auto parsed = parse(text, limits);
  REQUIRE_MESSAGE(std::holds_alternative<Failure>(parsed), std::string(text.substr(0, 40)));
  return std::get<Failure>(parsed);
}

std::string nested_arrays(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

} // namespace

TEST_CASE("bounded json: builds the same document as nlohmann::json::parse") {
  const std::string text =
      R"({"a": [1, -2, 3.5, true, false, null, "x\u00e9"], "b": {"c": {"d": []}, "e": {}}, "a2": 18446744073709551615})";
  auto parsed = parse(text);
  REQUIRE(std::holds_alternative<nlohmann::json>(parsed));
  CHECK(std::get<nlohmann::json>(parsed) == nlohmann::json::parse(text));
  CHECK(std::get<nlohmann::json>(parse("  42 ")) == 42);
  CHECK(std::get<nlohmann::json>(parse(R"({"k": 1, "k": 2})"))["k"] ==
        2); // the last duplicate wins, as in nlohmann
}

TEST_CASE("bounded json: depth is limited at parse time, without recursion") {
  CHECK(std::holds_alternative<nlohmann::json>(parse(nested_arrays(128))));
  CHECK(failure_of(nested_arrays(129)).problem == Problem::too_deep);
  // 200,000 levels (a hostile policy file's nesting) fail fast instead of overflowing the stack.
  const auto deep = failure_of(nested_arrays(200000));
  CHECK(deep.problem == Problem::too_deep);
  CHECK(deep.message().find("nested deeper than 128 levels") != std::string::npos);
  CHECK(failure_of(std::string(200000, '[')).problem == Problem::too_deep);
  CHECK(failure_of(R"({"a": {"b": [1]}})", {.max_depth = 2}).problem == Problem::too_deep);
}

TEST_CASE("bounded json: numbers out of range, bad UTF-8, size, empty and truncated input are failures") {
  const auto huge = failure_of(R"({"x": 1e400})");
  CHECK(huge.problem == Problem::number_out_of_range);
  CHECK(huge.message().find("number out of range") != std::string::npos);
  CHECK(failure_of("-1e400").problem == Problem::number_out_of_range);
  CHECK(failure_of("[\"\xff\"]").problem == Problem::syntax);
  CHECK(failure_of("\"\xc0\xaf\"").problem == Problem::syntax); // overlong '/'
  CHECK(failure_of("{} x").problem == Problem::syntax);
  CHECK(failure_of("").problem == Problem::empty);
  CHECK(failure_of(" \n\t").problem == Problem::empty);
  CHECK(failure_of(R"({"a": [1, 2)").problem == Problem::truncated);
  CHECK(failure_of("[1, 2, 3]", {.max_bytes = 4}).problem == Problem::too_large);
  CHECK(failure_of("hello").message() == "is not JSON (syntax error at byte 1)");
}

TEST_CASE("bounded json: parse_or_error names the origin") {
  const auto result = cudadiag::bounded_json::parse_or_error("[1e999]", "options.json");
  REQUIRE_FALSE(result);
  CHECK(result.error().message.find("options.json: holds a number out of range") == 0);
}
