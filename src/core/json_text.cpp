#include "core/json_text.hpp"

#include "core/parallel.hpp"
#include "core/utf8.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <stdexcept>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace cudadiag {

std::string to_valid_utf8(std::string_view text) {
  constexpr std::string_view k_hex = "0123456789abcdef";
  // Most text (paths, names, trace lines) is ASCII: taken whole, without decoding.
  if (std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80U; })) {
    return std::string(text);
  }
  std::string out;
  out.reserve(text.size());
  std::size_t at = 0;
  char32_t code = 0;
  while (at < text.size()) {
    const auto length = utf8::sequence_at(text, at, code);
    if (length == 0) {
      const auto byte = static_cast<unsigned char>(text[at]);
      out += "\\x";
      out += k_hex[byte >> 4U];
      out += k_hex[byte & 0x0fU];
      ++at;
    } else {
      out.append(text.substr(at, length));
      at += length;
    }
  }
  return out;
}

namespace {

using nlohmann::json;

constexpr std::size_t k_parallel_elements = 16;
// An element's text starts with room for a typical report element (a component with its trace,
// a library's closures: 3-5 KiB), instead of growing to it by doubling, a copy each time.
constexpr std::size_t k_element_reserve = 4096;

// Appends `count` bytes to `out` and returns where they start, for the caller to fill: one call
// into std::string for a piece written from several parts (a separator, a line break, its
// indentation, a quoted name), which the report writes tens of thousands of.
char* grow(std::string& out, std::size_t count) {
  const std::size_t at = out.size();
  out.resize(at + count);
  return out.data() + at;
}

// An optional ',', then (unless `indent` is negative) a line break indented `depth` levels.
void append_separator(std::string& out, bool comma, int indent, int depth) {
  const std::size_t spaces =
      indent < 0 ? 0 : static_cast<std::size_t>(depth) * static_cast<std::size_t>(indent);
  const std::size_t count = (comma ? 1 : 0) + (indent < 0 ? 0 : 1 + spaces);
  if (count == 0) {
    return;
  }
  char* at = grow(out, count);
  if (comma) {
    *at++ = ',';
  }
  if (indent >= 0) {
    *at++ = '\n';
    std::memset(at, ' ', spaces);
  }
}

void append_newline(std::string& out, int indent, int depth) {
  append_separator(out, false, indent, depth);
}

// Whether the 8 bytes of `word` are all printable ASCII other than '"' and '\\': none is below
// 0x20 (subtracting 0x20 from each borrows into the high bit only for those), none has its high
// bit set, none equals '"' or '\\' (a zero byte after the xor).
bool is_plain_word(std::uint64_t word) {
  constexpr std::uint64_t k_ones = 0x0101010101010101ULL;
  constexpr std::uint64_t k_highs = 0x8080808080808080ULL;
  const auto has_zero_byte = [](std::uint64_t value) { return (value - k_ones) & ~value & k_highs; };
  const std::uint64_t control = (word - 0x20 * k_ones) & ~word & k_highs;
  return ((word & k_highs) | control | has_zero_byte(word ^ ('"' * k_ones)) |
          has_zero_byte(word ^ ('\\' * k_ones))) == 0;
}

std::uint64_t load_word(const char* at) {
  std::uint64_t word = 0;
  std::memcpy(&word, at, sizeof word);
  return word;
}

#if defined(__SSE2__)
// is_plain_word for the 16 bytes at `at`. A signed compare: below 0x20 are the control bytes and
// (as negative numbers) those from 0x80 up.
bool is_plain_block(const char* at) {
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(at));
  const __m128i refused = _mm_or_si128(
      _mm_cmplt_epi8(bytes, _mm_set1_epi8(0x20)),
      _mm_or_si128(_mm_cmpeq_epi8(bytes, _mm_set1_epi8('"')), _mm_cmpeq_epi8(bytes, _mm_set1_epi8('\\'))));
  return _mm_movemask_epi8(refused) == 0;
}
#endif

// Whether `text` is written as it is: printable ASCII without '"' or '\\'. The report writes half a
// megabyte of such text (paths, names, trace lines) and, a byte at a time, this test was the largest
// cost of writing it: it looks at 16 bytes at a time where SSE2 is (x86-64), 8 elsewhere, the last
// block overlapping the one before it instead of a byte-by-byte tail.
bool is_plain(std::string_view text) {
  const char* const data = text.data();
  const std::size_t size = text.size();
  if (size < sizeof(std::uint64_t)) {
    std::uint64_t word = 'x' * 0x0101010101010101ULL; // padding that passes
    std::memcpy(&word, data, size);
    return is_plain_word(word);
  }
  std::size_t at = 0;
#if defined(__SSE2__)
  if (size >= 16) {
    for (; at + 16 <= size; at += 16) {
      if (!is_plain_block(data + at)) {
        return false;
      }
    }
    return at == size || is_plain_block(data + size - 16);
  }
#endif
  for (; at + sizeof(std::uint64_t) <= size; at += sizeof(std::uint64_t)) {
    if (!is_plain_word(load_word(data + at))) {
      return false;
    }
  }
  return at == size || is_plain_word(load_word(data + size - sizeof(std::uint64_t)));
}

