#include "core/environment.hpp"

#include <pwd.h>
#include <unistd.h>

#include <array>
#include <cstring>

extern char** environ; // NOLINT(readability-redundant-declaration)

namespace cudadiag {

Environment Environment::capture() {
  Environment env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    const auto eq = text.find('=');
    if (eq == std::string_view::npos) {
      continue;
    }
    env.m_vars.emplace(std::string(text.substr(0, eq)), std::string(text.substr(eq + 1)));
  }
  std::array<char, 4096> buffer{};
  if (::getcwd(buffer.data(), buffer.size()) != nullptr) {
    env.cwd = buffer.data();
  }
  env.uid = ::getuid();
  return env;
}

std::string home_from_passwd(unsigned uid) {
  struct passwd entry {};
  struct passwd* result = nullptr;
  std::array<char, 4096> pw_buffer{};
  if (::getpwuid_r(uid, &entry, pw_buffer.data(), pw_buffer.size(), &result) == 0 && result != nullptr &&
      result->pw_dir != nullptr) {
    return result->pw_dir;
  }
  return {};
}

std::optional<std::string> Environment::get(std::string_view name) const {
  const auto it = m_vars.find(name);
  if (it == m_vars.end()) {
    return std::nullopt;
  }
  return it->second;
}

std::optional<std::string> Environment::non_empty(std::string_view name) const {
  auto value = get(name);
  if (!value || value->empty()) {
    return std::nullopt;
  }
  return value;
}

std::string Environment::home() const {
  if (auto home = non_empty("HOME")) {
    return *home;
  }
  return passwd_home.empty() ? home_from_passwd(uid) : passwd_home;
}

std::vector<std::string> split_search_path(std::string_view value) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    const auto colon = value.find(':', start);
    if (colon == std::string_view::npos) {
      parts.emplace_back(value.substr(start));
      break;
    }
    parts.emplace_back(value.substr(start, colon - start));
    start = colon + 1;
  }
  return parts;
}

} // namespace cudadiag
