#pragma once
// What the terminal renderings share: ANSI colours applied only when the caller's TextStyle says
// so (TTY and NO_COLOR are decided in the CLI), and column padding.

#include "findings/findings.hpp"

#include <cstddef>
#include <string>
#include <string_view>

namespace cudadiag::report {

// How a terminal rendering looks: colour on or off, and the width every line must fit (80 when
// the output is not a terminal; the CLI decides, from --width, the terminal or COLUMNS).
struct TextStyle {
  bool color = false;
  std::size_t width = 80;
  bool full = false; // the report's details layer: every component, whole paths (--full, -v)
};

inline constexpr std::string_view k_red = "\033[31m";
inline constexpr std::string_view k_yellow = "\033[33m";
inline constexpr std::string_view k_green = "\033[32m";
inline constexpr std::string_view k_dim = "\033[2m";
inline constexpr std::string_view k_bold = "\033[1m";
inline constexpr std::string_view k_reset = "\033[0m";

// `text` wrapped in `code` ... reset when colour is on; `text` unchanged otherwise.
std::string paint(TextStyle style, std::string_view code, std::string_view text);
// `text` padded with spaces to `width`; a text that fills the column gets one space, so columns
// never run together.
std::string pad(std::string_view text, std::size_t width);
// `text` made safe for a terminal: no string from a library, a file or the environment can move
// the cursor, clear the screen, retitle the window or ring the bell. C0 control characters other
// than newline and tab, DEL and bytes that are not UTF-8 become \xNN; C1 controls (U+0080-U+009F)
// become \u00NN. With style.color the colour codes above (as paint() emits them) are kept; every
// other escape sequence is escaped. Every text and Markdown renderer passes its output through it.
std::string escape_controls(std::string_view text, TextStyle style);
// The colour of a severity label.
std::string_view severity_color(findings::Severity severity);

} // namespace cudadiag::report
