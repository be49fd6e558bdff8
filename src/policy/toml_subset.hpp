#pragma once
// The small subset of TOML a policy file needs: top-level `key = value` pairs, where a value is a
// basic string ("..." with \" \\ \n \t \uXXXX escapes), a literal string ('...'), true/false, an
// integer, or an array of those (which may span lines and end with a trailing comma); comments
// (#) and blank lines. Anything else — tables ([section]), dotted or quoted keys, floats, dates,
// inline tables, multi-line strings — is rejected with the line number, never misread. The text
// must be valid UTF-8 and strings hold no control characters but tab (as TOML requires); arrays
// nest at most 32 deep. Never throws.

#include "core/expected.hpp"

#include <nlohmann/json.hpp>

#include <string_view>

namespace cudadiag::policy {

// The document as a JSON object. Errors: "line 3: expected '=' after key 'require'",
// "line 5: tables ([policy]) are not supported; write the keys at the top level",
// "line 2: duplicate key 'fail_on'", "line 7: unterminated array".
Expected<nlohmann::json> parse_toml_subset(std::string_view text);

} // namespace cudadiag::policy
