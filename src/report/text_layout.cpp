#include "report/text_layout.hpp"

#include "core/utf8.hpp"
#include "report/terminal_style.hpp"

#include <algorithm>
#include <array>
#include <utility>

namespace cudadiag::report {
namespace {

// One unit of text as a terminal draws it: a character, or a whole escape sequence (width 0).
struct Unit {
  std::size_t at = 0;
  std::size_t length = 0;
  std::size_t width = 0;
};

struct Range {
  char32_t first;
  char32_t last;
};

// East Asian Wide and Fullwidth blocks (Unicode 15, coarse), and the emoji planes terminals draw wide.
constexpr std::array k_wide = {
    Range{0x1100, 0x115f},   Range{0x231a, 0x231b},   Range{0x2329, 0x232a},   Range{0x23e9, 0x23ec},
    Range{0x25fd, 0x25fe},   Range{0x2614, 0x2615},   Range{0x2648, 0x2653},   Range{0x26aa, 0x26ab},
    Range{0x26bd, 0x26be},   Range{0x26c4, 0x26c5},   Range{0x2705, 0x2705},   Range{0x270a, 0x270b},
    Range{0x274c, 0x274c},   Range{0x2753, 0x2755},   Range{0x2795, 0x2797},   Range{0x2b1b, 0x2b1c},
    Range{0x2e80, 0x303e},   Range{0x3041, 0x33ff},   Range{0x3400, 0x4dbf},   Range{0x4e00, 0x9fff},
    Range{0xa000, 0xa4cf},   Range{0xa960, 0xa97f},   Range{0xac00, 0xd7a3},   Range{0xf900, 0xfaff},
    Range{0xfe10, 0xfe19},   Range{0xfe30, 0xfe6f},   Range{0xff00, 0xff60},   Range{0xffe0, 0xffe6},
    Range{0x16fe0, 0x18cff}, Range{0x1b000, 0x1b2ff}, Range{0x1f004, 0x1f004}, Range{0x1f0cf, 0x1f0cf},
    Range{0x1f18e, 0x1f18e}, Range{0x1f191, 0x1f19a}, Range{0x1f200, 0x1f251}, Range{0x1f300, 0x1f64f},
    Range{0x1f680, 0x1f6ff}, Range{0x1f7e0, 0x1f7eb}, Range{0x1f90c, 0x1f9ff}, Range{0x1fa70, 0x1faff},
    Range{0x20000, 0x2fffd}, Range{0x30000, 0x3fffd},
};

// Combining marks, zero-width spaces and joiners, variation selectors: drawn on the previous cell.
constexpr std::array k_zero = {
    Range{0x0300, 0x036f},   Range{0x0483, 0x0489}, Range{0x0591, 0x05bd}, Range{0x0610, 0x061a},
    Range{0x064b, 0x065f},   Range{0x0e31, 0x0e31}, Range{0x0e34, 0x0e3a}, Range{0x1ab0, 0x1aff},
    Range{0x1dc0, 0x1dff},   Range{0x200b, 0x200f}, Range{0x2028, 0x202e}, Range{0x2060, 0x2064},
    Range{0x20d0, 0x20ff},   Range{0xfe00, 0xfe0f}, Range{0xfe20, 0xfe2f}, Range{0xfeff, 0xfeff},
    Range{0xe0100, 0xe01ef},
};

template <std::size_t N> bool in(const std::array<Range, N>& ranges, char32_t code) {
  return std::any_of(ranges.begin(), ranges.end(),
                     [code](const Range& range) { return code >= range.first && code <= range.last; });
}

std::size_t char_width(char32_t code) {
  if (in(k_zero, code)) {
    return 0;
  }
  return in(k_wide, code) ? 2 : 1;
}

// The length of the escape sequence at text[at] (text[at] is ESC): CSI ... final byte, or ESC + one byte.
std::size_t escape_length(std::string_view text, std::size_t at) {
  if (at + 1 < text.size() && text[at + 1] == '[') {
    std::size_t end = at + 2;
    while (end < text.size()) {
      const auto byte = static_cast<unsigned char>(text[end]);
      ++end;
      if (byte >= 0x40U && byte <= 0x7eU) {
        break;
      }
    }
    return end - at;
  }
  return at + 1 < text.size() ? 2 : 1;
}

std::vector<Unit> units(std::string_view text) {
  std::vector<Unit> out;
  out.reserve(text.size());
  std::size_t at = 0;
  while (at < text.size()) {
    const auto byte = static_cast<unsigned char>(text[at]);
    if (byte == 0x1bU) {
      const auto length = escape_length(text, at);
      out.push_back({at, length, 0});
      at += length;
      continue;
    }
    if (byte < 0x80U) {
      out.push_back({at, 1, 1});
      ++at;
      continue;
    }
    char32_t code = 0;
    const auto length = utf8::sequence_at(text, at, code);
    if (length == 0) {
      out.push_back({at, 1, 1});
      ++at;
      continue;
    }
    out.push_back({at, length, char_width(code)});
    at += length;
  }
  return out;
}

std::size_t leading_spaces(std::string_view line) {
  std::size_t count = 0;
  while (count < line.size() && line[count] == ' ') {
    ++count;
  }
  return count;
}

// The longest start of `word` (at most `room` columns) to put on this line, at least one unit
// (so that progress is made). Returns its length in bytes. Never called for a path (wrap keeps those whole).
std::size_t break_point(std::string_view word, std::size_t room) {
  const auto pieces = units(word);
  std::size_t used = 0;
  std::size_t fits_bytes = 0;
  for (const auto& unit : pieces) {
    if (used + unit.width > room) {
      break;
    }
    used += unit.width;
    fits_bytes = unit.at + unit.length;
  }
  if (fits_bytes == 0) {
    return pieces.empty() ? word.size() : pieces.front().length;
  }
  return fits_bytes;
}

// The words of a paragraph, each with the spaces before it (kept between words on one line).
struct Word {
  std::string_view gap;
  std::string_view text;
};
std::vector<Word> split_words(std::string_view paragraph) {
  std::vector<Word> words;
  std::size_t at = 0;
  while (at < paragraph.size()) {
    const auto gap_start = at;
    while (at < paragraph.size() && paragraph[at] == ' ') {
      ++at;
    }
    const auto end = std::min(paragraph.find(' ', at), paragraph.size());
    if (end > at) {
      words.push_back({paragraph.substr(gap_start, at - gap_start), paragraph.substr(at, end - at)});
    }
    at = end;
  }
  return words;
}

} // namespace

std::size_t display_width(std::string_view text) {
  std::size_t width = 0;
  for (const auto& unit : units(text)) {
    width += unit.width;
  }
  return width;
}

std::string ellipsize_middle(std::string_view text, std::size_t width) {
  width = std::max(width, std::size_t{2});
  const auto pieces = units(text);
  std::size_t total = 0;
  for (const auto& unit : pieces) {
    total += unit.width;
  }
  if (total <= width) {
    return std::string(text);
  }
  const std::size_t available = width - 1; // one column for the ellipsis
  const std::size_t head_min = std::min<std::size_t>(8, available / 2);
  // The end: the longest run of whole path components ("/lib/libnvrtc.so.13") that leaves the
  // start a few columns; without one (no '/', or a file name longer than that), half the room.
  std::size_t tail_start = text.size();
  for (auto slash = text.rfind('/'); slash != std::string_view::npos && slash > 0;
       slash = text.rfind('/', slash - 1)) {
    if (display_width(text.substr(slash)) > available - head_min) {
      break;
    }
    tail_start = slash;
  }
  if (tail_start == text.size()) {
    std::size_t used = 0;
    for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) {
      if (used + it->width > available - available / 2) {
        break;
      }
      used += it->width;
      tail_start = it->at;
    }
  }
  const auto tail = text.substr(tail_start);
  const std::size_t head_room = available - display_width(tail);
  // The start: as much as fits, cut after a '/' when that keeps at least half of the room.
  std::size_t head_bytes = 0;
  std::size_t used = 0;
  std::size_t slash_bytes = 0;
  std::size_t slash_used = 0;
  for (const auto& unit : pieces) {
    if (unit.at >= tail_start || used + unit.width > head_room) {
      break;
    }
    used += unit.width;
    head_bytes = unit.at + unit.length;
    if (text[unit.at] == '/') {
      slash_bytes = head_bytes;
      slash_used = used;
    }
  }
  if (slash_bytes != 0 && slash_used * 2 >= head_room) {
    head_bytes = slash_bytes;
  }
  return std::string(text.substr(0, head_bytes)) + "…" + std::string(tail);
}

