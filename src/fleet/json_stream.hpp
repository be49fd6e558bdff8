#pragma once
// Splitting a text stream of cudadiag reports into one JSON document per node. The stream is what
// `srun … cudadiag --json`, `kubectl logs` or a saved .jsonl file holds: JSON documents one after
// another (one per line, or pretty-printed over many lines), where each line may carry the
// launcher's prefix and lines of different nodes may interleave:
//   srun --label            "12: {…"                      -> source "task 12"
//   kubectl logs --prefix   "[pod/cudadiag-x7f2k/cudadiag] {…"  -> source "pod/cudadiag-x7f2k/cudadiag"
// Lines are demultiplexed by prefix first, so interleaved documents come apart (srun also splits a
// long line into pieces of about 1 KiB, each labelled on a line of its own: a source's lines are
// joined without a separator); unprefixed lines form one source, which only works when the
// launcher did not interleave them (srun does: use --label). Text outside a document (a node's "command not
// found") is kept as stray text for the caller to report; nothing is dropped silently.

#include "fleet/json_scan.hpp"

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace cudadiag::fleet {

struct StreamDocument {
  std::string source;     // "stdin", "stdin: task 3", "fleet.jsonl: pod/cudadiag-x7f2k/cudadiag"
  std::size_t first_line; // 1-based line of the stream where the document starts
  std::string text;       // the document's JSON text (not yet parsed)
};

struct StrayText {
  std::string source;
  std::size_t line = 0; // 1-based
  std::string text;     // the line (at most k_stray_text_bytes of it), or what was cut off
};

inline constexpr std::size_t k_stray_text_bytes = 200;

// The launcher prefix of a line, if any: {key, rest of the line}. The key is the task number for
// srun --label ("12") and "pod/NAME/CONTAINER" for kubectl --prefix; empty when the line has no
// prefix. label() names the source as the output shows it ("task 12", "pod/NAME/CONTAINER").
struct PrefixedLine {
  std::string_view key;
  std::string_view rest;
  bool srun = false;
  [[nodiscard]] std::string label() const { return srun ? "task " + std::string(key) : std::string(key); }
};
PrefixedLine split_prefix(std::string_view line);

// Feed it lines (without the newline); complete documents come out as soon as they end.
class StreamSplitter {
public:
  explicit StreamSplitter(std::string name) : m_name(std::move(name)) {}

  // Adds one line; appends each document it completes to `done` and stray text to `stray`.
  void add_line(std::string_view line, std::vector<StreamDocument>& done, std::vector<StrayText>& stray);

  // Adds every line of a block: the same as add_line on each piece of `text` between '\n's, the last
  // piece only when it is not empty (a block that ends in '\n' ends with a whole line). The fast
  // path for streams: one scan finds each line's end and its document's brackets together.
  void add_lines(std::string_view text, std::vector<StreamDocument>& done, std::vector<StrayText>& stray);

  // add_lines over a large block, on up to `threads` threads: its lines are demultiplexed by prefix
  // in parts of the block at once, then each source's lines are scanned in order on one thread (the
  // sources are independent), and what they give is merged back into line order. The same documents
  // and stray text, in the same order, as add_lines (a block under `min_bytes` goes to add_lines).
  static constexpr std::size_t k_parallel_min_bytes = std::size_t{1} << 20U;
  void add_lines_parallel(std::string_view text, unsigned threads, std::vector<StreamDocument>& done,
                          std::vector<StrayText>& stray, std::size_t min_bytes = k_parallel_min_bytes);

  // The end of the stream: a document still open is reported as stray text ("ends inside a
  // JSON document"), since a node whose output was cut off must not vanish.
  void finish(std::vector<StrayText>& stray);

  [[nodiscard]] std::size_t lines() const { return m_line; }

  // Hands back a document's text buffer once it is parsed: the next document is read into it
  // instead of a fresh allocation (at most k_spare_buffers are kept: enough for a parser's batch of
  // reports of ~100 KiB or more, so that a long stream allocates and frees few buffers).
  void recycle(std::string buffer);
  static constexpr std::size_t k_spare_buffers = 1024;

private:
  struct Source {
    std::string label;
    std::string text;
    std::size_t first_line = 0;
    json_scan::State scan; // where the open document stands
  };
  Source& source_for(const PrefixedLine& prefixed);
  std::string take_buffer(std::size_t capacity);
  void scan(Source& source, std::string_view rest, std::vector<StreamDocument>& done,
            std::vector<StrayText>& stray);
  // scan() for line `line`, with a buffer of `capacity` for a new document; touches only `source`.
  static void scan_at(Source& source, std::string_view rest, std::size_t line, std::size_t capacity,
                      std::vector<StreamDocument>& done, std::vector<StrayText>& stray);
  // add_lines' step: the line that starts at `at`; returns the offset after it (after its '\n').
  std::size_t add_line_at(std::string_view text, std::size_t at, std::vector<StreamDocument>& done,
                          std::vector<StrayText>& stray);
  void emit(Source& source, std::vector<StreamDocument>& done);

  std::string m_name;
  std::size_t m_line = 0;
  std::size_t m_last_size = 0;      // the previous document's size: the next one is reserved that large
  std::vector<std::string> m_spare; // buffers handed back by recycle()
  // Lookup by string_view without building a string per line.
  struct KeyHash {
    using is_transparent = void;
    std::size_t operator()(std::string_view key) const { return std::hash<std::string_view>{}(key); }
  };
  std::unordered_map<std::string, Source, KeyHash, std::equal_to<>> m_sources;
  std::vector<std::string> m_order; // prefixes in order of appearance (for finish())
  std::string m_last_key;           // the previous line's prefix and its source: lines of one task
  Source* m_last = nullptr;         // usually come in runs
};

} // namespace cudadiag::fleet
