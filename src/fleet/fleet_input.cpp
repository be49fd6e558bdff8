#include "fleet/fleet_input.hpp"

#include "bundle/gzip.hpp"
#include "core/filesystem.hpp"
#include "diff/report_input.hpp"
#include "fleet/json_stream.hpp"
#include "fleet/report_reader.hpp"
#include "report/json_report.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <sys/stat.h>
#include <thread>
#include <utility>

namespace cudadiag::fleet {
namespace {

constexpr std::size_t k_chunk_bytes = std::size_t{1} << 20U;
// What read_stream gathers before it splits: large enough for StreamSplitter::add_lines_parallel to
// spread over the cores, small enough to keep a stream's memory bounded.
constexpr std::size_t k_split_block_bytes = std::size_t{16} << 20U;
constexpr std::array<std::string_view, 7> k_report_suffixes = {".json", ".jsonl",  ".ndjson", ".log",
                                                               ".txt",  ".tar.gz", ".tgz"};

struct Pending {
  std::string source;
  std::size_t line = 0;
  std::string text;
  double modified = 0; // the file's modification time (NodeFacts::modified)
};

// When `path` was last modified, in seconds since the epoch; 0 when unknown.
double modified_time(const std::string& path) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    return 0;
  }
  return static_cast<double>(info.st_mtim.tv_sec) + static_cast<double>(info.st_mtim.tv_nsec) / 1e9;
}

// Parses documents in batches on worker threads and hands the results to the builder in input
// order. Batches are double-buffered: while one batch is parsed, the caller goes on reading and
// splitting the next, so reading and parsing overlap.
class BatchParser {
public:
  BatchParser(FleetBuilder& builder, const InputOptions& options) : m_builder(builder), m_options(options) {
    m_threads =
        options.threads != 0 ? options.threads : std::clamp(std::thread::hardware_concurrency(), 1U, 16U);
  }
  BatchParser(const BatchParser&) = delete;
  BatchParser& operator=(const BatchParser&) = delete;
  ~BatchParser() { join(); }

  void add(Pending document) {
    m_bytes += document.text.size();
    m_filling.push_back(std::move(document));
    if (m_bytes >= m_options.batch_bytes) {
      start();
    }
  }

  [[nodiscard]] unsigned threads() const { return m_threads; }

  // The text buffers of documents already handed over, for the splitter to read the next ones into.
  std::vector<std::string> take_spare() { return std::exchange(m_spare, {}); }

  // Parses what is left and waits for every result.
  void flush() {
    start();
    join();
  }

private:
  struct Batch {
    std::vector<Pending> documents;
    std::vector<std::optional<Expected<NodeFacts>>> results;
  };

  // Waits for the batch in flight and hands its results over; then parses the filled one.
  void start() {
    join();
    if (m_filling.empty()) {
      return;
    }
    m_parsing.documents = std::move(m_filling);
    m_filling = {};
    m_bytes = 0;
    m_parsing.results.assign(m_parsing.documents.size(), std::nullopt);
    const auto workers = std::min<std::size_t>(m_threads, m_parsing.documents.size());
    for (std::size_t t = 0; t < workers; ++t) {
      m_workers.emplace_back([this, t, workers] {
        auto& batch = m_parsing;
        for (std::size_t i = t; i < batch.documents.size(); i += workers) {
          auto fields = read_fleet_fields_in_place(batch.documents[i].text);
          if (!fields) {
            batch.results[i].emplace(fields.error());
          } else {
            batch.results[i].emplace(node_facts(*fields, batch.documents[i].source));
            (*batch.results[i])->modified = batch.documents[i].modified;
          }
        }
      });
    }
  }

