#pragma once
// Python package versions and version specifiers as PEP 440 defines them (what pip and
// `packaging` implement): parsing with the standard's normalisations (v1.0, 1.0-1, 1.0.post,
// 1.0alpha2, case, separators), the total order (epoch, release with trailing zeros ignored,
// dev < pre < final < post, local segments), and specifier sets (==, !=, <=, >=, <, >, ~=, ===,
// trailing .* on == and !=) evaluated as packaging's Specifier.contains(v, prereleases=True):
// the installed version is checked as it is, pre-release or not.
//
// Hand-written: no C++ library implements PEP 440, and the rules are short; tests/python_oracle
// compares this with `packaging` on generated cases (tests/cli/test_pep440_oracle.py).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace cudadiag::python {

struct Version {
  std::uint64_t epoch = 0;
  std::vector<std::uint64_t> release;                       // at least one number
  std::optional<std::pair<std::string, std::uint64_t>> pre; // "a", "b" or "rc", and its number
  std::optional<std::uint64_t> post;
  std::optional<std::uint64_t> dev;
  std::vector<std::variant<std::uint64_t, std::string>> local; // lower-case segments

  [[nodiscard]] bool is_prerelease() const { return pre.has_value() || dev.has_value(); }
  [[nodiscard]] bool is_postrelease() const { return post.has_value(); }
  // The normalised form ("1!2.0rc1.post2.dev3+ubuntu.1").
  [[nodiscard]] std::string to_string() const;
  // The version without its local part ("2.0+cu130" -> "2.0").
  [[nodiscard]] Version public_version() const;
  // Epoch and release only ("1!2.0rc1" -> "1!2.0").
  [[nodiscard]] Version base_version() const;
};

// The version `text` denotes, or nullopt when it is not a PEP 440 version. Surrounding whitespace
// and a leading "v" are accepted, as by packaging.
std::optional<Version> parse_version(std::string_view text);

// <0, 0, >0 as packaging orders versions.
int compare(const Version& left, const Version& right);
inline bool operator==(const Version& l, const Version& r) {
  return compare(l, r) == 0;
}
inline bool operator<(const Version& l, const Version& r) {
  return compare(l, r) < 0;
}

// One clause of a specifier set: an operator and the version text after it.
struct Specifier {
  std::string op;      // "==", "!=", "<=", ">=", "<", ">", "~=", "==="
  std::string version; // as written, trimmed ("13.2.86.*", "2.9")
  [[nodiscard]] std::string to_string() const { return op + version; }
};

// "~=3.9, !=3.9.1" -> its clauses; nullopt when a clause is not a valid specifier (an unknown
// operator, a version that is not PEP 440, .* where it is not allowed, ~= with one number). The
// empty text is the empty set, which every version satisfies.
std::optional<std::vector<Specifier>> parse_specifiers(std::string_view text);

// Whether `version` satisfies `specifier` (prereleases allowed, as for an installed version).
bool satisfies(const Version& version, const Specifier& specifier);
// ... every clause of a set; `===` compares the raw text, so the version is also given as text.
bool satisfies(std::string_view version_text, const std::vector<Specifier>& specifiers);

} // namespace cudadiag::python
