#include "python/pep440.hpp"

#include "core/text.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <tuple>

namespace cudadiag::python {

namespace {

constexpr std::size_t k_max_digits = 18; // a number that fits uint64_t whatever its digits

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_alnum(char c) {
  return is_digit(c) || (c >= 'a' && c <= 'z');
}
bool is_separator(char c) {
  return c == '-' || c == '_' || c == '.';
}
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// A scanner over the lower-cased text, following packaging's VERSION_PATTERN.
class Scanner {
public:
  explicit Scanner(std::string_view text) : m_text(text) {}

  [[nodiscard]] bool at_end() const { return m_at == m_text.size(); }
  [[nodiscard]] std::size_t position() const { return m_at; }
  void rewind(std::size_t at) { m_at = at; }
  [[nodiscard]] char peek(std::size_t ahead = 0) const {
    return m_at + ahead < m_text.size() ? m_text[m_at + ahead] : '\0';
  }
  bool take(char c) {
    if (peek() == c) {
      ++m_at;
      return true;
    }
    return false;
  }
  bool take(std::string_view word) {
    if (m_text.substr(m_at).starts_with(word)) {
      m_at += word.size();
      return true;
    }
    return false;
  }
  void take_separator() {
    if (is_separator(peek())) {
      ++m_at;
    }
  }
  // Digits as a number; nullopt when there are none (the position is unchanged) or too many.
  std::optional<std::uint64_t> number(bool& too_long) {
    const auto start = m_at;
    while (is_digit(peek())) {
      ++m_at;
    }
    if (m_at == start) {
      return std::nullopt;
    }
    if (m_at - start > k_max_digits) {
      too_long = true;
      return std::nullopt;
    }
    std::uint64_t value = 0;
    std::from_chars(m_text.data() + start, m_text.data() + m_at, value);
    return value;
  }
  [[nodiscard]] std::string_view rest() const { return m_text.substr(m_at); }

private:
  std::string_view m_text;
  std::size_t m_at = 0;
};

// The pre-release letters, longest spelling first, and their normal form.
constexpr std::array<std::pair<std::string_view, std::string_view>, 8> k_pre_letters{{
    {"preview", "rc"},
    {"alpha", "a"},
    {"beta", "b"},
    {"pre", "rc"},
    {"rc", "rc"},
    {"a", "a"},
    {"b", "b"},
    {"c", "rc"},
}};

int pre_rank(const std::string& letter) {
  return letter == "a" ? 0 : letter == "b" ? 1 : 2;
}

template <class T> int three_way(const T& left, const T& right) {
  return left < right ? -1 : (right < left ? 1 : 0);
}

// The release without its trailing zeros (1.0.0 sorts as 1).
std::vector<std::uint64_t> trimmed(const std::vector<std::uint64_t>& release) {
  auto out = release;
  while (!out.empty() && out.back() == 0) {
    out.pop_back();
  }
  return out;
}

int compare_local(const Version& left, const Version& right) {
  if (left.local.empty() || right.local.empty()) {
    return three_way(!left.local.empty(), !right.local.empty()); // none sorts first
  }
  for (std::size_t i = 0; i < left.local.size() && i < right.local.size(); ++i) {
    const auto& a = left.local[i];
    const auto& b = right.local[i];
    if (a.index() != b.index()) {
      return a.index() == 0 ? 1 : -1; // a number sorts after a word
    }
    const int order = a.index() == 0 ? three_way(std::get<0>(a), std::get<0>(b))
                                     : three_way(std::get<1>(a), std::get<1>(b));
    if (order != 0) {
      return order;
    }
  }
  return three_way(left.local.size(), right.local.size());
}

// packaging's pre-release key: a dev-only version sorts before every pre-release (-1), a final
// release after them (+1), a pre-release by its letter and number (0, then the pair).
int compare_pre(const Version& left, const Version& right) {
  const auto rank = [](const Version& v) {
    if (!v.pre && !v.post && v.dev) {
      return -1;
    }
    return v.pre ? 0 : 1;
  };
  if (const int order = three_way(rank(left), rank(right)); order != 0) {
    return order;
  }
  if (left.pre && right.pre) {
    return three_way(std::make_tuple(pre_rank(left.pre->first), left.pre->second),
                     std::make_tuple(pre_rank(right.pre->first), right.pre->second));
  }
  return 0;
}

// ==V.* (also the prefix test of ~=): same epoch, and the release padded with zeros starts with
// the prefix's numbers.
bool matches_prefix(const Version& version, const Version& prefix) {
  if (version.epoch != prefix.epoch) {
    return false;
  }
  for (std::size_t i = 0; i < prefix.release.size(); ++i) {
    const std::uint64_t part = i < version.release.size() ? version.release[i] : 0;
    if (part != prefix.release[i]) {
      return false;
    }
  }
  return true;
}

// "13.2.*" -> the version 13.2 with the wildcard flag; the text without ".*" otherwise.
struct SpecVersion {
  Version version;
  bool wildcard = false;
};

std::optional<SpecVersion> spec_version(const Specifier& specifier) {
  std::string_view text = specifier.version;
  SpecVersion out;
  if (text.ends_with(".*")) {
    out.wildcard = true;
    text.remove_suffix(2);
  }
  auto parsed = parse_version(text);
  if (!parsed) {
    return std::nullopt;
  }
  out.version = std::move(*parsed);
  return out;
}

} // namespace

std::string Version::to_string() const {
  std::string out;
  if (epoch != 0) {
    out += std::to_string(epoch) + "!";
  }
  for (std::size_t i = 0; i < release.size(); ++i) {
    out += (i == 0 ? "" : ".") + std::to_string(release[i]);
  }
  if (pre) {
    out += pre->first + std::to_string(pre->second);
  }
  if (post) {
    out += ".post" + std::to_string(*post);
  }
  if (dev) {
    out += ".dev" + std::to_string(*dev);
  }
  for (std::size_t i = 0; i < local.size(); ++i) {
    out += i == 0 ? "+" : ".";
    out += local[i].index() == 0 ? std::to_string(std::get<0>(local[i])) : std::get<1>(local[i]);
  }
  return out;
}

Version Version::public_version() const {
  Version out = *this;
  out.local.clear();
  return out;
}

Version Version::base_version() const {
  Version out;
  out.epoch = epoch;
  out.release = release;
  return out;
}

std::optional<Version> parse_version(std::string_view text) {
  const std::string folded = to_lower(trim(text));
  Scanner scan(folded);
  bool too_long = false;
  Version version;
  scan.take('v');
  // Epoch: digits and '!'; else those digits start the release.
  const auto start = scan.position();
  if (const auto epoch = scan.number(too_long); epoch && scan.take('!')) {
    version.epoch = *epoch;
  } else {
    scan.rewind(start);
  }
  while (true) {
    const auto part = scan.number(too_long);
    if (!part) {
      return std::nullopt;
    }
    version.release.push_back(*part);
    if (scan.peek() == '.' && is_digit(scan.peek(1))) {
      scan.take('.');
      continue;
    }
    break;
  }
  // Pre-release: [sep] letters [sep] [number].
  auto mark = scan.position();
  scan.take_separator();
  bool have_pre = false;
  for (const auto& [spelling, normal] : k_pre_letters) {
    if (scan.take(spelling)) {
      const auto after_letters = scan.position();
      scan.take_separator();
      auto number = scan.number(too_long);
      if (!number) {
        scan.rewind(after_letters); // a separator without a number belongs to what follows
      }
      version.pre = std::make_pair(std::string(normal), number.value_or(0));
      have_pre = true;
      break;
    }
  }
  if (!have_pre) {
    scan.rewind(mark);
  }
  // Post-release: "-N", or [sep] post|rev|r [sep] [number].
  mark = scan.position();
  if (scan.peek() == '-' && is_digit(scan.peek(1))) {
    scan.take('-');
    version.post = scan.number(too_long);
  } else {
    scan.take_separator();
    if (scan.take("post") || scan.take("rev") || scan.take("r")) {
      const auto after_letters = scan.position();
      scan.take_separator();
      auto number = scan.number(too_long);
      if (!number) {
        scan.rewind(after_letters);
      }
      version.post = number.value_or(0);
    } else {
      scan.rewind(mark);
    }
  }
  // Development release: [sep] dev [sep] [number].
  mark = scan.position();
  scan.take_separator();
  if (scan.take("dev")) {
    const auto after_letters = scan.position();
    scan.take_separator();
    auto number = scan.number(too_long);
    if (!number) {
      scan.rewind(after_letters);
    }
    version.dev = number.value_or(0);
  } else {
    scan.rewind(mark);
  }
  // Local: + alnum runs joined by separators.
  if (scan.take('+')) {
    std::string segment;
    const auto flush = [&] {
      if (segment.empty()) {
        return false;
      }
      const bool numeric = std::all_of(segment.begin(), segment.end(), is_digit);
      if (numeric && segment.size() <= k_max_digits) {
        std::uint64_t value = 0;
        std::from_chars(segment.data(), segment.data() + segment.size(), value);
        version.local.emplace_back(value);
      } else if (numeric) {
        return false;
      } else {
        version.local.emplace_back(segment);
      }
      segment.clear();
      return true;
    };
    while (!scan.at_end()) {
      const char c = scan.peek();
      if (is_alnum(c)) {
        segment += c;
        scan.take(c);
      } else if (is_separator(c)) {
        if (!flush()) {
          return std::nullopt;
        }
        scan.take(c);
      } else {
        return std::nullopt;
      }
    }
    if (!flush()) {
      return std::nullopt;
    }
  }
  if (!scan.at_end() || too_long) {
    return std::nullopt;
  }
  return version;
}

int compare(const Version& left, const Version& right) {
  if (const int order = three_way(left.epoch, right.epoch); order != 0) {
    return order;
  }
  if (const int order = three_way(trimmed(left.release), trimmed(right.release)); order != 0) {
    return order;
  }
  if (const int order = compare_pre(left, right); order != 0) {
    return order;
  }
  // Post: none sorts first.
  if (const int order = three_way(left.post.has_value(), right.post.has_value()); order != 0) {
    return order;
  }
  if (left.post && right.post) {
    if (const int order = three_way(*left.post, *right.post); order != 0) {
      return order;
    }
  }
  // Dev: none sorts last.
  if (const int order = three_way(!left.dev.has_value(), !right.dev.has_value()); order != 0) {
    return order;
  }
  if (left.dev && right.dev) {
    if (const int order = three_way(*left.dev, *right.dev); order != 0) {
      return order;
    }
  }
  return compare_local(left, right);
}

std::optional<std::vector<Specifier>> parse_specifiers(std::string_view text) {
  std::vector<Specifier> out;
  while (true) {
    const auto comma = text.find(',');
    const auto clause = trim(text.substr(0, comma));
    if (!clause.empty()) {
      Specifier specifier;
      for (const std::string_view op : {"===", "~=", "==", "!=", "<=", ">=", "<", ">"}) {
        if (clause.starts_with(op)) {
          specifier.op = std::string(op);
          break;
        }
      }
      if (specifier.op.empty()) {
        return std::nullopt;
      }
      specifier.version = std::string(trim(clause.substr(specifier.op.size())));
      if (specifier.version.empty()) {
        return std::nullopt;
      }
      if (specifier.op == "===") {
        if (std::any_of(specifier.version.begin(), specifier.version.end(),
                        [](char c) { return is_space(c) || c == ';' || c == ')'; })) {
          return std::nullopt;
        }
      } else {
        const auto parsed = spec_version(specifier);
        if (!parsed) {
          return std::nullopt;
        }
        const auto& v = parsed->version;
        const bool equality = specifier.op == "==" || specifier.op == "!=";
        if (parsed->wildcard && (!equality || v.pre || v.post || v.dev || !v.local.empty())) {
          return std::nullopt; // .* only on a plain release, with == or !=
        }
        if (!equality && !v.local.empty()) {
          return std::nullopt; // a local version only with == and !=
        }
        if (specifier.op == "~=" && v.release.size() < 2) {
          return std::nullopt;
        }
      }
      out.push_back(std::move(specifier));
    }
    if (comma == std::string_view::npos) {
      return out;
    }
    text.remove_prefix(comma + 1);
  }
}

bool satisfies(const Version& version, const Specifier& specifier) {
  if (specifier.op == "===") {
    return to_lower(version.to_string()) == to_lower(specifier.version);
  }
  const auto parsed = spec_version(specifier);
  if (!parsed) {
    return false;
  }
  const Version& spec = parsed->version;
  const auto& op = specifier.op;
  if (op == "==" || op == "!=") {
    bool equal = false;
    if (parsed->wildcard) {
      equal = matches_prefix(version, spec);
    } else {
      equal = spec.local.empty() ? compare(version.public_version(), spec) == 0 : compare(version, spec) == 0;
    }
    return op == "==" ? equal : !equal;
  }
  if (op == "~=") {
    Version prefix = spec.base_version();
    prefix.release.pop_back();
    return compare(version.public_version(), spec) >= 0 && matches_prefix(version, prefix);
  }
  if (op == "<=") {
    return compare(version.public_version(), spec) <= 0;
  }
  if (op == ">=") {
    return compare(version.public_version(), spec) >= 0;
  }
  const bool same_base = compare(version.base_version(), spec.base_version()) == 0;
  if (op == "<") {
    // <V excludes V's own pre-releases unless V is one.
    return compare(version, spec) < 0 && !(!spec.is_prerelease() && version.is_prerelease() && same_base);
  }
  if (op == ">") {
    // >V excludes V's post-releases unless V is one, and V's local versions.
    return compare(version, spec) > 0 && !(!spec.is_postrelease() && version.is_postrelease() && same_base) &&
           !(!version.local.empty() && same_base);
  }
  return false;
}

bool satisfies(std::string_view version_text, const std::vector<Specifier>& specifiers) {
  const auto version = parse_version(version_text);
  for (const auto& specifier : specifiers) {
    if (specifier.op == "===") {
      if (to_lower(trim(version_text)) != to_lower(specifier.version)) {
        return false;
      }
      continue;
    }
    if (!version || !satisfies(*version, specifier)) {
      return false;
    }
  }
  return true;
}

} // namespace cudadiag::python
