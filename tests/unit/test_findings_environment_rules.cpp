// The CUDA variables that change behaviour (findings/environment_rules): one row each, the set
// ones listed, injection and debugging ones raised as env.behaviour_variable — a warning in the ci
// and fleet contexts, info at a terminal — and nothing on a machine that sets none.
#include "findings/environment_rules.hpp"

#include <doctest/doctest.h>

#include <set>

using cudadiag::Environment;
using cudadiag::RunContext;
using cudadiag::findings::Repair;
using cudadiag::findings::Severity;
using cudadiag::findings::VariableClass;

TEST_CASE("environment rules: one row per variable, the issue's variables with their classes") {
  std::set<std::string_view> names;
  for (const auto& row : cudadiag::findings::behaviour_variables()) {
    CAPTURE(std::string(row.name));
    CHECK(names.insert(row.name).second);
    CHECK_FALSE(row.effect.empty());
  }
  const auto kind_of = [](std::string_view name) {
    for (const auto& row : cudadiag::findings::behaviour_variables()) {
      if (row.name == name) {
        return std::optional(row.kind);
      }
    }
    return std::optional<VariableClass>();
  };
  CHECK(kind_of("CUDA_INJECTION64_PATH") == VariableClass::injection);
  CHECK(kind_of("CUDA_LAUNCH_BLOCKING") == VariableClass::debug);
  CHECK(kind_of("CUDA_ENABLE_COREDUMP_ON_EXCEPTION") == VariableClass::debug);
  CHECK(kind_of("CUDA_FORCE_PTX_JIT") == VariableClass::debug);
  CHECK(kind_of("CUDA_DISABLE_PTX_JIT") == VariableClass::debug);
  CHECK(kind_of("NCCL_DEBUG") == VariableClass::debug);
  CHECK(kind_of("CUDA_AUTO_BOOST") == VariableClass::performance);
  CHECK(kind_of("CUDA_DEVICE_MAX_CONNECTIONS") == VariableClass::performance);
  CHECK(kind_of("CUDA_MODULE_LOADING") == VariableClass::performance);
  CHECK(kind_of("CUDA_CACHE_DISABLE") == VariableClass::performance);
  CHECK(kind_of("CUDA_VISIBLE_DEVICES") == VariableClass::visibility);
  CHECK(kind_of("CUDA_DEVICE_ORDER") == VariableClass::visibility);
}

TEST_CASE(
    "environment rules: none set, nothing - injection and debug raised by context - others listed only") {
  Environment env;
  env.set("PATH", "/usr/bin");
  CHECK(cudadiag::findings::set_behaviour_variables(env).empty());
  CHECK(cudadiag::findings::evaluate_environment(env, RunContext::fleet).empty());

  env.set("CUDA_INJECTION64_PATH", "/opt/tracer/libinject.so");
  env.set("CUDA_LAUNCH_BLOCKING", "1");
  env.set("CUDA_DEVICE_MAX_CONNECTIONS", "1");
  env.set("CUDA_VISIBLE_DEVICES", "");
  CHECK(cudadiag::findings::set_behaviour_variables(env).size() == 4); // an empty value counts

  for (const auto context : {RunContext::interactive, RunContext::ci, RunContext::fleet}) {
    CAPTURE(cudadiag::run_context_name(context));
    const auto found = cudadiag::findings::evaluate_environment(env, context);
    REQUIRE(found.size() == 2);
    const auto expected = context == RunContext::interactive ? Severity::info : Severity::warning;
    for (const auto& finding : found) {
      CHECK(finding.id == "env.behaviour_variable");
      CHECK(finding.severity == expected);
      CHECK(finding.repair == Repair::fix_environment);
      CHECK(finding.evidence.at("context") == std::string(cudadiag::run_context_name(context)));
    }
    CHECK(found[0].evidence.at("variable") == "CUDA_INJECTION64_PATH");
    CHECK(found[0].evidence.at("class") == "injection");
    CHECK(found[0].message.find("/opt/tracer/libinject.so") != std::string::npos);
    CHECK(found[1].evidence.at("variable") == "CUDA_LAUNCH_BLOCKING");
    CHECK(found[1].remedy.find("unset CUDA_LAUNCH_BLOCKING") != std::string::npos);
  }
}
