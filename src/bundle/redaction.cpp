#include "bundle/redaction.hpp"

#include "core/filesystem.hpp"
#include "report/json_report.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace cudadiag::bundle {
namespace {

constexpr std::array<std::string_view, 10> k_secret_words = {
    "TOKEN", "SECRET", "PASS", "CREDENTIAL", "AUTH", "KEY", "PRIVATE", "COOKIE", "SESSION", "SIGNATURE"};

bool is_alnum(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0;
}
// Characters that continue a file-name component: a match followed by one of them is a prefix of
// a longer name ("/home/al" inside "/home/alice"), not the name itself.
bool continues_name(char c) {
  return is_alnum(c) || c == '.' || c == '_' || c == '-';
}
bool is_scheme_char(char c) {
  return is_alnum(c) || c == '+' || c == '.' || c == '-';
}
bool ends_authority(char c) {
  return c == '/' || c == '?' || c == '#' || c == '"' || c == '\'' || c == '<' || c == '>' || c == '\\' ||
         std::isspace(static_cast<unsigned char>(c)) != 0;
}

enum class Bounds { none, path_end, word };

// Replaces each occurrence of `needle` in `text` that satisfies `bounds`; returns how many.
int replace_all(std::string& text, std::string_view needle, std::string_view replacement, Bounds bounds) {
  if (needle.empty()) {
    return 0;
  }
  int count = 0;
  std::size_t at = 0;
  while ((at = text.find(needle, at)) != std::string::npos) {
    const std::size_t end = at + needle.size();
    bool ok = true;
    if (bounds == Bounds::path_end) {
      ok = end == text.size() || !continues_name(text[end]);
    } else if (bounds == Bounds::word) {
      ok = (at == 0 || !is_alnum(text[at - 1])) && (end == text.size() || !is_alnum(text[end]));
    }
    if (!ok) {
      at = end;
      continue;
    }
    text.replace(at, needle.size(), replacement);
    at += replacement.size();
    ++count;
  }
  return count;
}

void add_unique(std::vector<std::string>& list, std::string value) {
  if (std::find(list.begin(), list.end(), value) == list.end()) {
    list.push_back(std::move(value));
  }
}

bool longer_first(const std::string& a, const std::string& b) {
  return a.size() > b.size();
}

} // namespace

bool looks_secret(std::string_view variable_name) {
  std::string upper(variable_name);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); });
  return std::any_of(k_secret_words.begin(), k_secret_words.end(),
                     [&upper](std::string_view word) { return upper.find(word) != std::string::npos; });
}

RedactionCounts& RedactionCounts::operator+=(const RedactionCounts& other) {
  secret_values += other.secret_values;
  url_credentials += other.url_credentials;
  home_dir += other.home_dir;
  user_name += other.user_name;
  return *this;
}

nlohmann::json RedactionCounts::to_json() const {
  nlohmann::json out = nlohmann::json::object();
  const std::array<std::pair<const char*, int>, 4> fields = {{{"secret_values", secret_values},
                                                              {"url_credentials", url_credentials},
                                                              {"home_dir", home_dir},
                                                              {"user_name", user_name}}};
  for (const auto& [name, value] : fields) {
    if (value != 0) {
      out[name] = value;
    }
  }
  return out;
}

std::string strip_url_credentials(std::string_view text, int& replaced) {
  constexpr std::string_view k_marker = "<redacted>";
  std::string out;
  out.reserve(text.size());
  std::size_t copied = 0;
  std::size_t at = 0;
  while ((at = text.find("://", at)) != std::string_view::npos) {
    std::size_t scheme = at;
    while (scheme > 0 && is_scheme_char(text[scheme - 1])) {
      --scheme;
    }
    const std::size_t start = at + 3;
    std::size_t end = start;
    while (end < text.size() && text[end] != '@' && !ends_authority(text[end])) {
      ++end;
    }
    const bool has_scheme = scheme < at && std::isalpha(static_cast<unsigned char>(text[scheme])) != 0;
    if (has_scheme && end < text.size() && text[end] == '@' && end > start &&
        text.substr(start, end - start) != k_marker) {
      out.append(text.substr(copied, start - copied));
      out.append(k_marker);
      copied = end;
      ++replaced;
    }
    at = std::max(start, end);
  }
  out.append(text.substr(copied));
  return out;
}

