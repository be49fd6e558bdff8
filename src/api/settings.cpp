#include "api/settings.hpp"

#include "core/bounded_json.hpp"
#include "probes/catalog.hpp"
#include "selftest/selftest.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>

namespace cudadiag::api {
namespace {

using nlohmann::json;

constexpr double k_max_timeout_seconds = 3600;
// Options are a flat object with a few lists and one map: refuse anything far bigger or deeper.
constexpr std::size_t k_max_options_depth = 16;
constexpr std::size_t k_max_options_bytes = std::size_t{16} << 20U;

// Reads one key's value into `settings`; returns what is wrong with the value, or "" when accepted.
using Apply = std::function<std::string(const json& value, Settings& settings)>;

std::string read_string(const json& value, std::string& out) {
  if (!value.is_string()) {
    return "expected a string";
  }
  out = value.get<std::string>();
  return {};
}

std::string read_bool(const json& value, bool& out) {
  if (!value.is_boolean()) {
    return "expected true or false";
  }
  out = value.get<bool>();
  return {};
}

std::string read_strings(const json& value, std::vector<std::string>& out) {
  if (!value.is_array() ||
      !std::all_of(value.begin(), value.end(), [](const json& item) { return item.is_string(); })) {
    return "expected an array of strings";
  }
  out = value.get<std::vector<std::string>>();
  return {};
}

std::string read_choice(const json& value, std::initializer_list<std::string_view> choices,
                        std::string& out) {
  if (!value.is_string() ||
      std::find(choices.begin(), choices.end(), value.get<std::string>()) == choices.end()) {
    std::string expected;
    for (const auto choice : choices) {
      expected += (expected.empty() ? "\"" : " or \"") + std::string(choice) + "\"";
    }
    return "expected " + expected;
  }
  out = value.get<std::string>();
  return {};
}

std::string read_environment(const json& value, std::map<std::string, std::optional<std::string>>& out) {
  if (!value.is_object()) {
    return "expected an object of variable names to strings or null";
  }
  std::map<std::string, std::optional<std::string>> parsed;
  for (const auto& [name, setting] : value.items()) {
    if (setting.is_null()) {
      parsed[name] = std::nullopt;
    } else if (setting.is_string()) {
      parsed[name] = setting.get<std::string>();
    } else {
      return "\"" + name + "\": expected a string or null";
    }
  }
  out = std::move(parsed);
  return {};
}

// One row per key; a key not listed here is rejected.
const std::map<std::string, Apply, std::less<>>& keys() {
  static const std::map<std::string, Apply, std::less<>> table = {
      {"components", [](const json& v, Settings& s) { return read_strings(v, s.options.components); }},
      {"python", [](const json& v, Settings& s) { return read_string(v, s.options.python); }},
      {"ld_so_cache", [](const json& v, Settings& s) { return read_string(v, s.options.ld_so_cache); }},
      {"root", [](const json& v, Settings& s) { return read_string(v, s.options.root); }},
      {"image", [](const json& v, Settings& s) { return read_string(v, s.options.image); }},
      {"assume_driver", [](const json& v, Settings& s) { return read_string(v, s.options.assume_driver); }},
      {"assume_gpu", [](const json& v, Settings& s) { return read_string(v, s.options.assume_gpu); }},
      {"inherit_environment",
       [](const json& v, Settings& s) { return read_bool(v, s.options.inherit_environment); }},
      {"fail_on",
       [](const json& v, Settings& s) {
         std::string level;
         auto problem = read_choice(v, {"error", "warning"}, level);
         s.options.fail_on_warning = level == "warning";
         return problem;
       }},
      {"verify", [](const json& v, Settings& s) { return read_bool(v, s.verify); }},
      {"self_test", [](const json& v, Settings& s) { return read_bool(v, s.self_test); }},
      {"self_test_level",
       [](const json& v, Settings& s) {
         std::string level;
         auto problem = read_choice(v, {"quick", "full"}, level);
         s.options.self_test_level = level == "full" ? SelfTestLevel::full : SelfTestLevel::quick;
         return problem;
       }},
      {"self_tests", [](const json& v, Settings& s) { return read_strings(v, s.options.self_tests); }},
      {"context",
       [](const json& v, Settings& s) -> std::string {
         if (v.is_null()) {
           s.options.context.reset();
           return {};
         }
         std::string context;
         auto problem = read_choice(v, {"interactive", "ci", "fleet"}, context);
         if (problem.empty()) {
           s.options.context = context == "fleet" ? Context::fleet
                               : context == "ci"  ? Context::ci
                                                  : Context::interactive;
         }
         return problem;
       }},
      {"exclusive", [](const json& v, Settings& s) { return read_bool(v, s.options.exclusive); }},
      {"load_check", [](const json& v, Settings& s) { return read_bool(v, s.options.load_check); }},
      {"verify_record_hashes",
       [](const json& v, Settings& s) { return read_bool(v, s.options.verify_record_hashes); }},
      {"cache",
       [](const json& v, Settings& s) {
         std::string mode;
         auto problem = read_choice(v, {"off", "read", "read_write"}, mode);
         s.options.cache = mode == "off"          ? Cache::off
                           : mode == "read_write" ? Cache::read_write
                                                  : Cache::read;
         return problem;
       }},
      {"device",
       [](const json& v, Settings& s) -> std::string {
         if (v.is_null()) {
           s.options.device.reset();
           return {};
         }
         if (!v.is_number_integer()) {
           return "expected an integer or null";
         }
         const auto ordinal = v.get<std::int64_t>();
         if (ordinal < 0 || ordinal > std::numeric_limits<int>::max()) {
           return "expected a CUDA ordinal (>= 0)";
         }
         s.options.device = static_cast<int>(ordinal);
         return {};
       }},
      {"timeout_seconds",
       [](const json& v, Settings& s) -> std::string {
         if (!v.is_number()) {
           return "expected a number of seconds";
         }
         s.options.timeout_seconds = v.get<double>();
         return {};
       }},
      {"executable", [](const json& v, Settings& s) { return read_string(v, s.options.executable); }},
      {"environment", [](const json& v, Settings& s) { return read_environment(v, s.options.environment); }},
  };
  return table;
}

// Catalog names, each once (a name may be both a library and a header set).
std::string known_components() {
  std::vector<std::string_view> names;
  std::string out;
  for (const auto& spec : probes::catalog()) {
    if (std::find(names.begin(), names.end(), spec.name) == names.end()) {
      names.push_back(spec.name);
      out.append(out.empty() ? "" : ", ").append(spec.name);
    }
  }
  return out;
}

} // namespace

std::optional<std::string> validate(const Options& options) {
  for (const auto& name : options.components) {
    if (probes::components_named(name).empty()) {
      return "unknown component \"" + name + "\" in components (known: " + known_components() + ")";
    }
  }
  for (const auto& key : options.self_tests) {
    const auto& tests = selftest::test_catalog();
    if (std::none_of(tests.begin(), tests.end(), [&key](const auto& test) { return test.key == key; })) {
      std::string known;
      for (const auto& test : tests) {
        known.append(known.empty() ? "" : ", ").append(test.key);
      }
      return "unknown self-test \"" + key + "\" in self_tests (known: " + known + ")";
    }
  }
  if (!std::isfinite(options.timeout_seconds) || options.timeout_seconds <= 0 ||
      options.timeout_seconds > k_max_timeout_seconds) {
    return "timeout_seconds must be more than 0 and at most 3600";
  }
  if ((!options.root.empty() || !options.image.empty()) && !options.python.empty()) {
    return std::string("python cannot be combined with ") + (options.root.empty() ? "image" : "root") +
           ": the interpreter would run on this machine, not in the root (the root's Python environments "
           "are found from its files)";
  }
  if (!options.assume_driver.empty()) {
    const auto& v = options.assume_driver;
    const bool digits_and_dots =
        std::all_of(v.begin(), v.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; });
    if (!digits_and_dots || v.front() == '.' || v.back() == '.' || v.find("..") != std::string::npos ||
        std::count(v.begin(), v.end(), '.') > 3) {
      return "assume_driver must be a driver version such as 570.86.10, not \"" + v + "\"";
    }
  }
  for (std::size_t start = 0; start < options.assume_gpu.size();) {
    const auto end = std::min(options.assume_gpu.find(',', start), options.assume_gpu.size());
    const auto part = options.assume_gpu.substr(start, end - start);
    const bool sm = part.size() >= 4 && part.rfind("sm_", 0) == 0 &&
                    std::all_of(part.begin() + 3, part.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!sm && (part.rfind("brand=", 0) != 0 || part.size() == 6)) {
      return "assume_gpu takes sm_NN and brand=NAME, comma-separated, not \"" + part + "\"";
    }
    start = end + 1;
  }
  if (!options.root.empty() && !options.image.empty()) {
    return "root and image name two systems: give one";
  }
  if (options.device && *options.device < 0) {
    return "device must be a CUDA ordinal (>= 0)";
  }
  for (const auto& [name, value] : options.environment) {
    if (name.empty() || name.find('=') != std::string::npos) {
      return "environment: \"" + name + "\" is not a variable name";
    }
  }
  return std::nullopt;
}

