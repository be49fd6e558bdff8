#pragma once
// The CUDA environment variables that change how CUDA behaves in every process that inherits them:
// one row per variable (its name, what it does, its class), from NVIDIA's CUDA Programming Guide,
// "CUDA Environment Variables" (docs.nvidia.com/cuda/cuda-c-programming-guide/#cuda-environment-variables),
// and NCCL's environment variables page for NCCL_DEBUG. The report lists the set ones
// (environment.behaviour_variables); the injection and debugging ones are also a finding,
// env.behaviour_variable: a warning in the ci and fleet contexts (a CI job or a node's check that
// inherits them measures or ships something else than it thinks), info at a terminal. Performance
// and visibility variables are listed, not raised: setting them is ordinary.

#include "core/environment.hpp"
#include "core/run_context.hpp"
#include "findings/findings.hpp"

#include <string_view>
#include <vector>

namespace cudadiag::findings {

enum class VariableClass {
  injection,   // loads code into every CUDA process
  debug,       // a debugging aid that changes behaviour or cost (synchronous launches, core dumps)
  performance, // changes speed or resource use, not results
  visibility,  // changes which GPUs a process sees or how they are numbered
};
std::string_view to_string(VariableClass kind); // "injection", "debug", "performance", "visibility"

struct BehaviourVariable {
  std::string_view name;
  VariableClass kind;
  std::string_view effect; // what it does, one clause
};

// Every variable, one row each, in the order the report lists them.
const std::vector<BehaviourVariable>& behaviour_variables();

// The rows of the variables `env` sets (an empty value counts as set: CUDA reads it).
std::vector<const BehaviourVariable*> set_behaviour_variables(const Environment& env);

// env.behaviour_variable for each injection or debugging variable `env` sets.
std::vector<Finding> evaluate_environment(const Environment& env, RunContext context);

} // namespace cudadiag::findings
