#include "python/pep508.hpp"

#include "python/pep440.hpp"

#include <algorithm>
#include <array>
#include <optional>
#include <vector>

namespace cudadiag::python {

namespace {

constexpr int k_max_nesting = 64;

// The PEP 508 variable names, and the legacy spellings packaging accepts for them.
constexpr std::array<std::string_view, 13> k_variables{
    "python_version",        "python_full_version",    "os_name",
    "sys_platform",          "platform_release",       "platform_system",
    "platform_version",      "platform_machine",       "platform_python_implementation",
    "implementation_name",   "implementation_version", "extra",
    "python_implementation",
};

// The variables compared as versions when the other side is a valid specifier version.
bool compares_as_version(std::string_view key) {
  return key == "python_version" || key == "python_full_version" || key == "implementation_version" ||
         key == "platform_release";
}

enum class Kind { end, open, close, string, variable, op, and_, or_ };

struct Token {
  Kind kind = Kind::end;
  std::string text; // the string's content, the variable's PEP 508 name, the operator
};

bool is_word_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.';
}

Expected<std::vector<Token>> tokenize(std::string_view text) {
  std::vector<Token> tokens;
  std::size_t at = 0;
  const auto error = [&](const std::string& what) {
    return Error{"invalid marker at character " + std::to_string(at + 1) + ": " + what};
  };
  while (at < text.size()) {
    const char c = text[at];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++at;
      continue;
    }
    if (c == '(' || c == ')') {
      tokens.push_back({c == '(' ? Kind::open : Kind::close, std::string(1, c)});
      ++at;
      continue;
    }
    if (c == '\'' || c == '"') {
      const auto close = text.find(c, at + 1);
      if (close == std::string_view::npos) {
        return error("a quoted string without its closing quote");
      }
      tokens.push_back({Kind::string, std::string(text.substr(at + 1, close - at - 1))});
      at = close + 1;
      continue;
    }
    if (c == '=' || c == '!' || c == '<' || c == '>' || c == '~') {
      bool matched = false;
      for (const std::string_view op : {"===", "==", "~=", "!=", "<=", ">=", "<", ">"}) {
        if (text.substr(at).starts_with(op)) {
          tokens.push_back({Kind::op, std::string(op)});
          at += op.size();
          matched = true;
          break;
        }
      }
      if (!matched) {
        return error("an unknown operator");
      }
      continue;
    }
    if (is_word_char(c)) {
      std::size_t end = at;
      while (end < text.size() && is_word_char(text[end])) {
        ++end;
      }
      std::string word(text.substr(at, end - at));
      at = end;
      if (word == "and" || word == "or") {
        tokens.push_back({word == "and" ? Kind::and_ : Kind::or_, word});
      } else if (word == "in") {
        tokens.push_back({Kind::op, "in"});
      } else if (word == "not") {
        std::size_t next = at;
        while (next < text.size() && (text[next] == ' ' || text[next] == '\t')) {
          ++next;
        }
        if (next == at || text.substr(next, 2) != "in" ||
            (next + 2 < text.size() && is_word_char(text[next + 2]))) {
          return error("'not' must be followed by whitespace and 'in'");
        }
        tokens.push_back({Kind::op, "not in"});
        at = next + 2;
      } else {
        for (auto& ch : word) {
          ch = ch == '.' ? '_' : ch;
        }
        if (word == "python_implementation") {
          word = "platform_python_implementation";
        }
        if (std::find(k_variables.begin(), k_variables.end(), word) == k_variables.end()) {
          return error("'" + std::string(word) + "' is not a marker variable");
        }
        tokens.push_back({Kind::variable, word});
      }
      continue;
    }
    return error(std::string("unexpected '") + c + "'");
  }
  tokens.push_back({Kind::end, ""});
  return tokens;
}

// One comparison: `lhs op rhs` with both sides as strings, `key` the variable involved.
Expected<bool> compare_values(std::string lhs, const std::string& op, std::string rhs,
                              const std::string& key) {
  if (compares_as_version(key) && op != "in" && op != "not in") {
    const auto specifiers = parse_specifiers(op + rhs);
    if (specifiers && specifiers->size() == 1 && specifiers->front().op == op) {
      return satisfies(lhs, *specifiers);
    }
  }
  if (op == "in") {
    return rhs.find(lhs) != std::string::npos;
  }
  if (op == "not in") {
    return rhs.find(lhs) == std::string::npos;
  }
  if (op == "==" || op == "<=" || op == ">=") {
    return lhs == rhs;
  }
  if (op == "!=") {
    return lhs != rhs;
  }
  if (op == "<" || op == ">") {
    return false;
  }
  return Error{"'" + op + "' is undefined between '" + lhs + "' and '" + rhs + "'"};
}

