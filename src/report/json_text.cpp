#include "report/json_text.hpp"

#include "core/parallel.hpp"

#include <charconv>

namespace cudadiag::report {
namespace {

using nlohmann::json;

class Writer {
public:
  // `parallel`: long arrays may be written on several threads (the outermost writer only).
  Writer(std::string& out, int indent, bool parallel) : m_out(out), m_indent(indent), m_parallel(parallel) {}

  void value(const json& node, int depth) {
    switch (node.type()) {
    case json::value_t::object: object(node, depth); return;
    case json::value_t::array: array(node, depth); return;
    case json::value_t::string: string(node.get_ref<const std::string&>()); return;
    case json::value_t::boolean: m_out += node.get<bool>() ? "true" : "false"; return;
    case json::value_t::null: m_out += "null"; return;
    case json::value_t::number_integer: integer(node.get<std::int64_t>()); return;
    case json::value_t::number_unsigned: integer(node.get<std::uint64_t>()); return;
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
      m_out += first ? "" : ",";
      first = false;
      newline(depth + 1);
      string(key);
      m_out += m_indent >= 0 ? ": " : ":";
      value(member, depth + 1);
    }
    newline(depth);
    m_out += '}';
  }

  void array(const json& node, int depth) {
    if (node.empty()) {
      m_out += "[]";
      return;
    }
    // The long arrays near the top (a report's components and closures) are written element by
    // element on several threads, each into its own text, then joined in order.
    std::vector<std::string> parts;
    if (m_parallel && node.size() >= k_parallel_elements) {
      parts = parallel_map<std::string>(node.size(), [&](std::size_t i) {
        std::string part;
        Writer(part, m_indent, false).value(node[i], depth + 1);
        return part;
      });
    }
    m_out += '[';
    for (std::size_t i = 0; i < node.size(); ++i) {
      m_out += i == 0 ? "" : ",";
      newline(depth + 1);
      if (parts.empty()) {
        value(node[i], depth + 1);
      } else {
        m_out += parts[i];
      }
    }
    newline(depth);
    m_out += ']';
  }

  void newline(int depth) {
    if (m_indent < 0) {
      return;
    }
    m_out += '\n';
    m_out.append(static_cast<std::size_t>(depth) * static_cast<std::size_t>(m_indent), ' ');
  }

  // Printable ASCII without '"' or '\\' is written as it is; anything else the way nlohmann writes it.
  void string(const std::string& text) {
    for (const char c : text) {
      const auto byte = static_cast<unsigned char>(c);
      if (byte < 0x20U || byte >= 0x80U || c == '"' || c == '\\') {
        m_out += json(text).dump(-1, ' ', false, json::error_handler_t::replace);
        return;
      }
    }
    m_out += '"';
    m_out += text;
    m_out += '"';
  }

  template <typename Integer>
  void integer(Integer number) {
    char digits[24];
    const auto [end, error] = std::to_chars(digits, digits + sizeof digits, number);
    m_out.append(digits, end);
  }

  static constexpr std::size_t k_parallel_elements = 16;

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

} // namespace cudadiag::report
