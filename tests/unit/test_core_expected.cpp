#include "core/expected.hpp"

#include <doctest/doctest.h>

#include <memory>
#include <stdexcept>
#include <string>

using namespace cudadiag;

namespace {

Expected<int> parse_digit(char c) {
  if (c < '0' || c > '9') {
    return Error{std::string("not a digit: ") + c};
  }
  return c - '0';
}

Expected<void> check_digit(char c) {
  CUDADIAG_TRY(parse_digit(c));
  return {};
}

Expected<int> sum_of_digits(char a, char b) {
  int first = 0;
  int second = 0;
  CUDADIAG_TRY_ASSIGN(first, parse_digit(a));
  CUDADIAG_TRY_ASSIGN(second, parse_digit(b));
  return first + second;
}

enum class DigitProblem { empty, not_a_digit };

Expected<int, DigitProblem> parse_first(const std::string& text) {
  if (text.empty()) {
    return DigitProblem::empty;
  }
  if (auto digit = parse_digit(text.front())) {
    return *digit;
  }
  return DigitProblem::not_a_digit;
}

Expected<std::unique_ptr<int>, DigitProblem> boxed_first(const std::string& text) {
  int digit = 0;
  CUDADIAG_TRY_ASSIGN(digit, parse_first(text));
  return std::make_unique<int>(digit);
}

} // namespace

TEST_CASE("expected: a value or an Error, and value() on an error is a logic error") {
  const auto seven = parse_digit('7');
  REQUIRE(seven);
  CHECK(*seven == 7);
  CHECK(seven.value_or(-1) == 7);
  const auto bad = parse_digit('x');
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message == "not a digit: x");
  CHECK(bad.value_or(-1) == -1);
  CHECK_THROWS_AS((void)bad.value(), std::logic_error);
}

TEST_CASE("expected: CUDADIAG_TRY passes the first error up, Expected<void> holds only an error") {
  CHECK(check_digit('3'));
  const auto bad = check_digit('?');
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message == "not a digit: ?");
}

TEST_CASE("expected: CUDADIAG_TRY_ASSIGN moves the value in or returns the error") {
  CHECK(sum_of_digits('2', '5').value() == 7);
  const auto bad = sum_of_digits('2', 'y');
  REQUIRE_FALSE(bad);
  CHECK(bad.error().message == "not a digit: y");
}

TEST_CASE("expected: an error type of the caller's own, moved through CUDADIAG_TRY_ASSIGN") {
  CHECK(parse_first("42").value() == 4);
  CHECK(parse_first("").error() == DigitProblem::empty);
  CHECK(parse_first("z").error() == DigitProblem::not_a_digit);
  const auto boxed = boxed_first("9");
  REQUIRE(boxed);
  CHECK(**boxed == 9);
  CHECK(boxed_first("").error() == DigitProblem::empty);
}