  void join() {
    if (m_workers.empty()) {
      return;
    }
    for (auto& worker : m_workers) {
      worker.join();
    }
    m_workers.clear();
    auto& batch = m_parsing;
    for (std::size_t i = 0; i < batch.documents.size(); ++i) {
      auto& result = *batch.results[i];
      if (result) {
        m_builder.add(std::move(*result), batch.documents[i].text);
      } else {
        m_builder.add_problem({batch.documents[i].source, batch.documents[i].line, result.error().message});
      }
      if (m_spare.size() < StreamSplitter::k_spare_buffers) {
        m_spare.push_back(std::move(batch.documents[i].text));
      }
    }
    batch = {};
  }

  FleetBuilder& m_builder;
  const InputOptions& m_options;
  unsigned m_threads = 1;
  std::vector<Pending> m_filling;
  std::size_t m_bytes = 0;
  Batch m_parsing;
  std::vector<std::thread> m_workers;
  std::vector<std::string> m_spare;
};

void add_stray(FleetBuilder& builder, std::vector<StrayText>& stray) {
  for (auto& text : stray) {
    builder.add_problem(
        {std::move(text.source), text.line, "not a report: \"" + report::to_valid_utf8(text.text) + "\""});
  }
  stray.clear();
}

// A growable byte buffer that is not zero-filled: the stream is read straight into its free end.
class ReadBuffer {
public:
  [[nodiscard]] std::string_view view() const { return {m_data.get(), m_size}; }
  // Room for at least `bytes` more at free(); what is held is kept.
  char* free(std::size_t bytes) {
    if (m_capacity - m_size < bytes) {
      const auto capacity = std::max(m_capacity * 2, m_size + bytes);
      auto grown = std::make_unique_for_overwrite<char[]>(capacity);
      std::memcpy(grown.get(), m_data.get(), m_size);
      m_data = std::move(grown);
      m_capacity = capacity;
    }
    return m_data.get() + m_size;
  }
  void grow(std::size_t bytes) { m_size += bytes; }
  // Drops the first `bytes`, keeping the rest at the start.
  void consume(std::size_t bytes) {
    std::memmove(m_data.get(), m_data.get() + bytes, m_size - bytes);
    m_size -= bytes;
  }

private:
  std::unique_ptr<char[]> m_data;
  std::size_t m_size = 0;
  std::size_t m_capacity = 0;
};

// Feeds `stream` to a splitter chunk by chunk, every whole line of a chunk at once; documents go to
// the parser as they complete.
void read_stream(std::FILE* stream, const std::string& name, std::string_view already_read,
                 BatchParser& parser, FleetBuilder& builder, double modified = 0) {
  StreamSplitter splitter(name);
  std::vector<StreamDocument> done;
  std::vector<StrayText> stray;
  ReadBuffer buffer;
  std::memcpy(buffer.free(already_read.size()), already_read.data(), already_read.size());
  buffer.grow(already_read.size());
  auto drain = [&](bool final) {
    const auto held = buffer.view();
    const auto last_newline = held.rfind('\n');
    const auto whole = final ? held.size() : last_newline == std::string_view::npos ? 0 : last_newline + 1;
    splitter.add_lines_parallel(held.substr(0, whole), parser.threads(), done, stray);
    buffer.consume(whole);
    for (auto& document : done) {
      parser.add({std::move(document.source), document.first_line, std::move(document.text), modified});
    }
    done.clear();
    for (auto& spare : parser.take_spare()) {
      splitter.recycle(std::move(spare));
    }
    add_stray(builder, stray);
  };
  while (true) {
    const auto got = std::fread(buffer.free(k_chunk_bytes), 1, k_chunk_bytes, stream);
    buffer.grow(got);
    if (got == 0) {
      if (std::ferror(stream) != 0) {
        builder.add_problem({name, splitter.lines(), std::string("read error: ") + std::strerror(errno)});
      }
      break;
    }
    // Lines are split a block at a time, across the parser's threads once the block is large.
    if (buffer.view().size() >= k_split_block_bytes) {
      drain(false);
    }
  }
  drain(true);
  splitter.finish(stray);
  add_stray(builder, stray);
}

