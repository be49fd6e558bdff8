// Fitting terminal text into a width: display widths, shortened paths, wrapping, tables.
#include "report/terminal_style.hpp"
#include "report/text_layout.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using cudadiag::report::display_width;
using cudadiag::report::ellipsize_middle;
using cudadiag::report::fit_lines;
using cudadiag::report::render_table;
using cudadiag::report::shorten_path_start;
using cudadiag::report::TextTable;
using cudadiag::report::wrap;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = text.find('\n', start);
    out.push_back(text.substr(start, end - start));
    start = end == std::string::npos ? text.size() : end + 1;
  }
  return out;
}

void check_within(const std::string& text, std::size_t width) {
  for (const auto& line : lines_of(text)) {
    CAPTURE(line);
    CHECK(display_width(line) <= width);
  }
}

} // namespace

TEST_CASE("text layout: display width skips colour codes and counts wide characters twice") {
  CHECK(display_width("abc") == 3);
  CHECK(display_width("\033[31mred\033[0m") == 3);
  CHECK(display_width("—…") == 2);
  CHECK(display_width("日本") == 4);
  CHECK(display_width("e\xcc\x81") == 1); // e + combining acute
  CHECK(display_width("\xff") == 1);      // not UTF-8: one column, as escape_controls shows it
}

TEST_CASE("text layout: a path is shortened in the middle, keeping whole components at the end") {
  const std::string path = "/usr/local/cuda-13.0/targets/x86_64-linux/lib/libnvrtc.so.13";
  CHECK(ellipsize_middle(path, 80) == path);
  const auto short_path = ellipsize_middle(path, 34);
  CHECK(display_width(short_path) <= 34);
  CHECK(short_path == "/usr/local/…/lib/libnvrtc.so.13");
  // A file name longer than the room: still within it, and still ends like the file name.
  const auto tiny = ellipsize_middle("/a/libnvidia-some-very-long-name.so.1", 12);
  CHECK(display_width(tiny) <= 12);
  CHECK(tiny.ends_with(".so.1"));
  CHECK(tiny.find("…") != std::string::npos);
}

TEST_CASE("text layout: a path is shortened only at its start, keeping whole components at its end") {
  const std::string path = "/opt/torch/.venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcudart.so.13";
  CHECK(shorten_path_start(path, 100) == path);
  const auto shorter = shorten_path_start(path, 50);
  CHECK(display_width(shorter) <= 50);
  CHECK(shorter == "…/site-packages/nvidia/cu13/lib/libcudart.so.13");
  // A file name longer than the room: its last columns, still within it.
  const auto tiny = shorten_path_start("/a/libnvidia-some-very-long-name.so.1", 12);
  CHECK(display_width(tiny) <= 12);
  CHECK(tiny.starts_with("…"));
  CHECK(tiny.ends_with(".so.1"));
}

TEST_CASE("text layout: wrap keeps words and paths whole, hangs the indent") {
  const std::string path = "/a/very/long/directory/that/cannot/fit/on/one/line/of/forty/columns/lib";
  const auto text = wrap("remedy text that goes on for a while and then names " + path + " and more", 40,
                         "    remedy: ", "            ");
  const auto lines = lines_of(text);
  REQUIRE(lines.size() >= 3);
  CHECK(lines[0].rfind("    remedy: remedy", 0) == 0);
  bool whole = false;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    CHECK(lines[i].rfind("            ", 0) == 0);
    whole = whole || lines[i] == "            " + path; // the path alone on its line, whole
    if (lines[i].find('/') == std::string::npos) {
      CHECK(display_width(lines[i]) <= 40); // only the path's own line may be wider
    }
  }
  CHECK(whole);
  // A path alone: one line, never broken at a slash.
  CHECK(wrap(path, 30, "  ", "  ") == "  " + path + "\n");
  // Other long words are still broken to fit.
  check_within(wrap(std::string(100, 'x'), 30, "  ", "  "), 30);
  CHECK(wrap("two  spaces kept", 40, "", "") == "two  spaces kept\n");
}

