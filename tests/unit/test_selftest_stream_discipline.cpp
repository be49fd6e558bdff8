// The self-test's stream discipline (selftest/stream_discipline.hpp), checked over the sources: every
// call of a legacy-stream entry point (DriverEntryPoints::legacy_stream_*, the CUDA runtime's
// synchronous cudaMemcpy/cudaMemset) in the self-test, the verification probes, the worker and the
// CUB module is a row of the allow-list, every row still has its uses, and no launch, event or async
// copy is handed a null stream.

#include "selftest/stream_discipline.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace stdfs = std::filesystem;

// The sources that use the driver or the runtime on a GPU.
std::vector<stdfs::path> stream_discipline_sources() {
  const stdfs::path root = CUDADIAG_SOURCE_DIR;
  std::vector<stdfs::path> files;
  for (const char* dir : {"src/selftest", "src/verify", "src/worker", "kernels"}) {
    for (const auto& entry : stdfs::directory_iterator(root / dir)) {
      const auto ext = entry.path().extension();
      if (entry.is_regular_file() && (ext == ".cpp" || ext == ".hpp" || ext == ".cu" || ext == ".in")) {
        files.push_back(entry.path());
      }
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string stream_discipline_read(const stdfs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// `text` without // and /* */ comments (string literals kept), so that a comment naming a call is no use.
std::string stream_discipline_code(const std::string& text) {
  std::string out;
  bool in_string = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out += c;
      if (c == '\\' && i + 1 < text.size()) {
        out += text[++i];
      } else if (c == '"') {
        in_string = false;
      }
    } else if (c == '"') {
      in_string = true;
      out += c;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n') {
        ++i;
      }
      out += '\n';
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      i = text.find("*/", i + 2);
      if (i == std::string::npos) {
        break;
      }
      ++i;
    } else {
      out += c;
    }
  }
  return out;
}

// The top-level arguments of the call whose '(' is at `open`.
std::vector<std::string> stream_discipline_arguments(const std::string& code, std::size_t open) {
  std::vector<std::string> args(1);
  int depth = 0;
  for (std::size_t i = open; i < code.size(); ++i) {
    const char c = code[i];
    if (c == '(' || c == '{' || c == '[') {
      if (depth++ > 0) {
        args.back() += c;
      }
    } else if (c == ')' || c == '}' || c == ']') {
      if (--depth == 0) {
        break;
      }
      args.back() += c;
    } else if (c == ',' && depth == 1) {
      args.emplace_back();
    } else if (depth > 0) {
      args.back() += c;
    }
  }
  for (auto& arg : args) {
    arg.erase(0, arg.find_first_not_of(" \n\t"));
    arg.erase(arg.find_last_not_of(" \n\t") + 1);
  }
  return args;
}

bool stream_discipline_is_null(const std::string& arg) {
  return arg == "nullptr" || arg == "0" || arg == "NULL" || arg == "cudaStreamLegacy" ||
         arg == "CU_STREAM_LEGACY";
}

struct StreamDisciplineScan {
  std::map<std::pair<std::string, std::string>, int> legacy_uses; // (file, call) -> call sites
  std::vector<std::string> null_streams;                          // "file: call(...)"
};

StreamDisciplineScan stream_discipline_scan(const stdfs::path& root, const std::vector<stdfs::path>& files) {
  StreamDisciplineScan scan;
  // A legacy-stream entry point called by name; the runtime's synchronous copies and fills.
  const std::regex legacy(R"(\b(legacy_stream_\w+|cudaMemcpy|cudaMemset|cudaMemcpy2D)\s*\()");
  // Calls whose stream argument is at a known place: (name, index of the stream argument).
  const std::vector<std::pair<std::string, std::size_t>> stream_calls{{"launch", 3},
                                                                      {"launch_kernel", 8},
                                                                      {"event_record", 1},
                                                                      {"memcpy_htod_async", 3},
                                                                      {"memcpy_dtoh_async", 3},
                                                                      {"memcpy_dtod_async", 3},
                                                                      {"memset_d32_async", 3},
                                                                      {"cudaMemcpyAsync", 4},
                                                                      {"cudaMemsetAsync", 3},
                                                                      {"cudaEventRecord", 1},
                                                                      {"start", 0},
                                                                      {"stop", 0}};
  for (const auto& file : files) {
    const auto code = stream_discipline_code(stream_discipline_read(file));
    const auto relative = stdfs::relative(file, root).generic_string();
    for (auto it = std::sregex_iterator(code.begin(), code.end(), legacy); it != std::sregex_iterator();
         ++it) {
      ++scan.legacy_uses[{relative, (*it)[1].str()}];
    }
    for (const auto& [name, index] : stream_calls) {
      const std::regex call("[.>]" + name + R"(\s*\()");
      for (auto it = std::sregex_iterator(code.begin(), code.end(), call); it != std::sregex_iterator();
           ++it) {
        const auto open = static_cast<std::size_t>(it->position() + it->length() - 1);
        const auto args = stream_discipline_arguments(code, open);
        if (index < args.size() && stream_discipline_is_null(args[index])) {
          scan.null_streams.push_back(relative + ": " + name + "(... " + args[index] + " ...)");
        }
      }
    }
    // A <<<grid, block>>> launch without a stream is a launch on the legacy default stream.
    const std::regex chevrons(R"(<<<([^>]*)>>>)");
    for (auto it = std::sregex_iterator(code.begin(), code.end(), chevrons); it != std::sregex_iterator();
         ++it) {
      const auto inside = (*it)[1].str();
      if (std::count(inside.begin(), inside.end(), ',') < 3) {
        scan.null_streams.push_back(relative + ": <<<" + inside + ">>> (no stream)");
      }
    }
  }
  return scan;
}

} // namespace

