#pragma once
// JSON documents as text, fast: the same bytes as nlohmann's
//   value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace)
// (sorted keys, invalid UTF-8 replaced by U+FFFD), written in one pass into one buffer. A report's
// JSON is ~300 KB of mostly ASCII paths: those strings are copied whole instead of being decoded
// byte by byte; a string that needs escaping or holds non-ASCII bytes, and every floating-point
// number, is written by nlohmann itself, so the output cannot drift from it.

#include <nlohmann/json.hpp>

#include <string>

namespace cudadiag::report {

// `indent` < 0: compact (no newlines); >= 0: that many spaces per level, one member per line.
std::string dump_json(const nlohmann::json& value, int indent);

} // namespace cudadiag::report
