#pragma once
// The one way cudadiag parses JSON it did not write itself (report and bundle input, policy files,
// the C/C++ options JSON, worker lines): bounded and total. The document may nest at most
// `max_depth` arrays/objects and hold at most `max_bytes` bytes; a number that does not fit a
// double (1e400), invalid UTF-8, a syntax error or trailing text is a failure value, never an
// exception; the parse never recurses, so no input can exhaust the stack. A document that passes
// nests at most max_depth deep, so code that walks it recursively (dump(), copies) is safe too.

#include "core/expected.hpp"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <variant>

namespace cudadiag::bounded_json {

inline constexpr std::size_t k_default_max_depth = 128;
inline constexpr std::size_t k_default_max_bytes = std::size_t{64} << 20U;

struct Limits {
  std::size_t max_depth = k_default_max_depth; // nesting of arrays and objects; a scalar document is 0
  std::size_t max_bytes = k_default_max_bytes;
};

enum class Problem {
  empty,               // no bytes, or only whitespace
  truncated,           // the text ends inside the document
  syntax,              // not JSON at `byte` (includes invalid UTF-8 inside a string, text after the document)
  too_deep,            // nests deeper than max_depth at `byte`
  too_large,           // more than max_bytes
  number_out_of_range, // a number no double holds (1e400), at `byte`
};

struct Failure {
  Problem problem = Problem::syntax;
  std::size_t byte = 0; // 1-based position where the parser stopped (0 for empty/too_large)
  std::string detail;   // the parser's words, e.g. "number overflow parsing '1e400'"
  Limits limits;        // the limits in force, for the message

  // One clause for "FILE: <message>": "is not JSON (syntax error at byte 3: ...)",
  // "nests deeper than 128 levels (at byte 129)", "holds a number out of range (at byte 9: ...)".
  [[nodiscard]] std::string message() const;
};

// The document, or why not. Never throws (except std::bad_alloc).
[[nodiscard]] std::variant<nlohmann::json, Failure> parse(std::string_view text, const Limits& limits = {});

// parse() as an Expected whose error message is "<origin>: <Failure::message()>".
[[nodiscard]] Expected<nlohmann::json> parse_or_error(std::string_view text, std::string_view origin,
                                                      const Limits& limits = {});

} // namespace cudadiag::bounded_json