void append_plain(std::string& out, std::string_view text) {
  char* at = grow(out, text.size() + 2);
  at[0] = '"';
  std::memcpy(at + 1, text.data(), text.size());
  at[text.size() + 1] = '"';
}

// Plain text as it is; anything else the way nlohmann writes it.
void append_string(std::string& out, std::string_view text) {
  if (is_plain(text)) {
    append_plain(out, text);
  } else {
    out += json(std::string(text)).dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

// A member's name and its colon (": " when indented, ":" when compact); a plain name in one piece.
void append_key(std::string& out, std::string_view name, int indent) {
  const std::size_t colon = indent >= 0 ? 2 : 1;
  if (!is_plain(name)) {
    append_string(out, name);
    out.append(": ", colon);
    return;
  }
  char* at = grow(out, name.size() + 2 + colon);
  at[0] = '"';
  std::memcpy(at + 1, name.data(), name.size());
  std::memcpy(at + 1 + name.size(), "\": ", 1 + colon);
}

template <typename Integer> void append_integer(std::string& out, Integer number) {
  char digits[24];
  const auto [end, error] = std::to_chars(digits, digits + sizeof digits, number);
  out.append(digits, end);
}

// An array of `count` elements at `depth`: the brackets, separators and lines, with
// `write_element(i)` appending element i (at `depth` + 1) where it goes.
template <class WriteElement>
void append_array(std::string& out, std::size_t count, int indent, int depth,
                  const WriteElement& write_element) {
  if (count == 0) {
    out += "[]";
    return;
  }
  out += '[';
  for (std::size_t i = 0; i < count; ++i) {
    append_separator(out, i > 0, indent, depth + 1);
    write_element(i);
  }
  append_newline(out, indent, depth);
  out += ']';
}

// Writes `parts[i]` of an array already written element by element at `depth` + 1.
void append_joined_array(std::string& out, const std::vector<std::string>& parts, int indent, int depth) {
  append_array(out, parts.size(), indent, depth, [&](std::size_t i) { out += parts[i]; });
}

class Writer {
public:
  // `parallel`: long arrays may be written on several threads (the outermost writer only).
  Writer(std::string& out, int indent, bool parallel) : m_out(out), m_indent(indent), m_parallel(parallel) {}

  void value(const json& node, int depth) {
    switch (node.type()) {
    case json::value_t::object: object(node, depth); return;
    case json::value_t::array: array(node, depth); return;
    case json::value_t::string: append_string(m_out, node.get_ref<const std::string&>()); return;
    case json::value_t::boolean: m_out += node.get<bool>() ? "true" : "false"; return;
    case json::value_t::null: m_out += "null"; return;
    case json::value_t::number_integer: append_integer(m_out, node.get<std::int64_t>()); return;
    case json::value_t::number_unsigned: append_integer(m_out, node.get<std::uint64_t>()); return;
    default: // floating point, binary, discarded: nlohmann's own text
      m_out += node.dump(-1, ' ', false, json::error_handler_t::replace);
      return;
    }
  }

private:
  void object(const json& node, int depth) {
    if (node.empty()) {
      m_out += "{}";
      return;
    }
    m_out += '{';
    bool first = true;
    for (const auto& [key, member] : node.items()) {
      append_separator(m_out, !first, m_indent, depth + 1);
      first = false;
      append_key(m_out, key, m_indent);
      value(member, depth + 1);
    }
    append_newline(m_out, m_indent, depth);
    m_out += '}';
  }

  void array(const json& node, int depth) {
    // The long arrays near the top (a report's closures) are written element by element on
    // several threads, each into its own text, then joined in order.
    if (m_parallel && node.size() >= k_parallel_elements) {
      append_joined_array(m_out,
                          parallel_map<std::string>(node.size(),
                                                    [&](std::size_t i) {
                                                      std::string part;
                                                      Writer(part, m_indent, false).value(node[i], depth + 1);
                                                      return part;
                                                    }),
                          m_indent, depth);
      return;
    }
    append_array(m_out, node.size(), m_indent, depth, [&](std::size_t i) { value(node[i], depth + 1); });
  }

  std::string& m_out;
  int m_indent;
  bool m_parallel;
};

} // namespace

std::string dump_json(const nlohmann::json& value, int indent) {
  std::string out;
  out.reserve(1 << 16);
  Writer(out, indent, true).value(value, 0);
  return out;
}

JsonStream::JsonStream(std::string& out, int indent, int depth)
    : m_out(out), m_indent(indent), m_base_depth(depth) {}

int JsonStream::depth() const {
  return m_base_depth + static_cast<int>(m_levels.size());
}

// Before a value: inside an array, its separator and line; inside an object, key() wrote them.
void JsonStream::before_value() {
  if (m_levels.empty() || m_after_key) {
    m_after_key = false;
    return;
  }
  auto& level = m_levels.back();
  if (level.object) {
    throw std::logic_error("JsonStream: a value inside an object needs a key");
  }
  append_separator(m_out, level.members++ > 0, m_indent, depth());
}

void JsonStream::begin_object() {
  before_value();
  m_out += '{';
  m_levels.push_back({true, 0, {}});
}

void JsonStream::begin_array() {
  before_value();
  m_out += '[';
  m_levels.push_back({false, 0, {}});
}

void JsonStream::end_object() {
  if (m_levels.empty() || !m_levels.back().object || m_after_key) {
    throw std::logic_error("JsonStream: end_object without an open object");
  }
  const bool empty = m_levels.back().members == 0;
  m_levels.pop_back();
  if (!empty) {
    append_newline(m_out, m_indent, depth());
  }
  m_out += '}';
}

void JsonStream::end_array() {
  if (m_levels.empty() || m_levels.back().object) {
    throw std::logic_error("JsonStream: end_array without an open array");
  }
  const bool empty = m_levels.back().members == 0;
  m_levels.pop_back();
  if (!empty) {
    append_newline(m_out, m_indent, depth());
  }
  m_out += ']';
}

void JsonStream::key(std::string_view name) {
  if (m_levels.empty() || !m_levels.back().object || m_after_key) {
    throw std::logic_error("JsonStream: a key outside an object");
  }
  auto& level = m_levels.back();
  if (level.members > 0 && !(level.last_key < name)) {
    throw std::logic_error("JsonStream: key \"" + std::string(name) + "\" after \"" + level.last_key +
                           "\": members must be written in ascending order");
  }
  level.last_key.assign(name);
  append_separator(m_out, level.members++ > 0, m_indent, depth());
  append_key(m_out, name, m_indent);
  m_after_key = true;
}

void JsonStream::text(std::string_view value) {
  before_value();
  if (is_plain(value)) { // most text: paths, names, trace lines, which to_valid_utf8 would copy unchanged
    append_plain(m_out, value);
  } else {
    append_string(m_out, to_valid_utf8(value));
  }
}

void JsonStream::optional_text(const std::optional<std::string>& value) {
  if (value) {
    text(*value);
  } else {
    null();
  }
}

void JsonStream::string(std::string_view value) {
  before_value();
  append_string(m_out, value);
}

void JsonStream::optional_string(const std::optional<std::string>& value) {
  if (value) {
    string(*value);
  } else {
    null();
  }
}

void JsonStream::strings(const std::vector<std::string>& values) {
  begin_array();
  for (const auto& value : values) {
    string(value);
  }
  end_array();
}

void JsonStream::unsigned_integer(std::uint64_t value) {
  before_value();
  append_integer(m_out, value);
}

void JsonStream::unsigned_integers(const std::vector<std::size_t>& values) {
  begin_array();
  for (const auto value : values) {
    unsigned_integer(value);
  }
  end_array();
}

void JsonStream::null() {
  before_value();
  m_out += "null";
}

void JsonStream::boolean(bool value) {
  before_value();
  m_out += value ? "true" : "false";
}

void JsonStream::integer(std::int64_t value) {
  before_value();
  append_integer(m_out, value);
}

void JsonStream::value(const nlohmann::json& tree) {
  before_value();
  // A document's own stream may spread a tree's long arrays over threads; an array element's
  // stream is already on one of them.
  Writer(m_out, m_indent, m_base_depth == 0).value(tree, depth());
}

void JsonStream::array_of(std::size_t count, const std::function<void(JsonStream&, std::size_t)>& write) {
  before_value();
  const int element_depth = depth() + 1;
  const auto write_one = [&](std::size_t i) {
    std::string part;
    part.reserve(k_element_reserve);
    JsonStream element(part, m_indent, element_depth);
    write(element, i);
    if (!element.m_levels.empty() || element.m_after_key) {
      throw std::logic_error("JsonStream: an array element left unclosed");
    }
    return part;
  };
  auto parts = count >= k_parallel_elements ? parallel_map<std::string>(count, write_one) : [&] {
    std::vector<std::string> serial;
    for (std::size_t i = 0; i < count; ++i) {
      serial.push_back(write_one(i));
    }
    return serial;
  }();
  if (m_pieces == nullptr) {
    append_joined_array(m_out, parts, m_indent, depth());
    return;
  }
  // The same text, each element moved to the pieces (after the text before it) instead of copied.
  append_array(m_out, parts.size(), m_indent, depth(), [&](std::size_t i) {
    m_pieces->push_back(std::move(m_out));
    m_out.clear();
    m_pieces->push_back(std::move(parts[i]));
  });
}

} // namespace cudadiag
