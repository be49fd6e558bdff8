#pragma once
// JSON documents as text, fast: the same bytes as nlohmann's
//   value.dump(indent, ' ', false, nlohmann::json::error_handler_t::replace)
// (sorted keys, invalid UTF-8 replaced by U+FFFD), written in one pass into one buffer. A report's
// JSON is ~500 KB of mostly ASCII paths: those strings are copied whole instead of being decoded
// byte by byte; a string that needs escaping or holds non-ASCII bytes, and every floating-point
// number, is written by nlohmann itself, so the output cannot drift from it.
//
// Two ways in: dump_json writes a tree; JsonStream writes a document member by member, straight
// from the structs it describes, so the largest parts of a report (its components) never become a
// tree of small allocations at all. Both give nlohmann's bytes for the same document.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag {

// `text` with every byte that is not part of valid UTF-8 replaced by the four characters \xNN.
std::string to_valid_utf8(std::string_view text);

// `indent` < 0: compact (no newlines); >= 0: that many spaces per level, one member per line.
std::string dump_json(const nlohmann::json& value, int indent);

// Writes one JSON value into `out` as dump_json would write the same tree.
// Contract: an object's members must be written in nlohmann's order (ascending by key, bytewise),
// which is what a tree would hold; a key out of order throws std::logic_error rather than writing
// a document that differs from the tree's. Every begin_* is closed by its end_*.
class JsonStream {
public:
  // `depth`: the nesting level of the value written (an element of a top-level array is at 2).
  JsonStream(std::string& out, int indent, int depth = 0);

  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  // The next member's name (inside an object only).
  void key(std::string_view name);

  // Text as the report writes all text: invalid UTF-8 bytes spelled "\xNN" (to_valid_utf8).
  void text(std::string_view value);
  void optional_text(const std::optional<std::string>& value);
  // A string as nlohmann writes a std::string: invalid UTF-8 replaced by U+FFFD.
  void string(std::string_view value);
  void optional_string(const std::optional<std::string>& value);
  void strings(const std::vector<std::string>& values); // an array of string()
  void null();
  void boolean(bool value);
  void integer(std::int64_t value);
  void unsigned_integer(std::uint64_t value);
  void unsigned_integers(const std::vector<std::size_t>& values);
  // Any value as a tree (the parts of a document that are small or built elsewhere).
  void value(const nlohmann::json& tree);

  // An array of `count` elements, each written by `write(element_stream, index)`; long arrays are
  // written on several threads, each element into its own text, then joined in order.
  void array_of(std::size_t count, const std::function<void(JsonStream&, std::size_t)>& write);

  // From now on, array_of hands its elements' texts over instead of copying them into `out`: the
  // text written so far and each element's text are moved to the end of `pieces`, and `out` starts
  // again empty. The document is then `pieces` followed by `out`, in that order. For a writer that
  // sends a large document out piece by piece (the CLI's JSON report, half a megabyte), which then
  // never holds it all in one string.
  void hand_over_arrays_to(std::vector<std::string>& pieces) { m_pieces = &pieces; }

private:
  struct Level {
    bool object = false;
    std::size_t members = 0;
    std::string last_key;
  };
  void before_value();
  void newline(int depth);
  [[nodiscard]] int depth() const;

  std::string& m_out;
  int m_indent;
  int m_base_depth;
  std::vector<Level> m_levels;
  bool m_after_key = false;
  std::vector<std::string>* m_pieces = nullptr; // hand_over_arrays_to
};

} // namespace cudadiag
