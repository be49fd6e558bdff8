#include "fleet/json_stream.hpp"

#include "fleet/json_scan.hpp"

#include <algorithm>
#include <atomic>
#include <iterator>
#include <thread>

namespace cudadiag::fleet {
namespace {

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// std::isdigit in every locale (POSIX allows no other digits), without a call per byte.
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// The offset after the line that ends at `end` (a '\n', or the end of the text).
std::size_t after_line(std::string_view text, std::size_t end) {
  return end == text.size() ? end : end + 1;
}

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
    return {line.substr(digits, i - digits), i + 1 == line.size() ? std::string_view() : line.substr(i + 2),
            true};
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

void StreamSplitter::add_line(std::string_view line, std::vector<StreamDocument>& done,
                              std::vector<StrayText>& stray) {
  ++m_line;
  const auto prefixed = split_prefix(line);
  scan(source_for(prefixed), prefixed.rest, done, stray);
}

void StreamSplitter::scan(Source& source, std::string_view rest, std::vector<StreamDocument>& done,
                          std::vector<StrayText>& stray) {
  const auto before = done.size();
  if (source.scan.depth == 0 && source.text.capacity() == 0) {
    source.text = take_buffer(m_last_size + k_document_slack); // a recycled buffer for the next document
  }
  scan_at(source, rest, m_line, m_last_size + k_document_slack, done, stray);
  if (done.size() != before) {
    m_last_size = done.back().text.size();
  }
}

void StreamSplitter::scan_at(Source& source, std::string_view rest, std::size_t line, std::size_t capacity,
                             std::vector<StreamDocument>& done, std::vector<StrayText>& stray) {
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
        stray.push_back({source.label, line, clipped(rest.substr(start))});
        return;
      }
      rest.remove_prefix(start);
      // Nodes' reports are alike: start with a buffer the last document would have fitted in, with
      // the parser's padding.
      source.text.clear();
      source.text.reserve(capacity);
      source.first_line = line;
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
    done.push_back({source.label, source.first_line, std::move(source.text)});
    source.text = std::string();
    source.scan = {};
    rest.remove_prefix(i + 1);
  }
}

namespace {

// One line of a part of a block: its content after the prefix, and its line number in the part.
struct Piece {
  std::string_view rest;
  std::size_t line = 0;
};

// What demultiplexing one part of a block found: each prefix (in order of appearance) with its lines.
struct Part {
  std::size_t lines = 0;
  std::vector<PrefixedLine> keys;         // rest unused
  std::vector<std::vector<Piece>> pieces; // per key
};

Part demultiplex(std::string_view text) {
  Part part;
  std::unordered_map<std::string_view, std::size_t> ids;
  std::string_view last_key;
  std::size_t last_id = 0;
  bool have_last = false;
  for (std::size_t at = 0; at < text.size();) {
    const auto newline = text.find('\n', at);
    const auto end = newline == std::string_view::npos ? text.size() : newline;
    const auto prefixed = split_prefix(text.substr(at, end - at));
    ++part.lines;
    std::size_t id = last_id;
    if (!have_last || !same_key(prefixed.key, last_key)) {
      const auto [it, inserted] = ids.try_emplace(prefixed.key, part.keys.size());
      if (inserted) {
        part.keys.push_back({prefixed.key, std::string_view(), prefixed.srun});
        part.pieces.emplace_back();
      }
      id = it->second;
      last_key = prefixed.key;
      last_id = id;
      have_last = true;
    }
    part.pieces[id].push_back({prefixed.rest, part.lines});
    at = after_line(text, end);
  }
  return part;
}

// Runs `work(i)` for i in [0, count) on up to `threads` threads.
template <class Work> void run_parallel(std::size_t count, unsigned threads, const Work& work) {
  std::atomic<std::size_t> next{0};
  const auto body = [&] {
    for (auto i = next++; i < count; i = next++) {
      work(i);
    }
  };
  std::vector<std::thread> workers;
  for (std::size_t t = 1; t < std::min<std::size_t>(threads, count); ++t) {
    workers.emplace_back(body);
  }
  body();
  for (auto& worker : workers) {
    worker.join();
  }
}

} // namespace