TEST_CASE(
    "stream discipline: every legacy-stream call site is in the allow-list, and no null stream is used") {
  const stdfs::path root = CUDADIAG_SOURCE_DIR;
  const auto scan = stream_discipline_scan(root, stream_discipline_sources());
  std::map<std::pair<std::string, std::string>, int> allowed;
  for (const auto& row : cudadiag::selftest::k_legacy_stream_uses) {
    CHECK_FALSE(row.why.empty());
    allowed[{std::string(row.file), std::string(row.call)}] += row.count;
  }
  for (const auto& [where, count] : scan.legacy_uses) {
    INFO(where.first << ": " << where.second << " (" << count << " call sites)");
    const auto row = allowed.find(where);
    CHECK_MESSAGE(row != allowed.end(),
                  "a legacy-stream call that selftest/stream_discipline.hpp does not list");
    if (row != allowed.end()) {
      CHECK_MESSAGE(row->second == count, "the allow-list's count differs from the call sites");
    }
  }
  for (const auto& [where, count] : allowed) {
    INFO(where.first << ": " << where.second);
    CHECK_MESSAGE(scan.legacy_uses.count(where) == 1, "an allow-list row without its call (remove the row)");
  }
  for (const auto& site : scan.null_streams) {
    FAIL_CHECK("a null (legacy default) stream handed to a stream call: " << site);
  }
}

TEST_CASE("stream discipline: the scan finds what it must refuse") {
  // The scanner itself, on a synthetic source: a legacy call outside the list, a null-stream launch
  // and event, a chevron launch without a stream; comments do not count.
  const cudadiag::testing::TempTree tree;
  const auto bad =
      tree.write("src/bad.cpp", "// api.legacy_stream_memset_d32(x, 0, n) in a comment\n"
                                "void f() {\n"
                                "  gpu.check(api.legacy_stream_memset_d32(p, 0, n), \"cuMemsetD32\");\n"
                                "  gpu.launch(kernel, 1, 1, nullptr, {&p});\n"
                                "  timer.start(stream.get());\n"
                                "  api.event_record(event, nullptr);\n"
                                "  api.memcpy_dtoh_async(h, d, n, s.get());\n"
                                "  kernel<<<blocks, threads>>>(p);\n"
                                "  kernel<<<blocks, threads, 0, stream>>>(p);\n"
                                "}\n");
  const auto scan = stream_discipline_scan(tree.root(), {stdfs::path(bad)});
  REQUIRE(scan.legacy_uses.size() == 1);
  CHECK(scan.legacy_uses.begin()->first.second == "legacy_stream_memset_d32");
  CHECK(scan.legacy_uses.begin()->second == 1);
  REQUIRE(scan.null_streams.size() == 3);
  CHECK(scan.null_streams[0].find("launch(") != std::string::npos);
  CHECK(scan.null_streams[1].find("event_record(") != std::string::npos);
  CHECK(scan.null_streams[2].find("<<<blocks, threads>>>") != std::string::npos);
}