Expected<Settings> apply_json(const Settings& base, std::string_view text) {
  auto document =
      bounded_json::parse(text, {.max_depth = k_max_options_depth, .max_bytes = k_max_options_bytes});
  if (const auto* failure = std::get_if<bounded_json::Failure>(&document)) {
    using bounded_json::Problem;
    switch (failure->problem) {
    case Problem::empty: return Error{"options are not valid JSON: no text"};
    case Problem::syntax:
    case Problem::truncated: return Error{"options are not valid JSON: " + failure->detail};
    case Problem::too_deep:
    case Problem::too_large:
    case Problem::number_out_of_range: break;
    }
    return Error{"options JSON " + failure->message()};
  }
  const json parsed = std::move(std::get<json>(document));
  if (!parsed.is_object()) {
    return Error{"options must be a JSON object, not " + std::string(parsed.type_name())};
  }
  Settings next = base;
  for (const auto& [key, value] : parsed.items()) {
    const auto rule = keys().find(key);
    if (rule == keys().end()) {
      std::string known;
      for (const auto& [name, apply] : keys()) {
        known.append(known.empty() ? "" : ", ").append(name);
      }
      return Error{"unknown option \"" + key + "\" (known: " + known + ")"};
    }
    if (auto problem = rule->second(value, next); !problem.empty()) {
      return Error{"option \"" + key + "\": " + problem};
    }
  }
  if (auto problem = validate(next.options)) {
    return Error{*problem};
  }
  return next;
}

