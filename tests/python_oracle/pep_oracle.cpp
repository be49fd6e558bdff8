// cudadiag's PEP 440/508 evaluators answering questions on stdin, one JSON object per line, so that
// tests/cli/test_pep440_oracle.py can put the same questions to Python's `packaging`:
//   {"normalize": V}               -> the normalised version, or "invalid"
//   {"compare": [A, B]}            -> -1, 0 or 1 ("invalid" when either does not parse)
//   {"version": V, "spec": S}      -> true/false: V satisfies the specifier set S; "invalid" spec
//   {"marker": M, "env": {...}}    -> true/false, or "error"
// One answer per line on stdout, in order.
#include "python/pep440.hpp"
#include "python/pep508.hpp"

#include <nlohmann/json.hpp>

#include <iostream>
#include <string>

int main() {
  using namespace cudadiag::python;
  std::ios::sync_with_stdio(false);
  std::string line;
  while (std::getline(std::cin, line)) {
    const auto question = nlohmann::json::parse(line, nullptr, false);
    std::string answer = "error";
    if (question.contains("normalize")) {
      const auto version = parse_version(question["normalize"].get<std::string>());
      answer = version ? version->to_string() : "invalid";
    } else if (question.contains("compare")) {
      const auto a = parse_version(question["compare"][0].get<std::string>());
      const auto b = parse_version(question["compare"][1].get<std::string>());
      answer = a && b ? std::to_string(compare(*a, *b)) : "invalid";
    } else if (question.contains("spec")) {
      const auto specifiers = parse_specifiers(question["spec"].get<std::string>());
      answer = !specifiers
                   ? "invalid"
                   : (satisfies(question["version"].get<std::string>(), *specifiers) ? "true" : "false");
    } else if (question.contains("marker")) {
      MarkerEnvironment environment;
      for (const auto& [key, value] : question["env"].items()) {
        environment[key] = value.get<std::string>();
      }
      const auto result = evaluate_marker(question["marker"].get<std::string>(), environment);
      answer = !result ? "error" : (*result ? "true" : "false");
    }
    std::cout << answer << '\n';
  }
  return 0;
}