Redactor::Redactor(const Environment& env, RedactionOptions options) : m_options(options) {
  for (const auto& [name, value] : env.variables()) {
    if (!looks_secret(name)) {
      continue;
    }
    m_secret_names.push_back(name);
    if (value.size() < k_min_scrubbed_value) {
      continue;
    }
    // The value as it may appear: raw (command output), as JSON strings carry it (invalid UTF-8 as
    // \xNN text) and JSON-escaped (newlines as \n) in a serialized document.
    const std::string marker = "<redacted:" + name + ">";
    const auto text = report::to_valid_utf8(value);
    const auto escaped = nlohmann::json(text).dump();
    for (const auto& variant : {value, text, escaped.substr(1, escaped.size() - 2)}) {
      const bool known = std::any_of(m_secret_values.begin(), m_secret_values.end(),
                                     [&variant](const Needle& needle) { return needle.text == variant; });
      if (!known) {
        m_secret_values.push_back({variant, marker});
      }
    }
  }
  std::sort(m_secret_names.begin(), m_secret_names.end());
  std::stable_sort(m_secret_values.begin(), m_secret_values.end(),
                   [](const Needle& a, const Needle& b) { return a.text.size() > b.text.size(); });
  if (!options.paths) {
    return;
  }
  const auto passwd_home = env.passwd_home.empty() ? home_from_passwd(env.uid) : env.passwd_home;
  for (const auto& home : {env.get("HOME").value_or(""), passwd_home}) {
    auto normal = fs::lexically_normal(home);
    if (normal.size() > 1 && normal.front() == '/') {
      add_unique(m_homes, normal);
      if (fs::parent(normal) == "/home") {
        add_unique(m_users, fs::basename(normal));
      }
    }
  }
  for (const auto* variable : {"USER", "LOGNAME"}) {
    const auto user = env.get(variable).value_or("");
    if (user.size() >= 2 && user != "root") {
      add_unique(m_users, user);
    }
  }
  std::sort(m_homes.begin(), m_homes.end(), longer_first);
  std::sort(m_users.begin(), m_users.end(), longer_first);
}

std::string Redactor::apply(std::string_view text, RedactionCounts& counts) const {
  // URL credentials first: a secret value inside one must not break the URL's shape before it is seen.
  std::string out = strip_url_credentials(text, counts.url_credentials);
  for (const auto& needle : m_secret_values) {
    counts.secret_values += replace_all(out, needle.text, needle.replacement, Bounds::none);
  }
  for (const auto& home : m_homes) {
    counts.home_dir += replace_all(out, home, "<home>", Bounds::path_end);
  }
  for (const auto& user : m_users) {
    counts.user_name += replace_all(out, user, "<user>", Bounds::word);
  }
  return out;
}

nlohmann::json Redactor::apply_json(const nlohmann::json& value, RedactionCounts& counts) const {
  if (value.is_string()) {
    return apply(std::string_view(value.get_ref<const std::string&>()), counts);
  }
  if (value.is_array()) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& item : value) {
      out.push_back(apply_json(item, counts));
    }
    return out;
  }
  if (value.is_object()) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& [key, item] : value.items()) {
      out[apply(std::string_view(key), counts)] = apply_json(item, counts);
    }
    return out;
  }
  return value;
}

std::string Redactor::shown_value(std::string_view name, std::string_view value,
                                  RedactionCounts& counts) const {
  if (looks_secret(name)) {
    ++counts.secret_values;
    return "<redacted>";
  }
  return apply(value, counts);
}

std::vector<std::string> Redactor::rules() const {
  std::vector<std::string> out = {
      "values of environment variables whose names contain TOKEN, SECRET, PASS, CREDENTIAL, AUTH, KEY, "
      "PRIVATE, "
      "COOKIE, SESSION or SIGNATURE are withheld; values of " +
          std::to_string(k_min_scrubbed_value) +
          "+ characters are replaced by <redacted:NAME> wherever they appear",
      "credentials in URLs (the user and password before a host's '@') are replaced by <redacted>"};
  if (m_options.paths) {
    out.emplace_back("the home directory is replaced by <home> and the user name by <user> (--redact-paths)");
  } else {
    out.emplace_back(
        "paths, the home directory and the user name are kept (use --redact-paths to hide them)");
  }
  return out;
}

} // namespace cudadiag::bundle