json to_json(const Settings& settings) {
  const auto& options = settings.options;
  json environment = json::object();
  for (const auto& [name, value] : options.environment) {
    environment[name] = value ? json(*value) : json(nullptr);
  }
  return {{"components", options.components},
          {"python", options.python},
          {"ld_so_cache", options.ld_so_cache},
          {"root", options.root},
          {"image", options.image},
          {"assume_driver", options.assume_driver},
          {"assume_gpu", options.assume_gpu},
          {"inherit_environment", options.inherit_environment},
          {"fail_on", options.fail_on_warning ? "warning" : "error"},
          {"verify", settings.verify},
          {"self_test", settings.self_test},
          {"self_test_level", options.self_test_level == SelfTestLevel::full ? "full" : "quick"},
          {"self_tests", options.self_tests},
          {"device", options.device ? json(*options.device) : json(nullptr)},
          {"context", !options.context                     ? json(nullptr)
                      : *options.context == Context::fleet ? json("fleet")
                      : *options.context == Context::ci    ? json("ci")
                                                           : json("interactive")},
          {"exclusive", options.exclusive},
          {"load_check", options.load_check},
          {"verify_record_hashes", options.verify_record_hashes},
          {"cache", options.cache == Cache::off          ? "off"
                    : options.cache == Cache::read_write ? "read_write"
                                                         : "read"},
          {"timeout_seconds", options.timeout_seconds},
          {"executable", options.executable},
          {"environment", environment}};
}

} // namespace cudadiag::api
