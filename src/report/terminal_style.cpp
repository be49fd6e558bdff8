#include "report/terminal_style.hpp"

#include "core/utf8.hpp"

#include <array>

namespace cudadiag::report {
namespace {

void append_hex(std::string& out, std::string_view prefix, unsigned value) {
  constexpr std::string_view k_hex = "0123456789abcdef";
  out += prefix;
  out += k_hex[(value >> 4U) & 0x0fU];
  out += k_hex[value & 0x0fU];
}

// The length of the colour code paint() emits that starts `text`, or 0.
std::size_t own_colour_code(std::string_view text) {
  constexpr std::array k_codes = {k_red, k_yellow, k_green, k_dim, k_bold, k_reset};
  for (const auto code : k_codes) {
    if (text.starts_with(code)) {
      return code.size();
    }
  }
  return 0;
}

} // namespace

std::string escape_controls(std::string_view text, TextStyle style) {
  std::string out;
  out.reserve(text.size());
  std::size_t at = 0;
  while (at < text.size()) {
    const auto byte = static_cast<unsigned char>(text[at]);
    if (byte == 0x1bU && style.color) {
      if (const auto length = own_colour_code(text.substr(at)); length != 0) {
        out += text.substr(at, length);
        at += length;
        continue;
      }
    }
    if (byte == '\n' || byte == '\t' || (byte >= 0x20U && byte < 0x7fU)) {
      out += static_cast<char>(byte);
      ++at;
      continue;
    }
    char32_t code = 0;
    const auto length = byte < 0x80U ? 1 : utf8::sequence_at(text, at, code);
    if (byte < 0x80U || length == 0) {
      append_hex(out, "\\x", byte); // C0 control, DEL, or a byte that is not UTF-8
      ++at;
    } else if (code < 0xa0U) {
      append_hex(out, "\\u00", static_cast<unsigned>(code)); // C1 control (0x9b is CSI)
      at += length;
    } else {
      out += text.substr(at, length);
      at += length;
    }
  }
  return out;
}

std::string paint(TextStyle style, std::string_view code, std::string_view text) {
  if (!style.color) {
    return std::string(text);
  }
  return std::string(code) + std::string(text) + std::string(k_reset);
}

std::string pad(std::string_view text, std::size_t width) {
  std::string out(text);
  out.append(out.size() < width ? width - out.size() : 1, ' ');
  return out;
}

std::string_view severity_color(findings::Severity severity) {
  switch (severity) {
  case findings::Severity::error: return k_red;
  case findings::Severity::warning: return k_yellow;
  case findings::Severity::info: return k_dim;
  }
  return k_reset;
}

} // namespace cudadiag::report