TEST_CASE("text layout: fit_lines leaves fitting lines alone and wraps the others") {
  CHECK(fit_lines("short\n  also short\n", 40) == "short\n  also short\n");
  const auto fitted = fit_lines("  " + std::string(100, 'x') + "\n", 40);
  check_within(fitted, 40);
  CHECK(lines_of(fitted).size() == 3);
}

TEST_CASE("text layout: a table is sized to its content and its flexible column gives way") {
  TextTable table;
  table.header = {"NAME", "VERSION", "PATH"};
  table.flexible = 2;
  table.rows = {{"nvrtc", "13.0.88", "/usr/local/cuda-13.0/targets/x86_64-linux/lib/libnvrtc.so.13"},
                {"cudart", "-", "not found"}};
  const auto wide = render_table(table, 200, false);
  CHECK(wide == "  NAME    VERSION  PATH\n"
                "  nvrtc   13.0.88  /usr/local/cuda-13.0/targets/x86_64-linux/lib/libnvrtc.so.13\n"
                "  cudart  -        not found\n");
  const auto narrow = render_table(table, 50, false);
  check_within(narrow, 50);
  CHECK(narrow.find("  …/") != std::string::npos); // shortened at its start only
  CHECK(narrow.find("/lib/libnvrtc.so.13\n") != std::string::npos);
  CHECK(narrow.find("/usr/") == std::string::npos);
  table.keep_whole = true;
  const auto whole = render_table(table, 50, false);
  CHECK(whole.find("…") == std::string::npos);
  // The path on the line under its row, whole (that line alone wider than the table's width).
  CHECK(whole.find("\n      /usr/local/cuda-13.0/targets/x86_64-linux/lib/libnvrtc.so.13\n") !=
        std::string::npos);
  table.notes = {"a note under the first row", ""};
  CHECK(render_table(table, 200, false).find("\n      a note under the first row\n") != std::string::npos);
}

TEST_CASE("text layout: a flexible cell that goes under its row is shortened at its start, on one line") {
  TextTable table;
  table.header = {"NAME", "VERSION", "PATH"};
  table.flexible = 2;
  table.rows = {{"a-name-wide-enough-to-crowd-out-the-path", "13.0.88",
                 "/usr/local/cuda-13.0/targets/x86_64-linux/lib/libnvrtc.so.13"}};
  const auto narrow = render_table(table, 60, false);
  check_within(narrow, 60);
  const auto lines = lines_of(narrow);
  REQUIRE(lines.size() == 3); // the header, the row, the path under it
  CHECK(lines[2].rfind("      …/", 0) == 0);
  CHECK(lines[2].ends_with("/lib/libnvrtc.so.13"));
}

TEST_CASE("text layout: colour codes in cells do not upset the alignment") {
  TextTable table;
  table.rows = {{"a", cudadiag::report::paint({true}, cudadiag::report::k_green, "ok"), "x"},
                {"bb", "failed", "y"}};
  const auto text = render_table(table, 80, true);
  const auto lines = lines_of(text);
  REQUIRE(lines.size() == 2);
  CHECK(display_width(lines[0]) == display_width(lines[1]));
}

TEST_CASE("text layout: a first cell over first_column_cap stands above its row, the others keep "
          "their widths") {
  TextTable table;
  table.header = {"NAME", "KIND", "PATH"};
  table.rows = {{"cuda", "lib", "/a/libcuda.so.1"},
                {"cudnn_engines_runtime_compiled", "lib", "/b/libcudnn_engines_runtime_compiled.so.9"}};
  table.first_column_cap = 8;
  const auto lines = lines_of(render_table(table, 120, false));
  REQUIRE(lines.size() == 4);
  CHECK(lines[0] == "  NAME  KIND  PATH");
  CHECK(lines[1] == "  cuda  lib   /a/libcuda.so.1");
  CHECK(lines[2] == "  cudnn_engines_runtime_compiled");
  CHECK(lines[3] == "        lib   /b/libcudnn_engines_runtime_compiled.so.9");
  table.first_column_cap = 0; // no cap: one line a row, the column as wide as its widest cell
  CHECK(lines_of(render_table(table, 120, false))[1] ==
        "  cuda                            lib   /a/libcuda.so.1");
}
