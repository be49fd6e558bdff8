#pragma once
// What the terminal renderings share: ANSI colours applied only when the caller's TextStyle says
// so (TTY and NO_COLOR are decided in the CLI), and column padding.

#include "findings/findings.hpp"

#include <string>
#include <string_view>

namespace cudadiag::report {

struct TextStyle {
  bool color = false;
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
// The colour of a severity label.
std::string_view severity_color(findings::Severity severity);

} // namespace cudadiag::report
