#pragma once
// Fitting terminal text into a width: display widths (colour codes take none, wide characters
// two), paths shortened at their start, word wrapping with a hanging indent, and tables sized to
// their content. Every function here keeps each output line within the width it is given (a width
// below k_min_width counts as k_min_width), whatever the input, except that a path is never broken
// across lines: one that does not fit goes whole on a line of its own (wrap, keep_whole tables).

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::report {

inline constexpr std::size_t k_min_width = 20;
inline constexpr std::size_t k_default_width = 80;

// Columns `text` takes on a terminal: the colour codes of terminal_style.hpp (and any other CSI
// sequence) take none, combining marks none, East Asian wide characters two, everything else one.
// A tab counts as one (renderers emit none). Bytes that are not UTF-8 count one each.
std::size_t display_width(std::string_view text);

// `text` when it fits `width`; else its start and end around "…" in at most `width` columns. For a
// path the end is whole components (the file name and the directories above it that fit) and the
// start is cut after a '/' where that wastes little. Colour-free text only.
std::string ellipsize_middle(std::string_view text, std::size_t width);

// `path` when it fits `width`; else its end, whole components where they fit ("…/lib/libnvrtc.so.13"),
// after "…" in at most `width` columns. Paths are shortened only at their start, and only where the
// whole path is shown elsewhere (--full, JSON). Colour-free text only.
std::string shorten_path_start(std::string_view path, std::size_t width);

// Whether a word of running text is a path (holds a '/'): wrap() never breaks one.
bool is_path_word(std::string_view word);

// `text` broken into lines of at most `width` columns: words are kept whole where they fit; a path
// longer than a line goes whole on a line of its own (that line alone may be wider than `width`,
// so that the path can be copied); any other word longer than a line is broken anywhere. The first line
// starts with `first_prefix`, the others with `continuation_prefix` (a hanging indent). Newlines
// in `text` start a new line with the continuation prefix. Each line ends with '\n'.
std::string wrap(std::string_view text, std::size_t width, std::string_view first_prefix,
                 std::string_view continuation_prefix);

// Every line of `text` (which may hold colour codes) made to fit `width`: a longer line is
// wrapped with a hanging indent two columns deeper than its own leading spaces (a path that does
// not fit stays whole on a line of its own, as in wrap()). The last resort
// for free text from outside (device names, library messages) in a rendered section.
std::string fit_lines(std::string_view text, std::size_t width);

// A table whose columns are as wide as their widest cell (plus a gap of two). One column may be
// `flexible` (paths): when the table is wider than `width`, that column's cells are shortened at
// their start (shorten_path_start) down to `min_flexible`; when even that does not fit, the flexible
// cell goes on a line of its own under the row, indented, shortened at its start to the width (with
// `keep_whole` never shortened: whole, that line alone may be wider). Cells may hold colour codes except in
// the flexible column, which gets colour through `flexible_color` (one code per row or empty).
// A row's note (a detail, a reason) is wrapped on the lines under it, four columns deeper; each of
// its lines ('\n') starts a line of its own there.
struct TextTable {
  std::vector<std::string> header; // empty: no header line
  std::vector<std::vector<std::string>> rows;
  std::vector<std::string> flexible_color; // per row: a colour code for the flexible cell, or ""
  std::vector<std::string> notes;          // per row: free text wrapped under it, indented, or ""
  int flexible = -1;                       // the index of the column that may shrink, or -1
  bool keep_whole = false;                 // never ellipsise: a flexible cell that does not fit goes below
  std::size_t min_flexible = 24;
  // The first column's widest cell that keeps its row on one line (0: no limit): a longer one (a
  // 30-character library name) stands alone on the line above its row, so that one long name does
  // not push every other row's columns apart.
  std::size_t first_column_cap = 0;
  std::size_t indent = 2;
};
std::string render_table(const TextTable& table, std::size_t width, bool color);

} // namespace cudadiag::report
