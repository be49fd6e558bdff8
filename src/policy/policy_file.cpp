#include "policy/policy_file.hpp"

#include "core/bounded_json.hpp"
#include "core/filesystem.hpp"
#include "policy/toml_subset.hpp"

#include <cctype>

namespace cudadiag::policy {
namespace {

constexpr std::size_t k_max_policy_bytes = 1U << 20U;
// A policy nests two levels ({"require": [...]}); anything much deeper is refused at parse time.
constexpr std::size_t k_max_policy_depth = 16;

bool is_toml(const std::string& path, std::string_view text) {
  if (path.ends_with(".toml")) {
    return true;
  }
  if (path.ends_with(".json")) {
    return false;
  }
  for (const char c : text) {
    if (std::isspace(static_cast<unsigned char>(c)) == 0) {
      return c != '{';
    }
  }
  return true;
}

} // namespace

Expected<Policy> policy_from_document(const nlohmann::json& document, const std::string& origin) {
  if (!document.is_object()) {
    return Error{origin + ": expected an object with \"require\", \"fail_on\" and/or \"expect_gpus\""};
  }
  Policy policy;
  policy.sources.push_back(origin);
  for (const auto& [key, value] : document.items()) {
    if (key == "require") {
      const auto specs = value.is_string() ? nlohmann::json::array({value}) : value;
      if (!specs.is_array()) {
        return Error{origin + ": \"require\" must be a list of requirement strings"};
      }
      for (const auto& spec : specs) {
        if (!spec.is_string()) {
          return Error{origin + ": \"require\" holds " + spec.dump() + ", not a requirement string"};
        }
        auto requirement = parse_requirement(spec.get<std::string>());
        if (!requirement) {
          return Error{origin + ": " + requirement.error().message};
        }
        policy.requirements.push_back(std::move(*requirement));
      }
    } else if (key == "fail_on") {
      if (value != "error" && value != "warning") {
        return Error{origin + ": \"fail_on\" must be \"error\" or \"warning\", not " + value.dump()};
      }
      policy.fail_on = value == "warning" ? report::FailOn::warning : report::FailOn::error;
    } else if (key == "expect_gpus") {
      if (!value.is_number_integer() || value.get<long long>() < 1 || value.get<long long>() > 4096) {
        return Error{origin + ": \"expect_gpus\" must be an integer from 1 to 4096, not " + value.dump()};
      }
      policy.expect_gpus = value.get<std::size_t>();
    } else {
      return Error{origin + ": unknown key \"" + std::string(key) +
                   "\" (known: require, fail_on, expect_gpus)"};
    }
  }
  return policy;
}

Expected<Policy> load_policy_file(const std::string& path) {
  const std::string origin = "policy file " + path;
  auto text = fs::read_file_prefix(path, k_max_policy_bytes + 1);
  if (!text) {
    return Error{origin + ": " + text.error().message};
  }
  return policy_from_text(path, *text);
}

Expected<Policy> policy_from_text(const std::string& path, std::string_view text) {
  const std::string origin = "policy file " + path;
  if (text.size() > k_max_policy_bytes) {
    return Error{origin + ": larger than " + std::to_string(k_max_policy_bytes >> 20U) +
                 " MiB: not a policy"};
  }
  nlohmann::json document;
  if (is_toml(path, text)) {
    auto parsed = parse_toml_subset(text);
    if (!parsed) {
      return Error{origin + ": " + parsed.error().message};
    }
    document = std::move(*parsed);
  } else {
    auto parsed =
        bounded_json::parse(text, {.max_depth = k_max_policy_depth, .max_bytes = k_max_policy_bytes});
    if (const auto* failure = std::get_if<bounded_json::Failure>(&parsed)) {
      return Error{origin + ": " +
                   (failure->problem == bounded_json::Problem::syntax ||
                            failure->problem == bounded_json::Problem::truncated ||
                            failure->problem == bounded_json::Problem::empty
                        ? "not valid JSON (byte " + std::to_string(failure->byte) + ")"
                        : "not a valid policy: it " + failure->message())};
    }
    document = std::move(std::get<nlohmann::json>(parsed));
  }
  return policy_from_document(document, origin);
}

Expected<void> add_requirements(Policy& policy, const std::vector<std::string>& specs) {
  for (const auto& spec : specs) {
    Requirement requirement;
    CUDADIAG_TRY_ASSIGN(requirement, parse_requirement(spec));
    policy.requirements.push_back(std::move(requirement));
  }
  if (!specs.empty()) {
    policy.sources.emplace_back("--require");
  }
  return {};
}

report::FailOn stricter(report::FailOn a, std::optional<report::FailOn> b) {
  return a == report::FailOn::warning || b == report::FailOn::warning ? report::FailOn::warning
                                                                      : report::FailOn::error;
}

} // namespace cudadiag::policy
