#include "fleet/json_stream.hpp"

#include "fleet/json_scan.hpp"

#include <cctype>

namespace cudadiag::fleet {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// Room left after a document for the parser's padding (simdjson reads up to 64 bytes past the end).
constexpr std::size_t k_document_slack = 4096;

// Equality of short keys ("12", "pod/NAME/CONTAINER") without a call to memcmp: it runs once per
// line of input, almost always against the previous line's key.
bool same_key(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) {
      return false;
    }
  }
  return true;
}

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
  if (m_last != nullptr && same_key(prefixed.key, m_last_key)) {
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
    if (source.scan.depth == 0) {
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
      // Nodes' reports are alike: start with a buffer the last document (of any source) would have
      // fitted in, with the parser's padding. A recycled one when there is one, else a new one.
      source.text = take_buffer(m_last_size + k_document_slack);
      source.first_line = m_line;
    }
    // Inside a document: find where it closes on this line, if it does.
    const auto end = json_scan::advance(source.scan, rest);
    const bool closed = end != json_scan::npos;
    const std::size_t i = closed ? end : rest.size();
    if (!closed) {
      // Lines are joined without a separator: srun --label splits long lines into ~1 KiB pieces,
      // each on a line of its own, and pretty-printed JSON never needs the line break between tokens.
      source.text.append(rest);
      return;
    }
    source.text.append(rest.substr(0, i + 1));
    m_last_size = source.text.size();
    done.push_back({source.label, source.first_line, std::move(source.text)});
    source.text = std::string();
    source.scan = {};
    rest.remove_prefix(i + 1);
  }
}

std::string StreamSplitter::take_buffer(std::size_t capacity) {
  std::string buffer;
  if (!m_spare.empty()) {
    buffer = std::move(m_spare.back());
    m_spare.pop_back();
    buffer.clear();
  }
  buffer.reserve(capacity);
  return buffer;
}

void StreamSplitter::recycle(std::string buffer) {
  if (m_spare.size() < k_spare_buffers && buffer.capacity() > 0) {
    m_spare.push_back(std::move(buffer));
  }
}

void StreamSplitter::finish(std::vector<StrayText>& stray) {
  for (const auto& prefix : m_order) {
    auto& source = m_sources.at(prefix);
    if (source.scan.depth != 0) {
      stray.push_back({source.label, source.first_line,
                       "the output ends inside a JSON document that starts here (" +
                           std::to_string(source.text.size()) + " bytes): was it cut off?"});
      source.scan = {};
      source.text.clear();
    }
  }
}

} // namespace cudadiag::fleet
