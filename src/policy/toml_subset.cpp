#include "policy/toml_subset.hpp"

#include "core/text.hpp"
#include "core/utf8.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace cudadiag::policy {
namespace {

// Arrays nest at most this deep (a policy needs one level); deeper input is an error, not recursion.
constexpr int k_max_array_depth = 32;

class Parser {
public:
  explicit Parser(std::string_view text) : m_text(text) {}

  Expected<nlohmann::json> document() {
    if (const auto bad = utf8::first_invalid(m_text); bad != std::string_view::npos) {
      const auto line =
          1 + std::count(m_text.begin(), m_text.begin() + static_cast<std::ptrdiff_t>(bad), '\n');
      return Error{"line " + std::to_string(line) + ": invalid UTF-8 (byte " + std::to_string(bad + 1) +
                   "); a TOML file must be UTF-8"};
    }
    nlohmann::json out = nlohmann::json::object();
    while (true) {
      skip_blank_lines();
      if (at_end()) {
        return out;
      }
      if (peek() == '[') {
        return fail("tables ([...]) are not supported; write the keys at the top level");
      }
      const auto key = bare_key();
      if (key.empty()) {
        return fail(std::string("expected a key, found '") + peek() + "'");
      }
      skip_spaces();
      if (at_end() || peek() != '=') {
        return fail("expected '=' after key '" + key + "'");
      }
      ++m_pos;
      skip_spaces();
      const auto line = m_line;
      auto value = this->value();
      if (!value) {
        return value.error();
      }
      if (out.contains(key)) {
        return Error{"line " + std::to_string(line) + ": duplicate key '" + key + "'"};
      }
      out[key] = std::move(*value);
      skip_spaces();
      skip_comment();
      if (!at_end() && peek() != '\n') {
        return fail("unexpected text after the value of '" + key + "'");
      }
    }
  }

private:
  [[nodiscard]] bool at_end() const { return m_pos >= m_text.size(); }
  [[nodiscard]] char peek() const { return m_text[m_pos]; }

  Error fail(const std::string& why) const { return Error{"line " + std::to_string(m_line) + ": " + why}; }

