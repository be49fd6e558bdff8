#include "findings/findings_reference.hpp"

namespace cudadiag::findings {
namespace {

constexpr std::string_view k_heading = "## `";

// Markdown inline marks dropped: **bold**, `code`; links [text](url) become "text (url)".
std::string plain(std::string_view line) {
  std::string out;
  for (std::size_t i = 0; i < line.size(); ++i) {
    if (line.substr(i, 2) == "**") {
      ++i;
      continue;
    }
    if (line[i] == '`') {
      continue;
    }
    if (line[i] == ']' && i + 1 < line.size() && line[i + 1] == '(') {
      const auto close = line.find(')', i + 2);
      if (close != std::string_view::npos) {
        out += " (" + std::string(line.substr(i + 2, close - i - 2)) + ")";
        i = close;
        continue;
      }
    }
    if (line[i] == '[') {
      continue;
    }
    out += line[i];
  }
  return out;
}

} // namespace

std::vector<std::string> documented_ids() {
  std::vector<std::string> ids;
  const auto page = reference_markdown();
  for (auto at = page.find(k_heading); at != std::string_view::npos; at = page.find(k_heading, at + 1)) {
    if (at != 0 && page[at - 1] != '\n') {
      continue;
    }
    const auto start = at + k_heading.size();
    const auto end = page.find('`', start);
    if (end != std::string_view::npos) {
      ids.emplace_back(page.substr(start, end - start));
    }
  }
  return ids;
}

std::optional<std::string> reference_text(std::string_view id) {
  const auto page = reference_markdown();
  const auto heading = "\n" + std::string(k_heading) + std::string(id) + "`";
  auto at = page.find(heading);
  if (at == std::string_view::npos) {
    return std::nullopt;
  }
  at = page.find('\n', at + 1);
  auto end = page.find("\n#", at == std::string_view::npos ? page.size() : at);
  if (at == std::string_view::npos) {
    return std::string(id) + "\n";
  }
  const auto body = page.substr(at + 1, (end == std::string_view::npos ? page.size() : end) - at - 1);
  std::string out = std::string(id) + "\n";
  std::size_t start = 0;
  while (start < body.size()) {
    const auto stop = std::min(body.find('\n', start), body.size());
    out += plain(body.substr(start, stop - start)) + "\n";
    start = stop + 1;
  }
  while (out.size() > 1 && out.ends_with("\n\n")) {
    out.pop_back();
  }
  return out;
}

} // namespace cudadiag::findings
