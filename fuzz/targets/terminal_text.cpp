// escape_controls, what every text and Markdown renderer ends with: whatever the input, the output
// holds no control character but newline and tab (and, with colour, only cudadiag's own codes).
// Then the layout every text renderer ends with (fit_lines, wrap, ellipsize_middle): whatever the
// text, no line is wider than the width asked for, but a line holding one whole path.
#include "report/terminal_style.hpp"
#include "report/text_layout.hpp"
#include "targets.hpp"

namespace cudadiag::fuzz {

int terminal_text(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto plain = report::escape_controls(text, report::TextStyle{false});
  for (const char c : plain) {
    const auto byte = static_cast<unsigned char>(c);
    check(byte == '\n' || byte == '\t' || (byte >= 0x20U && byte != 0x7fU),
          "no control character in plain output");
  }
  check(plain.find("\xc2\x9b") == std::string::npos, "no C1 CSI in plain output");
  const auto coloured = report::escape_controls(text, report::TextStyle{true});
  for (std::size_t at = coloured.find('\x1b'); at != std::string::npos; at = coloured.find('\x1b', at + 1)) {
    const auto rest = std::string_view(coloured).substr(at);
    check(rest.starts_with(report::k_red) || rest.starts_with(report::k_yellow) ||
              rest.starts_with(report::k_green) || rest.starts_with(report::k_dim) ||
              rest.starts_with(report::k_bold) || rest.starts_with(report::k_reset),
          "only cudadiag's own colour codes in coloured output");
  }
  const std::size_t width = report::k_min_width + (size == 0 ? 0 : data[0] % 100U);
  // The one line allowed past the width: a whole path alone on it (after its indent), so that it
  // can be copied (text_layout.hpp, wrap).
  const auto whole_path = [](std::string_view line) {
    const auto first = line.find_first_not_of(' ');
    auto word = first == std::string_view::npos ? std::string_view() : line.substr(first);
    if (word.starts_with("remedy: ")) { // wrap()'s first prefix below: the path alone after it
      word.remove_prefix(std::string_view("remedy: ").size());
    }
    return !word.empty() && word.find(' ') == std::string_view::npos && report::is_path_word(word);
  };
  const auto within = [width, &whole_path](std::string_view lines) {
    std::size_t start = 0;
    while (start < lines.size()) {
      const auto end = std::min(lines.find('\n', start), lines.size());
      const auto line = lines.substr(start, end - start);
      if (report::display_width(line) > width && !whole_path(line)) {
        return false;
      }
      start = end + 1;
    }
    return true;
  };
  check(within(report::fit_lines(coloured, width)),
        "fit_lines keeps every line within the width (a whole path aside)");
  check(within(report::wrap(plain, width, "    remedy: ", "            ")),
        "wrap keeps every line within the width (a whole path aside)");
  check(report::display_width(report::ellipsize_middle(plain.substr(0, plain.find('\n')), width)) <= width,
        "ellipsize_middle fits the width");
  return 0;
}

} // namespace cudadiag::fuzz
