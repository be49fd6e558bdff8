#pragma once
// Redaction of everything that goes into a support bundle. On by default and not optional:
//   - values of environment variables whose names look secret (looks_secret) are withheld, and
//     wherever such a value (6 characters or longer) appears in any text — a path, a URL, a command
//     output — it is replaced by "<redacted:NAME>";
//   - credentials in URLs ("scheme://user:password@host", "scheme://token@host") become
//     "scheme://<redacted>@host";
//   - with RedactionOptions::paths (--redact-paths), the home directory becomes "<home>" and the
//     user name (USER, LOGNAME, the last component of a /home/NAME home) becomes "<user>" where it
//     stands as a word ("root" is not redacted: it identifies nobody).
// Counts of what was replaced are returned, so the bundle's manifest can say what was redacted.

#include "core/environment.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::bundle {

// Whether a variable's name suggests its value is a secret: it contains (case-insensitively)
// TOKEN, SECRET, PASS, CREDENTIAL, AUTH, KEY, PRIVATE, COOKIE, SESSION or SIGNATURE.
bool looks_secret(std::string_view variable_name);

// Values shorter than this are withheld where the variable itself is listed, but not searched
// for in other text (a 3-character value would match everywhere).
inline constexpr std::size_t k_min_scrubbed_value = 6;

struct RedactionOptions {
  bool paths = false; // --redact-paths: also the home directory and the user name
};

// What one or more redaction passes replaced.
struct RedactionCounts {
  int secret_values = 0;
  int url_credentials = 0;
  int home_dir = 0;
  int user_name = 0;

  [[nodiscard]] bool any() const { return secret_values + url_credentials + home_dir + user_name > 0; }
  RedactionCounts& operator+=(const RedactionCounts& other);
  // {"secret_values": n, ...} with only the non-zero counts.
  [[nodiscard]] nlohmann::json to_json() const;
};

// `text` with every "scheme://userinfo@" reduced to "scheme://<redacted>@"; adds to `replaced`.
std::string strip_url_credentials(std::string_view text, int& replaced);

class Redactor {
public:
  Redactor(const Environment& env, RedactionOptions options);

  // `text` with every rule above applied; adds what it replaced to `counts`.
  std::string apply(std::string_view text, RedactionCounts& counts) const;
  // A JSON value with apply() run over every string and every object key.
  nlohmann::json apply_json(const nlohmann::json& value, RedactionCounts& counts) const;
  // How a variable may be shown: "<redacted>" when its name looks secret, else apply(value).
  std::string shown_value(std::string_view name, std::string_view value, RedactionCounts& counts) const;

  // The variables whose values are withheld, sorted by name.
  [[nodiscard]] const std::vector<std::string>& secret_variables() const { return m_secret_names; }
  // The rules in effect, in words, for the manifest (never the redacted values themselves).
  [[nodiscard]] std::vector<std::string> rules() const;
  [[nodiscard]] const RedactionOptions& options() const { return m_options; }

private:
  struct Needle {
    std::string text;        // what to look for
    std::string replacement; // what replaces it
  };
  RedactionOptions m_options;
  std::vector<std::string> m_secret_names;
  std::vector<Needle> m_secret_values; // longest first, so a value containing another goes first
  std::vector<std::string> m_homes;    // longest first
  std::vector<std::string> m_users;
};

} // namespace cudadiag::bundle