// A deleter type rather than decltype(&std::fclose): g++ 13 warns that fclose's attributes are
// ignored on the template argument (-Wignored-attributes).
struct FileCloser {
  void operator()(std::FILE* file) const { std::fclose(file); }
};

void read_file(const std::string& path, BatchParser& parser, FleetBuilder& builder) {
  std::unique_ptr<std::FILE, FileCloser> file(std::fopen(path.c_str(), "rb"));
  if (!file) {
    builder.add_problem({path, 0, std::string("cannot read: ") + std::strerror(errno)});
    return;
  }
  std::string head(2, '\0');
  head.resize(std::fread(head.data(), 1, head.size(), file.get()));
  if (!bundle::looks_like_gzip(head)) {
    read_stream(file.get(), path, head, parser, builder, modified_time(path));
    return;
  }
  file.reset();
  auto bytes = fs::read_file_prefix(path, diff::k_max_input_bytes + 1);
  if (!bytes || bytes->size() > diff::k_max_input_bytes) {
    builder.add_problem({path, 0, bytes ? "larger than a cudadiag bundle can be" : bytes.error().message});
    return;
  }
  auto report = diff::report_text_from_bundle(*bytes, path);
  if (!report) {
    builder.add_problem({path, 0, report.error().message});
    return;
  }
  parser.add({path + " (bundle)", 0, std::move(*report), modified_time(path)});
}

bool looks_like_report_file(const std::filesystem::path& path) {
  const auto name = path.filename().string();
  return std::any_of(k_report_suffixes.begin(), k_report_suffixes.end(), [&name](std::string_view suffix) {
    return name.size() > suffix.size() &&
           name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  });
}

// What one file of a directory holds, in order: its reports and what could not be read.
struct FileItems {
  std::vector<std::pair<NodeFacts, std::string>> nodes; // the facts and the document's text
  std::vector<InputProblem> problems;
};

// One file of a directory, read, split and parsed whole on the calling thread (files up to
// k_whole_file_bytes; larger ones are streamed through the BatchParser).
FileItems read_whole_file(const std::string& path) {
  FileItems items;
  auto bytes = fs::read_file_prefix(path, diff::k_max_input_bytes + 1);
  if (!bytes) {
    items.problems.push_back({path, 0, "cannot read: " + bytes.error().message});
    return items;
  }
  const double modified = modified_time(path);
  const auto parse = [&items, modified](std::string text, std::string source, std::size_t line) {
    auto fields = read_fleet_fields_in_place(text);
    if (!fields) {
      items.problems.push_back({std::move(source), line, fields.error().message});
    } else {
      items.nodes.emplace_back(node_facts(*fields, source), std::move(text));
      items.nodes.back().first.modified = modified;
    }
  };
  if (bundle::looks_like_gzip(std::string_view(*bytes).substr(0, 2))) {
    if (bytes->size() > diff::k_max_input_bytes) {
      items.problems.push_back({path, 0, "larger than a cudadiag bundle can be"});
      return items;
    }
    auto report = diff::report_text_from_bundle(*bytes, path);
    if (!report) {
      items.problems.push_back({path, 0, report.error().message});
    } else {
      parse(std::move(*report), path + " (bundle)", 0);
    }
    return items;
  }
  StreamSplitter splitter(path);
  std::vector<StreamDocument> documents;
  std::vector<StrayText> stray;
  splitter.add_lines(*bytes, documents, stray);
  splitter.finish(stray);
  for (auto& document : documents) {
    parse(std::move(document.text), std::move(document.source), document.first_line);
  }
  for (auto& text : stray) {
    items.problems.push_back(
        {std::move(text.source), text.line, "not a report: \"" + report::to_valid_utf8(text.text) + "\""});
  }
  return items;
}

