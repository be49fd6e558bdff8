#pragma once
// CI policies: requirements from --require (repeatable) and from a policy file (--policy FILE),
// in JSON or in a TOML subset (toml_subset.hpp), with the same statements:
//
//   JSON: {"require": ["nvrtc>=12.4", "cccl", "driver>=580"], "fail_on": "warning"}
//   TOML: require = ["nvrtc>=12.4", "cccl", "driver>=580"]
//         fail_on = "warning"
//
// "require" is an array of specs (requirement.hpp) or a single spec string; "fail_on" is "error" or
// "warning"; "expect_gpus" the number of GPUs the node must show (1 to 4096), as --expect-gpus.
// Unknown keys are errors (a misspelt key must not silently weaken a gate).

#include "core/expected.hpp"
#include "policy/requirement.hpp"
#include "report/report.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace cudadiag::policy {

struct Policy {
  std::vector<Requirement> requirements;
  std::optional<report::FailOn> fail_on; // from a policy file; nullopt = not stated
  // expect_gpus = N: the node must show N GPUs at every layer (gpu.missing); nullopt = not stated.
  std::optional<std::size_t> expect_gpus;
  std::vector<std::string> sources; // where the requirements came from: "--require", file paths

  [[nodiscard]] bool empty() const { return requirements.empty() && !fail_on && !expect_gpus; }
};

// Parses a policy document already read as JSON (from JSON or TOML). `origin` names it in errors.
Expected<Policy> policy_from_document(const nlohmann::json& document, const std::string& origin);

// Reads a policy file: TOML when the name ends in .toml, JSON when it ends in .json, otherwise
// JSON if the first non-blank character is '{', else TOML. Errors start with "policy file PATH: ".
Expected<Policy> load_policy_file(const std::string& path);

// load_policy_file for the text already read from `path` (which picks the format and names errors).
Expected<Policy> policy_from_text(const std::string& path, std::string_view text);

// Adds the --require specs to `policy` (parsing each; the first bad one is the error).
Expected<void> add_requirements(Policy& policy, const std::vector<std::string>& specs);

// The stricter of two --fail-on levels.
report::FailOn stricter(report::FailOn a, std::optional<report::FailOn> b);

} // namespace cudadiag::policy
