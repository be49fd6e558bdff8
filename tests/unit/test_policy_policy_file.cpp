// Policy files in JSON and TOML, and --require specs, into one Policy.
#include "policy/policy_file.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

using namespace cudadiag::policy;
using cudadiag::report::FailOn;

TEST_CASE("policy file: JSON and TOML say the same thing") {
  cudadiag::testing::TempTree tree;
  const auto json_policy = load_policy_file(tree.write(
      "gate.json", R"({"require": ["nvrtc>=12.4", "cccl", "driver>=580"], "fail_on": "warning"})"));
  const auto toml_policy = load_policy_file(tree.write(
      "gate.toml", "require = [\"nvrtc>=12.4\", \"cccl\", \"driver>=580\"]\nfail_on = \"warning\"\n"));
  // No extension: sniffed from the content.
  const auto sniffed = load_policy_file(tree.write("gate", "  {\"require\": \"no-errors\"}"));
  REQUIRE(json_policy);
  REQUIRE(toml_policy);
  REQUIRE(sniffed);
  for (const auto* policy : {&*json_policy, &*toml_policy}) {
    REQUIRE(policy->requirements.size() == 3);
    CHECK(policy->requirements[0].text == "nvrtc>=12.4");
    CHECK(policy->requirements[2].subject == Subject::driver);
    CHECK(policy->fail_on == FailOn::warning);
  }
  CHECK(sniffed->requirements.size() == 1);
  CHECK_FALSE(sniffed->fail_on);
}

TEST_CASE("policy file: errors name the file and the problem") {
  cudadiag::testing::TempTree tree;
  const std::pair<std::string, std::string> cases[] = {
      {tree.write("a.json", R"({"requires": ["cccl"]})"), "unknown key \"requires\""},
      {tree.write("b.json", R"({"require": ["nvrtc>>1"]})"), "bad requirement 'nvrtc>>1'"},
      {tree.write("c.json", R"({"require": [12]})"), "holds 12, not a requirement string"},
      {tree.write("d.json", R"({"fail_on": "info"})"), "\"fail_on\" must be \"error\" or \"warning\""},
      {tree.write("e.json", R"({"require": )"), "not valid JSON"},
      {tree.write("f.toml", "[gate]\n"), "line 1: tables"},
      {tree.path("missing.toml"), "No such file"},
  };
  for (const auto& [path, expected] : cases) {
    const auto policy = load_policy_file(path);
    REQUIRE_FALSE_MESSAGE(policy, path);
    CHECK_MESSAGE(policy.error().message.find("policy file " + path) == 0, policy.error().message);
    CHECK_MESSAGE(policy.error().message.find(expected) != std::string::npos, policy.error().message);
  }
}

TEST_CASE("policy: --require specs are added, the stricter fail-on level wins") {
  Policy policy;
  REQUIRE(add_requirements(policy, {"cccl", "nvrtc>=12.4"}));
  CHECK(policy.requirements.size() == 2);
  CHECK(policy.sources == std::vector<std::string>{"--require"});
  const auto added = add_requirements(policy, {"bogus>=1"});
  REQUIRE_FALSE(added);
  CHECK(added.error().message.find("unknown component 'bogus'") != std::string::npos);
  CHECK(stricter(FailOn::error, std::nullopt) == FailOn::error);
  CHECK(stricter(FailOn::error, FailOn::warning) == FailOn::warning);
  CHECK(stricter(FailOn::warning, FailOn::error) == FailOn::warning);
}

// Hostile policy files are input errors (exit 2 in the CLI), never an exception.
TEST_CASE("policy file: deep nesting, numbers out of range and bad UTF-8 are errors naming the file") {
  cudadiag::testing::TempTree tree;
  const std::pair<std::string, std::string> cases[] = {
      {tree.write("deep.json", "{\"require\": " + std::string(200000, '[') + std::string(200000, ']') + "}"),
       "nested deeper than 16 levels"},
      {tree.write("huge.json", R"({"require": ["nvrtc"], "fail_on": 1e400})"), "number out of range"},
      {tree.write("deep.toml", "require = " + std::string(200000, '[') + std::string(200000, ']')),
       "arrays nested deeper"},
      {tree.write("utf8.toml", "require = [\"cccl\xfe\"]\n"), "invalid UTF-8"},
      {tree.write("big.json", std::string((1U << 20U) + 10, ' ')), "larger than 1 MiB"},
  };
  for (const auto& [path, expected] : cases) {
    const auto policy = load_policy_file(path);
    REQUIRE_FALSE_MESSAGE(policy, path);
    CHECK_MESSAGE(policy.error().message.find("policy file " + path) == 0, policy.error().message);
    CHECK_MESSAGE(policy.error().message.find(expected) != std::string::npos, policy.error().message);
  }
}
