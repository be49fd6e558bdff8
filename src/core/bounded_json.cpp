#include "core/bounded_json.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

namespace cudadiag::bounded_json {
namespace {

using nlohmann::json;

// nlohmann's out_of_range id for a number no double holds ("number overflow parsing '1e400'").
constexpr int k_number_overflow_id = 406;

// Builds the document from SAX events with an explicit stack (the parser itself is iterative), and
// stops the parse at the first container that would nest deeper than the limit.
class Builder final : public nlohmann::json_sax<json> {
public:
  Builder(json& root, std::size_t max_depth) : m_root(root), m_max_depth(max_depth) {}

  bool null() override { return put(json(nullptr)); }
  bool boolean(bool value) override { return put(json(value)); }
  bool number_integer(number_integer_t value) override { return put(json(value)); }
  bool number_unsigned(number_unsigned_t value) override { return put(json(value)); }
  bool number_float(number_float_t value, const string_t& /*text*/) override { return put(json(value)); }
  bool string(string_t& value) override { return put(json(std::move(value))); }
  bool binary(binary_t& value) override { return put(json::binary(std::move(value))); }
  bool start_object(std::size_t /*elements*/) override { return open(json::object()); }
  bool key(string_t& name) override {
    m_slot = &(*m_stack.back())[name];
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t /*elements*/) override { return open(json::array()); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t position, const std::string& /*last_token*/,
                   const nlohmann::json::exception& error) override {
    m_failure.byte = position;
    m_failure.detail = error.what();
    m_failure.problem = error.id == k_number_overflow_id ? Problem::number_out_of_range : Problem::syntax;
    return false;
  }

  [[nodiscard]] const Failure& failure() const { return m_failure; }

private:
  json* place(json value) {
    if (m_stack.empty()) {
      m_root = std::move(value);
      return &m_root;
    }
    json& top = *m_stack.back();
    if (top.is_array()) {
      top.push_back(std::move(value));
      return &top.back();
    }
    *m_slot = std::move(value);
    return m_slot;
  }
  bool put(json value) {
    place(std::move(value));
    return true;
  }
  bool open(json container) {
    if (m_stack.size() >= m_max_depth) {
      m_failure.problem = Problem::too_deep;
      m_failure.detail = "more than " + std::to_string(m_max_depth) + " nested arrays/objects";
      return false;
    }
    m_stack.push_back(place(std::move(container)));
    return true;
  }
  bool close() {
    m_stack.pop_back();
    return true;
  }

  json& m_root;
  std::size_t m_max_depth;
  std::vector<json*> m_stack; // the open containers; each lives inside its parent, which does not move
  json* m_slot = nullptr;     // the member the next value of the innermost object goes to
  Failure m_failure;
};

bool blank(std::string_view text) {
  return std::all_of(text.begin(), text.end(),
                     [](char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; });
}

} // namespace

std::string Failure::message() const {
  switch (problem) {
  case Problem::empty: return "is empty";
  case Problem::truncated:
    return "is truncated JSON: it ends before the document is complete (was it cut off while being written "
           "or "
           "copied?)";
  case Problem::too_deep: return "is JSON nested deeper than " + std::to_string(limits.max_depth) + " levels";
  case Problem::too_large: return "is larger than " + std::to_string(limits.max_bytes) + " bytes";
  case Problem::number_out_of_range:
    return "holds a number out of range at byte " + std::to_string(byte) + " (" + detail + ")";
  case Problem::syntax: break;
  }
  return "is not JSON (syntax error at byte " + std::to_string(byte) + ")";
}

std::variant<json, Failure> parse(std::string_view text, const Limits& limits) {
  Failure failure;
  failure.limits = limits;
  if (text.size() > limits.max_bytes) {
    failure.problem = Problem::too_large;
    return failure;
  }
  if (blank(text)) {
    failure.problem = Problem::empty;
    return failure;
  }
  json document;
  Builder builder(document, limits.max_depth);
  bool ok = false;
  try {
    ok = json::sax_parse(text.begin(), text.end(), &builder);
  } catch (const nlohmann::json::exception& error) { // not expected from sax_parse; kept total anyway
    failure.detail = error.what();
    return failure;
  }
  if (ok) {
    return document;
  }
  failure.problem = builder.failure().problem;
  failure.byte = builder.failure().byte;
  failure.detail = builder.failure().detail;
  // A document cut off ends inside a value: the parser runs out of input (fails past the last byte).
  if (failure.problem == Problem::syntax && failure.byte > text.size()) {
    failure.problem = Problem::truncated;
  }
  return failure;
}

Expected<json> parse_or_error(std::string_view text, std::string_view origin, const Limits& limits) {
  auto parsed = parse(text, limits);
  if (auto* failure = std::get_if<Failure>(&parsed)) {
    return Error{std::string(origin) + ": " + failure->message()};
  }
  return std::move(std::get<json>(parsed));
}

} // namespace cudadiag::bounded_json