void StreamSplitter::add_lines_parallel(std::string_view text, unsigned threads,
                                        std::vector<StreamDocument>& done, std::vector<StrayText>& stray,
                                        std::size_t min_bytes) {
  if (threads <= 1 || text.size() < min_bytes || text.empty()) {
    add_lines(text, done, stray);
    return;
  }
  // Parts of about equal size, each starting at a line's start.
  std::vector<std::size_t> bounds{0};
  for (unsigned i = 1; i < threads; ++i) {
    const auto newline = text.find('\n', std::max(bounds.back(), text.size() / threads * i));
    if (newline == std::string_view::npos || newline + 1 >= text.size()) {
      break;
    }
    bounds.push_back(newline + 1);
  }
  bounds.push_back(text.size());
  std::vector<Part> parts(bounds.size() - 1);
  run_parallel(parts.size(), threads, [&](std::size_t i) {
    parts[i] = demultiplex(text.substr(bounds[i], bounds[i + 1] - bounds[i]));
  });
  // Each part's prefixes as this splitter's sources (created in order of appearance, as add_line
  // would), and each source's lines across the parts, in order.
  struct Run {
    Source* source = nullptr;
    std::vector<std::pair<std::size_t, const std::vector<Piece>*>>
        lines; // (the part's first line - 1, its pieces)
  };
  std::vector<Run> runs;
  std::unordered_map<Source*, std::size_t> run_of;
  std::size_t base = m_line;
  for (const auto& part : parts) {
    for (std::size_t k = 0; k < part.keys.size(); ++k) {
      auto* source = &source_for(part.keys[k]);
      const auto [it, inserted] = run_of.try_emplace(source, runs.size());
      if (inserted) {
        runs.push_back({source, {}});
      }
      runs[it->second].lines.emplace_back(base, &part.pieces[k]);
    }
    base += part.lines;
  }
  m_last = nullptr;
  // Each source's lines scanned in order on one thread; what each gives is tagged with its line.
  struct Output {
    std::vector<std::pair<std::size_t, StreamDocument>> documents;
    std::vector<StrayText> stray;
  };
  std::vector<Output> outputs(runs.size());
  const auto capacity = m_last_size + k_document_slack;
  run_parallel(runs.size(), threads, [&](std::size_t r) {
    std::vector<StreamDocument> documents;
    for (const auto& [first, pieces] : runs[r].lines) {
      for (const auto& piece : *pieces) {
        const auto before = documents.size();
        scan_at(*runs[r].source, piece.rest, first + piece.line, capacity, documents, outputs[r].stray);
        for (auto i = before; i < documents.size(); ++i) {
          outputs[r].documents.emplace_back(first + piece.line, std::move(documents[i]));
        }
        documents.clear();
      }
    }
  });
  m_line = base;
  // Back into line order: one source per line, so (line, then each source's own order) is add_lines'.
  std::vector<std::pair<std::size_t, StreamDocument>> documents;
  std::vector<StrayText> strays;
  for (auto& output : outputs) {
    std::move(output.documents.begin(), output.documents.end(), std::back_inserter(documents));
    std::move(output.stray.begin(), output.stray.end(), std::back_inserter(strays));
  }
  std::stable_sort(documents.begin(), documents.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::stable_sort(strays.begin(), strays.end(),
                   [](const auto& a, const auto& b) { return a.line < b.line; });
  for (auto& [line, document] : documents) {
    done.push_back(std::move(document));
  }
  if (!documents.empty()) {
    m_last_size = done.back().text.size();
  }
  std::move(strays.begin(), strays.end(), std::back_inserter(stray));
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
std::size_t StreamSplitter::add_line_at(std::string_view text, std::size_t at,
                                        std::vector<StreamDocument>& done, std::vector<StrayText>& stray) {
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