class Evaluator {
public:
  Evaluator(std::vector<Token> tokens, const MarkerEnvironment& environment)
      : m_tokens(std::move(tokens)), m_environment(environment) {}

  Expected<bool> run() {
    auto value = disjunction(0);
    if (!value) {
      return value;
    }
    if (peek().kind != Kind::end) {
      return Error{"invalid marker: unexpected '" + peek().text + "' after a complete marker"};
    }
    return value;
  }

private:
  const Token& peek() const { return m_tokens[m_at]; }
  const Token& next() { return m_tokens[m_at < m_tokens.size() - 1 ? m_at++ : m_at]; }

  Expected<bool> disjunction(int depth) {
    auto value = conjunction(depth);
    while (value && peek().kind == Kind::or_) {
      next();
      auto right = conjunction(depth);
      if (!right) {
        return right;
      }
      value = *value || *right;
    }
    return value;
  }

  Expected<bool> conjunction(int depth) {
    auto value = atom(depth);
    while (value && peek().kind == Kind::and_) {
      next();
      auto right = atom(depth);
      if (!right) {
        return right;
      }
      value = *value && *right;
    }
    return value;
  }

  Expected<bool> atom(int depth) {
    if (peek().kind == Kind::open) {
      if (depth >= k_max_nesting) {
        return Error{"invalid marker: nested deeper than " + std::to_string(k_max_nesting) + " parentheses"};
      }
      next();
      auto value = disjunction(depth + 1);
      if (!value) {
        return value;
      }
      if (next().kind != Kind::close) {
        return Error{"invalid marker: a '(' without its ')'"};
      }
      return value;
    }
    auto left = side();
    if (!left) {
      return Error{left.error()};
    }
    const Token op = next();
    if (op.kind != Kind::op) {
      return Error{"invalid marker: expected an operator after '" + left->text + "'"};
    }
    auto right = side();
    if (!right) {
      return Error{right.error()};
    }
    return compare(*left, op.text, *right);
  }

  Expected<Token> side() {
    const Token token = next();
    if (token.kind != Kind::variable && token.kind != Kind::string) {
      return Error{"invalid marker: expected a variable or a quoted string" +
                   (token.text.empty() ? std::string() : ", found '" + token.text + "'")};
    }
    return token;
  }

  Expected<std::string> value_of(const std::string& variable) const {
    const auto found = m_environment.find(variable);
    if (found == m_environment.end()) {
      if (variable == "extra") {
        return std::string(); // no extra requested
      }
      return Error{"the environment has no value for marker variable '" + variable + "'"};
    }
    return variable == "extra" ? canonical_name(found->second) : found->second;
  }

  Expected<bool> compare(const Token& left, const std::string& op, const Token& right) const {
    if (left.kind != Kind::variable && right.kind != Kind::variable) {
      return Error{"invalid marker: '" + left.text + "' " + op + " '" + right.text +
                   "' compares two strings"};
    }
    const std::string& key = left.kind == Kind::variable ? left.text : right.text;
    auto lhs = left.kind == Kind::variable ? value_of(left.text) : Expected<std::string>(left.text);
    auto rhs = left.kind == Kind::variable
                   ? (right.kind == Kind::variable ? value_of(right.text) : Expected<std::string>(right.text))
                   : value_of(right.text);
    if (!lhs) {
      return Error{lhs.error()};
    }
    if (!rhs) {
      return Error{rhs.error()};
    }
    std::string lhs_text = *lhs;
    std::string rhs_text = *rhs;
    if (key == "extra") { // PEP 685: names compare normalised, on both sides
      lhs_text = canonical_name(lhs_text);
      rhs_text = canonical_name(rhs_text);
    }
    return compare_values(lhs_text, op, rhs_text, key);
  }

  std::vector<Token> m_tokens;
  std::size_t m_at = 0;
  const MarkerEnvironment& m_environment;
};

} // namespace

std::string canonical_name(std::string_view name) {
  std::string out;
  bool in_run = false;
  for (const char c : name) {
    if (c == '-' || c == '_' || c == '.') {
      in_run = true;
      continue;
    }
    if (in_run) {
      out += '-';
      in_run = false;
    }
    out += c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  }
  if (in_run) {
    out += '-';
  }
  return out;
}

Expected<bool> evaluate_marker(std::string_view marker, const MarkerEnvironment& environment) {
  auto tokens = tokenize(marker);
  if (!tokens) {
    return Error{tokens.error()};
  }
  return Evaluator(std::move(*tokens), environment).run();
}

} // namespace cudadiag::python