std::string shorten_path_start(std::string_view path, std::size_t width) {
  width = std::max(width, std::size_t{2});
  if (display_width(path) <= width) {
    return std::string(path);
  }
  const std::size_t available = width - 1; // one column for the ellipsis
  // The longest end made of whole components ("/lib/python3.12/site-packages") that fits.
  std::size_t tail_start = path.size();
  for (auto slash = path.rfind('/'); slash != std::string_view::npos;
       slash = slash == 0 ? std::string_view::npos : path.rfind('/', slash - 1)) {
    if (display_width(path.substr(slash)) > available) {
      break;
    }
    tail_start = slash;
  }
  if (tail_start == path.size()) { // not even the file name fits: its last columns
    const auto pieces = units(path);
    std::size_t used = 0;
    for (auto it = pieces.rbegin(); it != pieces.rend() && used + it->width <= available; ++it) {
      used += it->width;
      tail_start = it->at;
    }
  }
  return "…" + std::string(path.substr(tail_start));
}

bool is_path_word(std::string_view word) {
  return word.find('/') != std::string_view::npos;
}

std::string wrap(std::string_view text, std::size_t width, std::string_view first_prefix,
                 std::string_view continuation_prefix) {
  width = std::max(width, k_min_width);
  std::string first(first_prefix);
  std::string continuation(continuation_prefix);
  // A prefix must leave room for text: a hanging indent deeper than half the width gives way.
  if (display_width(continuation) > width / 2) {
    continuation = "  ";
  }
  if (display_width(first) > width / 2) {
    first = continuation;
  }
  std::string out;
  std::string line = first;
  std::size_t line_width = display_width(line);
  bool has_text = false;
  const auto flush = [&] {
    while (!line.empty() && line.back() == ' ') {
      line.pop_back();
    }
    out += line + "\n";
    line = continuation;
    line_width = display_width(continuation);
    has_text = false;
  };
  std::size_t start = 0;
  bool first_paragraph = true;
  while (start <= text.size()) {
    const auto end = std::min(text.find('\n', start), text.size());
    if (!first_paragraph) {
      flush();
    }
    first_paragraph = false;
    for (const auto& [gap, whole] : split_words(text.substr(start, end - start))) {
      auto word = whole;
      auto word_width = display_width(word);
      const auto gap_width = std::max<std::size_t>(gap.size(), 1);
      if (has_text && line_width + gap_width + word_width <= width) {
        line.append(gap_width, ' ');
        line += word;
        line_width += gap_width + word_width;
        continue;
      }
      if (has_text) {
        flush();
      }
      if (is_path_word(word)) { // whole, on a line of its own when it does not fit: it can be copied
        line += word;
        line_width += word_width;
        has_text = true;
        continue;
      }
      while (line_width + word_width > width) {
        const auto cut = break_point(word, width - line_width);
        line += word.substr(0, cut);
        has_text = true;
        word.remove_prefix(cut);
        flush();
        word_width = display_width(word);
      }
      if (!word.empty()) {
        line += word;
        line_width += word_width;
        has_text = true;
      }
    }
    if (end >= text.size()) {
      break;
    }
    start = end + 1;
  }
  flush();
  return out;
}

