#include "policy/requirement.hpp"

#include "core/text.hpp"
#include "probes/catalog.hpp"
#include "selftest/selftest.hpp"
#include "versions/version_sources.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <vector>

namespace cudadiag::policy {
namespace {

constexpr std::string_view k_operator_chars = "<>=!";
constexpr std::string_view k_units[] = {"GB/s",  "GB",  "Gkeys/s", "Gkeys", "TFLOP/s",  "TFLOP",
                                        "GiB/s", "GiB", "ms",      "us",    "fraction", "count"};

Error bad(std::string_view spec, const std::string& why) {
  return Error{"bad requirement '" + std::string(spec) + "': " + why};
}

bool valid_subject(std::string_view subject) {
  return !subject.empty() && std::all_of(subject.begin(), subject.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == '-';
  });
}

std::string known_components() {
  std::vector<std::string> names;
  for (const auto& spec : probes::catalog()) {
    if (std::find(names.begin(), names.end(), spec.name) == names.end()) {
      names.emplace_back(spec.name);
    }
  }
  std::string out;
  for (const auto& name : names) {
    out += (out.empty() ? "" : ", ") + name;
  }
  return out;
}

std::optional<Op> parse_op(std::string_view text, std::size_t& length) {
  constexpr std::pair<std::string_view, Op> k_ops[] = {{">=", Op::ge}, {"<=", Op::le}, {"==", Op::eq},
                                                       {"!=", Op::ne}, {">", Op::gt},  {"<", Op::lt},
                                                       {"=", Op::eq}};
  for (const auto& [token, op] : k_ops) {
    if (text.substr(0, token.size()) == token) {
      length = token.size();
      return op;
    }
  }
  return std::nullopt;
}

// A number followed by an optional unit: "30Gkeys", "4000 GB/s", "0.9".
Expected<void> split_number(std::string_view spec, std::string_view value, Requirement& out) {
  std::size_t digits = 0;
  while (digits < value.size() &&
         (std::isdigit(static_cast<unsigned char>(value[digits])) != 0 || value[digits] == '.')) {
    ++digits;
  }
  double number = 0;
  const auto [end, error] = std::from_chars(value.data(), value.data() + digits, number);
  if (digits == 0 || error != std::errc() || end != value.data() + digits) {
    return bad(spec, "'" + std::string(value) + "' is not a number (e.g. 30Gkeys, 4000GB/s, 0.9)");
  }
  const auto unit = trim(value.substr(digits));
  if (!unit.empty() && std::none_of(std::begin(k_units), std::end(k_units),
                                    [unit](std::string_view known) { return same_unit(known, unit); })) {
    return bad(spec, "unknown unit '" + std::string(unit) +
                         "' (units: GB/s, Gkeys/s, TFLOP/s, GiB/s, GiB, ms, us, fraction, count)");
  }
  out.value = std::string(value.substr(0, digits));
  out.unit = std::string(unit);
  return {};
}

Expected<void> parse_subject(std::string_view spec, std::string_view subject, Requirement& out) {
  const bool presence = !out.op;
  if (subject == "driver" || subject == "driver.cuda") {
    out.subject = subject == "driver" ? Subject::driver : Subject::driver_cuda;
    return {};
  }
  if (subject == "selftest") {
    out.subject = Subject::selftest;
    if (!presence) {
      return bad(spec, "'selftest' takes no comparison; name a test: selftest.sort>=30Gkeys");
    }
    return {};
  }
  if (subject == "selftest.score") {
    out.subject = Subject::selftest_score;
    if (presence) {
      return bad(spec, "selftest.score needs a comparison, e.g. selftest.score>=80");
    }
    return {};
  }
  if (subject.substr(0, 9) == "selftest.") {
    auto rest = subject.substr(9);
    const auto dot = rest.find('.');
    out.subject = Subject::selftest_test;
    out.name = std::string(rest.substr(0, dot));
    out.metric = dot == std::string_view::npos ? "" : std::string(rest.substr(dot + 1));
    // The keys a requirement may name are those of the self-test's catalog.
    const auto& catalog = selftest::test_catalog();
    if (std::none_of(catalog.begin(), catalog.end(),
                     [&out](const auto& info) { return info.key == out.name; })) {
      std::string known;
      for (const auto& info : catalog) {
        known += (known.empty() ? "" : ", ") + std::string(info.key);
      }
      return bad(spec, "unknown self-test '" + out.name + "' (tests: " + known + ")");
    }
    if (dot != std::string_view::npos && out.metric.empty()) {
      return bad(spec, "empty metric name after 'selftest." + out.name + ".'");
    }
    return {};
  }
  if (subject.substr(0, 9) == "findings.") {
    out.subject = Subject::findings;
    out.name = std::string(subject.substr(9));
    if (out.name != "error" && out.name != "warning" && out.name != "info") {
      return bad(spec, "unknown severity '" + out.name + "' (error, warning, info)");
    }
    if (presence) {
      return bad(spec, "findings." + out.name + " needs a comparison, e.g. findings.error==0");
    }
    return {};
  }
  if (probes::find_component(subject) == nullptr) {
    return Error{"unknown component '" + std::string(subject) + "' in requirement '" + std::string(spec) +
                 "' (known: " + known_components() +
                 ", or driver, driver.cuda, selftest..., findings..., no-errors, gpu.idle)"};
  }
  out.subject = Subject::component;
  out.name = std::string(subject);
  return {};
}

Expected<void> parse_value(std::string_view spec, std::string_view value, Requirement& out) {
  if (value.empty()) {
    return bad(spec, "nothing after '" + std::string(to_string(*out.op)) + "'");
  }
  if (k_operator_chars.find(value.front()) != std::string_view::npos) {
    return bad(spec, "'" + std::string(value) + "' is not a value (one operator only)");
  }
  switch (out.subject) {
  case Subject::component:
  case Subject::driver:
  case Subject::driver_cuda:
    if (!versions::is_dotted_digits(value)) {
      return bad(spec, "'" + std::string(value) + "' is not a version (e.g. 12.4 or 580.95.05)");
    }
    out.value = std::string(value);
    return {};
  case Subject::findings:
    if (!std::all_of(value.begin(), value.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; })) {
      return bad(spec, "'" + std::string(value) + "' is not a count");
    }
    out.value = std::string(value);
    return {};
  case Subject::selftest_test:
  case Subject::selftest_score: return split_number(spec, value, out);
  case Subject::selftest:
  case Subject::gpu_idle: break;
  }
  return bad(spec, "takes no value");
}

