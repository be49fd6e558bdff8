#include "report/terminal_style.hpp"

namespace cudadiag::report {

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