std::string fit_lines(std::string_view text, std::size_t width) {
  width = std::max(width, k_min_width);
  std::string out;
  std::size_t start = 0;
  while (start < text.size()) {
    const auto end = std::min(text.find('\n', start), text.size());
    const auto line = text.substr(start, end - start);
    if (display_width(line) <= width) {
      out += line;
      out += '\n';
    } else {
      const auto indent = std::min(leading_spaces(line), width / 2);
      out += wrap(line.substr(leading_spaces(line)), width, std::string(indent, ' '),
                  std::string(indent + 2, ' '));
    }
    start = end + 1;
  }
  return out;
}

std::string render_table(const TextTable& table, std::size_t width, bool color) {
  width = std::max(width, k_min_width);
  std::size_t columns = table.header.size();
  for (const auto& row : table.rows) {
    columns = std::max(columns, row.size());
  }
  if (columns == 0) {
    return "";
  }
  std::vector<std::size_t> widths(columns, 0);
  const auto capped = [&table](std::size_t column, const std::string& cell) {
    return column == 0 && table.first_column_cap > 0 && display_width(cell) > table.first_column_cap;
  };
  const auto measure = [&widths, &capped](const std::vector<std::string>& row) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      if (!capped(i, row[i])) {
        widths[i] = std::max(widths[i], display_width(row[i]));
      }
    }
  };
  measure(table.header);
  for (const auto& row : table.rows) {
    measure(row);
  }
  constexpr std::size_t k_gap = 2;
  const auto flexible = table.flexible >= 0 && static_cast<std::size_t>(table.flexible) < columns
                            ? static_cast<std::size_t>(table.flexible)
                            : columns;
  std::size_t total = table.indent;
  for (std::size_t i = 0; i < columns; ++i) {
    total += widths[i] + (i + 1 < columns ? k_gap : 0);
  }
  bool flexible_below = false; // the flexible cell on a line of its own
  if (total > width && flexible < columns) {
    const auto fixed = total - widths[flexible];
    if (!table.keep_whole && fixed < width &&
        width - fixed >= std::min(table.min_flexible, widths[flexible])) {
      widths[flexible] = width - fixed;
    } else {
      flexible_below = true;
    }
  }
  const std::string indent(table.indent, ' ');
  const auto render_row = [&](const std::vector<std::string>& row, std::string_view flexible_code,
                              bool header) {
    std::string line = indent;
    std::string above; // a first cell over first_column_cap, on a line of its own
    std::string below;
    // The last column shown gets no padding (no trailing spaces).
    std::size_t last = columns;
    while (last > 0 && (last - 1 >= row.size() || (flexible_below && last - 1 == flexible))) {
      --last;
    }
    for (std::size_t i = 0; i < columns; ++i) {
      const std::string empty;
      const bool alone = !header && i < row.size() && capped(i, row[i]);
      if (alone) {
        above = indent + row[i] + "\n";
      }
      const auto& cell = i < row.size() && !alone ? row[i] : empty;
      if (i == flexible) {
        if (flexible_below) {
          if (!cell.empty() && !header) { // the header names only the columns on the row's line
            const std::string deeper = indent + "    ";
            below =
                deeper + (table.keep_whole ? cell : shorten_path_start(cell, width - deeper.size())) + "\n";
          }
          continue;
        }
        std::string shown = header ? cell : shorten_path_start(cell, widths[i]);
        if (!flexible_code.empty()) {
          shown = paint(TextStyle{color}, flexible_code, shown);
        }
        line += shown;
        if (i + 1 < last) {
          line.append(widths[i] - display_width(header ? cell : shorten_path_start(cell, widths[i])) + k_gap,
                      ' ');
        }
        continue;
      }
      if (i >= last) {
        continue;
      }
      line += cell;
      if (i + 1 < last) {
        line.append(widths[i] - display_width(cell) + k_gap, ' ');
      }
    }
    while (!line.empty() && line.back() == ' ') {
      line.pop_back();
    }
    return above + line + "\n" + below;
  };
  std::string out;
  if (!table.header.empty()) {
    out += render_row(table.header, "", true);
  }
  for (std::size_t r = 0; r < table.rows.size(); ++r) {
    const std::string_view code =
        r < table.flexible_color.size() ? std::string_view(table.flexible_color[r]) : "";
    out += render_row(table.rows[r], code, false);
    if (r < table.notes.size() && !table.notes[r].empty()) {
      for (std::size_t start = 0; start <= table.notes[r].size();) { // each line of the note on its own
        const auto end = std::min(table.notes[r].find('\n', start), table.notes[r].size());
        out += wrap(std::string_view(table.notes[r]).substr(start, end - start), width, indent + "    ",
                    indent + "      ");
        start = end + 1;
      }
    }
  }
  return fit_lines(out, width); // the fixed columns alone may be wider than a very narrow terminal
}

} // namespace cudadiag::report