// Dotted version cut to `parts` components ("13.0.88", 2 -> "13.0").
std::string cut(std::string_view version, std::size_t parts) {
  std::size_t end = 0;
  for (std::size_t seen = 0; end < version.size(); ++end) {
    if (version[end] == '.' && ++seen == parts) {
      break;
    }
  }
  return std::string(version.substr(0, end));
}

bool holds(int comparison, Op op) {
  switch (op) {
  case Op::ge: return comparison >= 0;
  case Op::gt: return comparison > 0;
  case Op::le: return comparison <= 0;
  case Op::lt: return comparison < 0;
  case Op::eq: return comparison == 0;
  case Op::ne: return comparison != 0;
  }
  return false;
}

} // namespace

std::string_view to_string(Op op) {
  switch (op) {
  case Op::ge: return ">=";
  case Op::gt: return ">";
  case Op::le: return "<=";
  case Op::lt: return "<";
  case Op::eq: return "==";
  case Op::ne: return "!=";
  }
  return "?";
}

Expected<Requirement> parse_requirement(std::string_view raw) {
  const auto spec = trim(raw);
  if (spec.empty()) {
    return Error{"empty requirement"};
  }
  Requirement out;
  out.text = std::string(spec);
  if (spec == "gpu.idle") {
    out.subject = Subject::gpu_idle;
    return out;
  }
  if (spec == "no-errors" || spec == "no-warnings") {
    out.subject = Subject::findings;
    out.name = spec == "no-errors" ? "error" : "warning";
    out.op = Op::eq;
    out.value = "0";
    return out;
  }
  const auto at = spec.find_first_of(k_operator_chars);
  const auto subject = trim(spec.substr(0, at));
  if (!valid_subject(subject)) {
    return bad(spec, subject.empty()
                         ? "nothing before the operator"
                         : "'" + std::string(subject) + "' is not a name (letters, digits, . _ -)");
  }
  std::string_view value;
  if (at != std::string_view::npos) {
    std::size_t length = 0;
    out.op = parse_op(spec.substr(at), length);
    if (!out.op) {
      return bad(spec,
                 "'" + std::string(spec.substr(at)) + "' does not start with an operator (>= > <= < == !=)");
    }
    value = trim(spec.substr(at + length));
  }
  CUDADIAG_TRY(parse_subject(spec, subject, out));
  if (out.op) {
    CUDADIAG_TRY(parse_value(spec, value, out));
  }
  return out;
}

bool version_satisfies(std::string_view observed, Op op, std::string_view wanted) {
  const auto parts = static_cast<std::size_t>(std::count(wanted.begin(), wanted.end(), '.') + 1);
  return holds(versions::compare_versions(cut(observed, parts), wanted), op);
}

bool number_satisfies(double observed, Op op, double wanted) {
  const int comparison = observed < wanted ? -1 : observed > wanted ? 1 : 0;
  return !std::isnan(observed) && holds(comparison, op);
}

bool same_unit(std::string_view metric_unit, std::string_view wanted_unit) {
  auto base = [](std::string_view unit) {
    std::string out(unit);
    if (out.size() > 2 && out.ends_with("/s")) {
      out.resize(out.size() - 2);
    }
    std::transform(out.begin(), out.end(), out.begin(),
                   [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
    return out;
  };
  return base(metric_unit) == base(wanted_unit);
}

} // namespace cudadiag::policy
