#include "fleet/json_stream.hpp"

#include <cctype>

namespace cudadiag::fleet {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

std::string clipped(std::string_view text) {
  return std::string(text.substr(0, k_stray_text_bytes)) + (text.size() > k_stray_text_bytes ? "..." : "");
}

} // namespace

PrefixedLine split_prefix(std::string_view line) {
  // kubectl logs --prefix: "[pod/NAME/CONTAINER] text"
  if (line.rfind("[pod/", 0) == 0) {
    if (const auto end = line.find("] "); end != std::string_view::npos) {
      return {std::string(line.substr(1, end - 1)), line.substr(end + 2)};
    }
    if (line.size() >= 2 && line.back() == ']' && line.find(']') == line.size() - 1) {
      return {std::string(line.substr(1, line.size() - 2)), std::string_view()};
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
    return {"task " + std::string(line.substr(digits, i - digits)),
            i + 1 == line.size() ? std::string_view() : line.substr(i + 2)};
  }
  return {std::string(), line};
}

StreamSplitter::Source& StreamSplitter::source_for(std::string_view prefix_label) {
  auto it = m_sources.find(std::string(prefix_label));
  if (it == m_sources.end()) {
    Source source;
    source.label = prefix_label.empty() ? m_name : m_name + ": " + std::string(prefix_label);
    it = m_sources.emplace(std::string(prefix_label), std::move(source)).first;
    m_order.emplace_back(prefix_label);
  }
  return it->second;
}

void StreamSplitter::add_line(std::string_view line, std::vector<StreamDocument>& done, std::vector<StrayText>& stray) {
  ++m_line;
  const auto prefixed = split_prefix(line);
  scan(source_for(prefixed.label), prefixed.rest, done, stray);
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
      source.first_line = m_line;
    }
    // Inside a document: find where it closes on this line, if it does.
    std::size_t i = 0;
    for (; i < rest.size(); ++i) {
      const char c = rest[i];
      if (source.in_string) {
        if (source.escaped) {
          source.escaped = false;
        } else if (c == '\\') {
          source.escaped = true;
        } else if (c == '"') {
          source.in_string = false;
        }
      } else if (c == '"') {
        source.in_string = true;
      } else if (c == '{' || c == '[') {
        ++source.depth;
      } else if (c == '}' || c == ']') {
        if (--source.depth == 0) {
          break;
        }
      }
    }
    if (i == rest.size()) {
      // Lines are joined without a separator: srun --label splits long lines into ~1 KiB pieces,
      // each on a line of its own, and pretty-printed JSON never needs the line break between tokens.
      source.text.append(rest);
      return;
    }
    source.text.append(rest.substr(0, i + 1));
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