  void skip_spaces() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\r')) {
      ++m_pos;
    }
  }
  void skip_comment() {
    if (!at_end() && peek() == '#') {
      while (!at_end() && peek() != '\n') {
        ++m_pos;
      }
    }
  }
  // Skips spaces, comments and newlines (inside arrays, and between pairs).
  void skip_blank_lines() {
    while (true) {
      skip_spaces();
      skip_comment();
      if (at_end() || peek() != '\n') {
        return;
      }
      ++m_pos;
      ++m_line;
    }
  }

  std::string bare_key() {
    const auto start = m_pos;
    while (!at_end() &&
           (std::isalnum(static_cast<unsigned char>(peek())) != 0 || peek() == '_' || peek() == '-')) {
      ++m_pos;
    }
    return std::string(m_text.substr(start, m_pos - start));
  }

  Expected<nlohmann::json> value() {
    if (at_end() || peek() == '\n') {
      return fail("missing value");
    }
    const char c = peek();
    if (c == '"' || c == '\'') {
      auto text = string_value();
      if (!text) {
        return text.error();
      }
      return nlohmann::json(*text);
    }
    if (c == '[') {
      return array();
    }
    if (c == '{') {
      return fail("inline tables are not supported");
    }
    return scalar();
  }

  Expected<nlohmann::json> scalar() {
    const auto start = m_pos;
    while (!at_end() && peek() != ',' && peek() != ']' && peek() != '#' && peek() != '\n' &&
           std::isspace(static_cast<unsigned char>(peek())) == 0) {
      ++m_pos;
    }
    const auto word = m_text.substr(start, m_pos - start);
    if (word == "true" || word == "false") {
      return nlohmann::json(word == "true");
    }
    std::size_t i = word.size() > 1 && (word[0] == '-' || word[0] == '+') ? 1 : 0;
    bool digits = i < word.size();
    for (; i < word.size(); ++i) {
      digits = digits && std::isdigit(static_cast<unsigned char>(word[i])) != 0;
    }
    if (digits && word.size() < 18) {
      return nlohmann::json(std::stoll(std::string(word)));
    }
    return fail("unsupported value '" + std::string(word) + "' (strings must be quoted)");
  }

  Expected<std::string> string_value() {
    const char quote = peek();
    if (m_text.substr(m_pos, 3) == std::string(3, quote)) {
      return fail("multi-line strings are not supported");
    }
    ++m_pos;
    std::string out;
    while (!at_end() && peek() != quote) {
      const char c = peek();
      if (c == '\n') {
        return fail("unterminated string");
      }
      const auto byte = static_cast<unsigned char>(c);
      if ((byte < 0x20U && c != '\t') || byte == 0x7fU) {
        return fail("control character " + hex_number(byte) + " in a string (write it as \\uXXXX)");
      }
      ++m_pos;
      if (c != '\\' || quote == '\'') {
        out += c;
        continue;
      }
      if (at_end()) {
        return fail("unterminated string");
      }
      const char escape = peek();
      ++m_pos;
      switch (escape) {
      case '"': out += '"'; break;
      case '\\': out += '\\'; break;
      case 'n': out += '\n'; break;
      case 't': out += '\t'; break;
      case 'r': out += '\r'; break;
      case 'u': {
        auto code = hex4();
        if (!code) {
          return code.error();
        }
        append_utf8(out, *code);
        break;
      }
      default: return fail(std::string("unsupported escape '\\") + escape + "'");
      }
    }
    if (at_end()) {
      return fail("unterminated string");
    }
    ++m_pos;
    return out;
  }

  Expected<unsigned> hex4() {
    if (m_pos + 4 > m_text.size()) {
      return fail("\\u needs four hex digits");
    }
    unsigned code = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = peek();
      ++m_pos;
      const int digit = std::isdigit(static_cast<unsigned char>(c)) != 0 ? c - '0'
                        : (c >= 'a' && c <= 'f')                         ? c - 'a' + 10
                        : (c >= 'A' && c <= 'F')                         ? c - 'A' + 10
                                                                         : -1;
      if (digit < 0) {
        return fail("\\u needs four hex digits");
      }
      code = code * 16 + static_cast<unsigned>(digit);
    }
    if (code >= 0xd800 && code <= 0xdfff) {
      return fail("\\u escape of a surrogate");
    }
    return code;
  }

  static void append_utf8(std::string& out, unsigned code) {
    if (code < 0x80) {
      out += static_cast<char>(code);
    } else if (code < 0x800) {
      out += static_cast<char>(0xc0U | (code >> 6U));
      out += static_cast<char>(0x80U | (code & 0x3fU));
    } else {
      out += static_cast<char>(0xe0U | (code >> 12U));
      out += static_cast<char>(0x80U | ((code >> 6U) & 0x3fU));
      out += static_cast<char>(0x80U | (code & 0x3fU));
    }
  }

  Expected<nlohmann::json> array() {
    const auto start_line = m_line;
    if (m_depth >= k_max_array_depth) {
      return fail("arrays nested deeper than " + std::to_string(k_max_array_depth) + " levels");
    }
    ++m_pos; // '['
    const DepthGuard guard(m_depth);
    nlohmann::json out = nlohmann::json::array();
    while (true) {
      skip_blank_lines();
      if (at_end()) {
        return Error{"line " + std::to_string(start_line) + ": unterminated array"};
      }
      if (peek() == ']') {
        ++m_pos;
        return out;
      }
      auto item = value();
      if (!item) {
        return item.error();
      }
      out.push_back(std::move(*item));
      skip_blank_lines();
      if (at_end()) {
        return Error{"line " + std::to_string(start_line) + ": unterminated array"};
      }
      if (peek() == ',') {
        ++m_pos;
      } else if (peek() != ']') {
        return fail("expected ',' or ']' in the array");
      }
    }
  }

  struct DepthGuard {
    explicit DepthGuard(int& depth) : m_depth(depth) { ++m_depth; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
    ~DepthGuard() { --m_depth; }
    int& m_depth;
  };

  std::string_view m_text;
  std::size_t m_pos = 0;
  int m_line = 1;
  int m_depth = 0; // arrays open
};

} // namespace

Expected<nlohmann::json> parse_toml_subset(std::string_view text) {
  return Parser(text).document();
}

} // namespace cudadiag::policy
