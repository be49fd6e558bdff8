#include "python/distributions.hpp"

#include "core/filesystem.hpp"
#include "core/text.hpp"
#include "python/pep508.hpp"

#include <algorithm>
#include <functional>
#include <set>

namespace cudadiag::python {

namespace {

constexpr std::size_t k_max_metadata_bytes = std::size_t{4} << 20U;

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
         c == '.';
}

// The headers of a METADATA file (RFC 822 style; the body after the first empty line is the
// description and is not read).
std::optional<Distribution> read_metadata(const std::string& dist_info) {
  const auto text = fs::read_file_prefix(fs::join(dist_info, "METADATA"), k_max_metadata_bytes + 1);
  if (!text || text->size() > k_max_metadata_bytes) {
    return std::nullopt;
  }
  Distribution out;
  out.dist_info = dist_info;
  std::string_view rest(*text);
  while (!rest.empty()) {
    const auto end = rest.find('\n');
    const auto line = rest.substr(0, end);
    rest = end == std::string_view::npos ? std::string_view{} : rest.substr(end + 1);
    if (trim(line).empty()) {
      break; // the description follows
    }
    const auto colon = line.find(':');
    if (colon == std::string_view::npos || line.front() == ' ' || line.front() == '\t') {
      continue; // a continuation line (descriptions, long license texts)
    }
    const auto key = line.substr(0, colon);
    const auto value = std::string(trim(line.substr(colon + 1)));
    if (key == "Name") {
      out.name = value;
    } else if (key == "Version") {
      out.version = value;
    } else if (key == "Requires-Dist") {
      out.requires_dist.push_back(value);
    }
  }
  if (out.name.empty() || out.version.empty()) {
    return std::nullopt;
  }
  out.canonical_name = canonical_name(out.name);
  return out;
}

} // namespace

std::vector<Distribution>
installed_distributions(const std::vector<std::string>& site_dirs,
                        const std::function<bool(std::string_view)>& read_requirements) {
  std::vector<Distribution> out;
  std::set<std::string> seen;
  for (const auto& site : site_dirs) {
    auto entries = fs::list_directory(site); // sorted: the order within one directory is stable
    if (!entries) {
      continue;
    }
    for (const auto& entry : *entries) {
      if (!entry.ends_with(".dist-info")) {
        continue;
      }
      // "<name>-<version>.dist-info", the name with '-' written as '_' (so the first '-' splits).
      const std::string_view stem(entry.data(), entry.size() - std::string_view(".dist-info").size());
      const auto dash = stem.find('-');
      std::optional<Distribution> distribution;
      if (dash != std::string_view::npos && dash > 0 && dash + 1 < stem.size() && read_requirements &&
          !read_requirements(canonical_name(stem.substr(0, dash)))) {
        distribution = Distribution{std::string(stem.substr(0, dash)),
                                    canonical_name(stem.substr(0, dash)),
                                    std::string(stem.substr(dash + 1)),
                                    fs::join(site, entry),
                                    {}};
      } else {
        distribution = read_metadata(fs::join(site, entry));
      }
      if (distribution && seen.insert(distribution->canonical_name).second) {
        out.push_back(std::move(*distribution));
      }
    }
  }
  return out;
}

std::optional<Requirement> parse_requirement(std::string_view text) {
  Requirement out;
  const auto semicolon = text.find(';');
  if (semicolon != std::string_view::npos) {
    out.marker = std::string(trim(text.substr(semicolon + 1)));
    text = text.substr(0, semicolon);
  }
  text = trim(text);
  std::size_t at = 0;
  while (at < text.size() && is_name_char(text[at])) {
    ++at;
  }
  if (at == 0) {
    return std::nullopt;
  }
  out.name = std::string(text.substr(0, at));
  auto rest = trim(text.substr(at));
  if (!rest.empty() && rest.front() == '[') {
    const auto close = rest.find(']');
    if (close == std::string_view::npos) {
      return std::nullopt;
    }
    auto extras = rest.substr(1, close - 1);
    while (!extras.empty()) {
      const auto comma = extras.find(',');
      if (const auto name = trim(extras.substr(0, comma)); !name.empty()) {
        out.extras.emplace_back(name);
      }
      extras = comma == std::string_view::npos ? std::string_view{} : extras.substr(comma + 1);
    }
    rest = trim(rest.substr(close + 1));
  }
  if (!rest.empty() && rest.front() == '@') {
    return std::nullopt; // a direct URL reference
  }
  if (!rest.empty() && rest.front() == '(' && rest.back() == ')') {
    rest = trim(rest.substr(1, rest.size() - 2));
  }
  out.specifier = std::string(rest);
  return out;
}

} // namespace cudadiag::python
