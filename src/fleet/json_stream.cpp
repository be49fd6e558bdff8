#include "fleet/json_stream.hpp"

#include <array>
#include <cctype>

namespace cudadiag::fleet {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// The bytes the scanner must look at: outside strings the quote and brackets, inside strings the
// quote and the backslash. Everything else is skipped a table lookup at a time.
constexpr std::array<bool, 256> table_of(std::string_view bytes) {
  std::array<bool, 256> table{};
  for (const char c : bytes) {
    table[static_cast<unsigned char>(c)] = true;
  }
  return table;
}
constexpr auto k_structural = table_of("\"{}[]");
constexpr auto k_in_string = table_of("\"\\");
// Room left after a document for the parser's padding (simdjson reads up to 64 bytes past the end).
constexpr std::size_t k_document_slack = 4096;

std::string clipped(std::string_view text) {
  return std::string(text.substr(0, k_stray_text_bytes)) + (text.size() > k_stray_text_bytes ? "..." : "");
}

} // namespace

PrefixedLine split_prefix(std::string_view line) {
  // kubectl logs --prefix: "[pod/NAME/CONTAINER] text"
  if (line.size() > 5 && line[0] == '[' && line.compare(1, 4, "pod/") == 0) {
    if (const auto end = line.find("] "); end != std::string_view::npos) {
      return {line.substr(1, end - 1), line.substr(end + 2), false};
    }
    if (line.back() == ']' && line.find(']') == line.size() - 1) {
      return {line.substr(1, line.size() - 2), std::string_view(), false};
    }
  }
  // srun --label: optional spaces, the task number, ": ". A JSON line never looks like this (object
  // keys are quoted; numbers in arrays are not followed by a colon).
  std::size_t i = 0;
  while (i < line.size() && line[i] == ' ') {
    ++i;
  }
  const std::size_t digits = i;
  while (i < line.size() && std::isdigit(static_cast<unsigned char>(line[i])) != 0) {
    ++i;
  }
  if (i > digits && i < line.size() && line[i] == ':' && (i + 1 == line.size() || line[i + 1] == ' ')) {
    return {line.substr(digits, i - digits), i + 1 == line.size() ? std::string_view() : line.substr(i + 2), true};
  }
  return {std::string_view(), line, false};
}

StreamSplitter::Source& StreamSplitter::source_for(const PrefixedLine& prefixed) {
  if (m_last != nullptr && prefixed.key == m_last_key) {
    return *m_last;
  }
  auto it = m_sources.find(prefixed.key);
  if (it == m_sources.end()) {
    Source source;
    source.label = prefixed.key.empty() ? m_name : m_name + ": " + prefixed.label();
    it = m_sources.emplace(std::string(prefixed.key), std::move(source)).first;
    m_order.emplace_back(prefixed.key);
  }
  m_last_key.assign(prefixed.key);
  m_last = &it->second;
  return it->second;
}

void StreamSplitter::add_line(std::string_view line, std::vector<StreamDocument>& done, std::vector<StrayText>& stray) {
  ++m_line;
  const auto prefixed = split_prefix(line);
  scan(source_for(prefixed), prefixed.rest, done, stray);
}

void StreamSplitter::scan(Source& source, std::string_view rest, std::vector<StreamDocument>& done,
                          std::vector<StrayText>& stray) {
  while (!rest.empty()) {
    if (source.depth == 0) {
      std::size_t start = 0;
      while (start < rest.size() && is_space(rest[start])) {
        ++start;
      }
      if (start == rest.size()) {
        return;
      }
      if (rest[start] != '{') {
        stray.push_back({source.label, m_line, clipped(rest.substr(start))});
        return;
      }
      rest.remove_prefix(start);
      source.text.clear();
      // Nodes' reports are alike: reserve the last one's size (and the parser's padding) at once.
      source.text.reserve(source.last_size + k_document_slack);
      source.first_line = m_line;
    }
    // Inside a document: find where it closes on this line, if it does.
    const char* data = rest.data();
    const std::size_t size = rest.size();
    std::size_t i = 0;
    bool closed = false;
    while (i < size) {
      if (source.in_string) {
        if (source.escaped) {
          source.escaped = false;
          ++i;
          continue;
        }
        while (i < size && !k_in_string[static_cast<unsigned char>(data[i])]) {
          ++i;
        }
        if (i == size) {
          break;
        }
        if (data[i] == '\\') {
          source.escaped = true;
        } else {
          source.in_string = false;
        }
        ++i;
        continue;
      }
      while (i < size && !k_structural[static_cast<unsigned char>(data[i])]) {
        ++i;
      }
      if (i == size) {
        break;
      }
      const char c = data[i];
      if (c == '"') {
        source.in_string = true;
      } else if (c == '{' || c == '[') {
        ++source.depth;
      } else if (--source.depth == 0) {
        closed = true;
        break;
      }
      ++i;
    }
    if (!closed) {
      // Lines are joined without a separator: srun --label splits long lines into ~1 KiB pieces,
      // each on a line of its own, and pretty-printed JSON never needs the line break between tokens.
      source.text.append(rest);
      return;
    }
    source.text.append(rest.substr(0, i + 1));
    source.last_size = source.text.size();
    done.push_back({source.label, source.first_line, std::move(source.text)});
    source.text = std::string();
    source.in_string = false;
    source.escaped = false;
    rest.remove_prefix(i + 1);
  }
}

void StreamSplitter::finish(std::vector<StrayText>& stray) {
  for (const auto& prefix : m_order) {
    auto& source = m_sources.at(prefix);
    if (source.depth != 0) {
      stray.push_back({source.label, source.first_line,
                       "the output ends inside a JSON document that starts here (" +
                           std::to_string(source.text.size()) + " bytes): was it cut off?"});
      source.depth = 0;
      source.text.clear();
    }
  }
}

} // namespace cudadiag::fleet
