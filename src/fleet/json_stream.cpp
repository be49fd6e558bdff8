#include "fleet/json_stream.hpp"

#include "fleet/json_scan.hpp"

namespace cudadiag::fleet {
namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

// std::isdigit in every locale (POSIX allows no other digits), without a call per byte.
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The offset after the line that ends at `end` (a '\n', or the end of the text).
std::size_t after_line(std::string_view text, std::size_t end) { return end == text.size() ? end : end + 1; }

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
  while (i < line.size() && is_digit(line[i])) {
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
    emit(source, done);
    rest.remove_prefix(i + 1);
  }
}

void StreamSplitter::emit(Source& source, std::vector<StreamDocument>& done) {
  m_last_size = source.text.size();
  done.push_back({source.label, source.first_line, std::move(source.text)});
  source.text = std::string();
  source.scan = {};
}

void StreamSplitter::add_lines(std::string_view text, std::vector<StreamDocument>& done,
                               std::vector<StrayText>& stray) {
  for (std::size_t at = 0; at < text.size();) {
    at = add_line_at(text, at, done, stray);
  }
}

// What add_line does, without finding the line's end first: the prefix is read from the line's start
// and the end comes out of the scan of the document's text (json_scan::advance_line).
std::size_t StreamSplitter::add_line_at(std::string_view text, std::size_t at, std::vector<StreamDocument>& done,
                                        std::vector<StrayText>& stray) {
  const char* data = text.data();
  const std::size_t size = text.size();
  if (data[at] == '[') {
    // Perhaps kubectl's prefix, which split_prefix finds only on the whole line.
    const auto newline = text.find('\n', at);
    const auto end = newline == std::string_view::npos ? size : newline;
    add_line(text.substr(at, end - at), done, stray);
    return after_line(text, end);
  }
  ++m_line;
  // srun --label's prefix, read as split_prefix reads it; '\n' ends the line.
  PrefixedLine prefixed;
  std::size_t content = at;
  std::size_t i = at;
  while (i < size && data[i] == ' ') {
    ++i;
  }
  const std::size_t digits = i;
  while (i < size && is_digit(data[i])) {
    ++i;
  }
  if (i > digits && i < size && data[i] == ':') {
    const bool bare = i + 1 == size || data[i + 1] == '\n';
    if (bare || data[i + 1] == ' ') {
      prefixed.key = text.substr(digits, i - digits);
      prefixed.srun = true;
      content = bare ? i + 1 : i + 2;
    }
  }
  auto& source = m_last != nullptr && same_key(prefixed.key, m_last_key) ? *m_last : source_for(prefixed);
  while (true) {
    if (source.scan.depth == 0) {
      while (content < size && data[content] != '\n' && is_space(data[content])) {
        ++content;
      }
      if (content == size || data[content] == '\n') {
        return after_line(text, content);
      }
      if (data[content] != '{') {
        const auto newline = text.find('\n', content);
        const auto end = newline == std::string_view::npos ? size : newline;
        stray.push_back({source.label, m_line, clipped(text.substr(content, end - content))});
        return after_line(text, end);
      }
      source.text = take_buffer(m_last_size + k_document_slack);
      source.first_line = m_line;
    }
    const auto scanned = json_scan::advance_line(source.scan, text.substr(content));
    if (scanned.close == json_scan::npos) {
      source.text.append(data + content, scanned.line_end);
      return after_line(text, content + scanned.line_end);
    }
    source.text.append(data + content, scanned.close + 1);
    emit(source, done);
    content += scanned.close + 1;
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