// Files of a directory are independent: a window of them is read, split and parsed on as many
// threads as the parser uses, then handed to the builder in name order, so the work is spread
// over the cores and the memory bounded by the window.
class DirectoryReader {
public:
  DirectoryReader(BatchParser& parser, FleetBuilder& builder, unsigned threads)
      : m_parser(parser), m_builder(builder), m_threads(std::max(threads, 1U)) {}

  void add(const std::string& file) {
    const auto size = fs::file_size(file);
    if (!size || *size > k_whole_file_bytes) {
      finish_window();
      read_file(file, m_parser, m_builder); // streamed (or its error reported) in order
      return;
    }
    m_window.push_back(file);
    m_window_bytes += *size;
    if (m_window.size() >= k_window_files || m_window_bytes >= k_window_bytes) {
      finish_window();
    }
  }

  void finish_window() {
    if (m_window.empty()) {
      return;
    }
    m_parser.flush(); // what the stream path holds goes first
    std::vector<FileItems> results(m_window.size());
    std::atomic<std::size_t> next{0};
    std::vector<std::thread> workers;
    const auto count = std::min<std::size_t>(m_threads, m_window.size());
    for (std::size_t t = 0; t < count; ++t) {
      workers.emplace_back([&] {
        for (auto i = next++; i < m_window.size(); i = next++) {
          results[i] = read_whole_file(m_window[i]);
        }
      });
    }
    for (auto& worker : workers) {
      worker.join();
    }
    for (auto& items : results) {
      for (auto& [facts, text] : items.nodes) {
        m_builder.add(std::move(facts), text);
      }
      for (auto& problem : items.problems) {
        m_builder.add_problem(std::move(problem));
      }
    }
    m_window.clear();
    m_window_bytes = 0;
  }

private:
  static constexpr std::uint64_t k_whole_file_bytes = std::uint64_t{64} << 20U;
  static constexpr std::size_t k_window_files = 1024;
  static constexpr std::uint64_t k_window_bytes = std::uint64_t{256} << 20U;

  BatchParser& m_parser;
  FleetBuilder& m_builder;
  unsigned m_threads;
  std::vector<std::string> m_window;
  std::uint64_t m_window_bytes = 0;
};

Expected<void> read_directory(const std::string& path, BatchParser& parser, FleetBuilder& builder,
                              unsigned threads) {
  std::vector<std::string> files;
  std::error_code error;
  std::filesystem::recursive_directory_iterator it(
      path, std::filesystem::directory_options::skip_permission_denied, error);
  if (error) {
    return Error{"cannot read the directory " + path + ": " + error.message()};
  }
  for (const std::filesystem::recursive_directory_iterator end; it != end; it.increment(error)) {
    if (error) {
      builder.add_problem({path, 0, "stopped listing the directory: " + error.message()});
      break;
    }
    if (it->is_regular_file(error) && looks_like_report_file(it->path())) {
      files.push_back(it->path().string());
    }
  }
  std::sort(files.begin(), files.end());
  DirectoryReader reader(parser, builder, threads);
  for (const auto& file : files) {
    reader.add(file);
  }
  reader.finish_window();
  return {};
}

} // namespace

Expected<void> read_inputs(const std::vector<std::string>& inputs, std::FILE* standard_input,
                           FleetBuilder& builder, const InputOptions& options) {
  BatchParser parser(builder, options);
  bool stdin_read = false;
  for (const auto& input : inputs) {
    if (input == "-") {
      if (stdin_read) {
        return Error{"'-' (standard input) is given more than once"};
      }
      stdin_read = true;
      read_stream(standard_input, "stdin", {}, parser, builder);
    } else if (fs::is_directory(input)) {
      CUDADIAG_TRY(read_directory(input, parser, builder, parser.threads()));
    } else if (fs::exists(input)) {
      read_file(input, parser, builder);
    } else {
      return Error{"no such file or directory: " + input};
    }
  }
  parser.flush();
  return {};
}

} // namespace cudadiag::fleet
