#include "findings/environment_rules.hpp"

namespace cudadiag::findings {

std::string_view to_string(VariableClass kind) {
  switch (kind) {
  case VariableClass::injection: return "injection";
  case VariableClass::debug: return "debug";
  case VariableClass::performance: return "performance";
  case VariableClass::visibility: return "visibility";
  }
  return "debug";
}

const std::vector<BehaviourVariable>& behaviour_variables() {
  // NVIDIA's CUDA Programming Guide, "CUDA Environment Variables"
  // (docs.nvidia.com/cuda/cuda-c-programming-guide/#cuda-environment-variables); NCCL_DEBUG from
  // NCCL's "Environment Variables" (docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html).
  // clang-format off
  static const std::vector<BehaviourVariable> table = {
    {"CUDA_INJECTION64_PATH",                   VariableClass::injection,   "loads the named library into every CUDA process at cuInit (how profilers and tracing tools attach); its code runs inside the process"},
    {"CUDA_LAUNCH_BLOCKING",                    VariableClass::debug,       "1 makes every kernel launch synchronous: errors surface at the failing call, and everything runs slower"},
    {"CUDA_ENABLE_COREDUMP_ON_EXCEPTION",       VariableClass::debug,       "1 writes a GPU core dump when a kernel faults (slow, and as large as the GPU's memory)"},
    {"CUDA_ENABLE_CPU_COREDUMP_ON_EXCEPTION",   VariableClass::debug,       "with GPU core dumps, also dumps the host process"},
    {"CUDA_ENABLE_LIGHTWEIGHT_COREDUMP",        VariableClass::debug,       "1 writes GPU core dumps without memory contents"},
    {"CUDA_ENABLE_USER_TRIGGERED_COREDUMP",     VariableClass::debug,       "1 lets a write to a pipe trigger a GPU core dump of the running process"},
    {"CUDA_COREDUMP_FILE",                      VariableClass::debug,       "where GPU core dumps are written"},
    {"CUDA_DEVICE_WAITS_ON_EXCEPTION",          VariableClass::debug,       "1 makes a faulting kernel wait for a debugger instead of returning the error"},
    {"CUDA_FORCE_PTX_JIT",                      VariableClass::debug,       "1 ignores the SASS in every fatbinary and JIT-compiles its PTX (code without PTX fails)"},
    {"CUDA_DISABLE_PTX_JIT",                    VariableClass::debug,       "1 refuses to JIT-compile PTX: code without SASS for this GPU fails"},
    {"NCCL_DEBUG",                              VariableClass::debug,       "NCCL's logging level (INFO and TRACE log every collective's setup to stdout)"},
    {"CUDA_AUTO_BOOST",                         VariableClass::performance, "overrides the GPU's auto-boost clock policy for this process"},
    {"CUDA_DEVICE_MAX_CONNECTIONS",             VariableClass::performance, "the number of hardware work queues per device (1 to 32, default 8): fewer serialise independent streams"},
    {"CUDA_DEVICE_MAX_COPY_CONNECTIONS",        VariableClass::performance, "the number of copy-engine work queues per device"},
    {"CUDA_MODULE_LOADING",                     VariableClass::performance, "LAZY (the default since CUDA 12.2) or EAGER: when kernels are loaded onto the GPU"},
    {"CUDA_MODULE_DATA_LOADING",                VariableClass::performance, "LAZY or EAGER: when a module's data is loaded"},
    {"CUDA_CACHE_DISABLE",                      VariableClass::performance, "1 disables the JIT cache: every PTX kernel is compiled again in every process"},
    {"CUDA_CACHE_PATH",                         VariableClass::performance, "where the JIT cache lives (default ~/.nv/ComputeCache)"},
    {"CUDA_CACHE_MAXSIZE",                      VariableClass::performance, "the JIT cache's size in bytes"},
    {"CUDA_SCALE_LAUNCH_QUEUES",                VariableClass::performance, "scales the size of the launch queues"},
    {"CUDA_MPS_ACTIVE_THREAD_PERCENTAGE",       VariableClass::performance, "under MPS, the share of the GPU's SMs this client may use"},
    {"CUDA_MPS_PINNED_DEVICE_MEM_LIMIT",        VariableClass::performance, "under MPS, the device memory this client may allocate"},
    {"CUDA_VISIBLE_DEVICES",                    VariableClass::visibility,  "the GPUs (indices, UUIDs or MIG instances) this process sees, in this order; the others are hidden"},
    {"CUDA_DEVICE_ORDER",                       VariableClass::visibility,  "FASTEST_FIRST (the default) or PCI_BUS_ID: how CUDA numbers the GPUs"},
    {"CUDA_MPS_PIPE_DIRECTORY",                 VariableClass::visibility,  "the MPS control daemon's directory: a client there runs its work through MPS"},
  };
  // clang-format on
  return table;
}

std::vector<const BehaviourVariable*> set_behaviour_variables(const Environment& env) {
  std::vector<const BehaviourVariable*> out;
  for (const auto& row : behaviour_variables()) {
    if (env.get(row.name)) {
      out.push_back(&row);
    }
  }
  return out;
}

std::vector<Finding> evaluate_environment(const Environment& env, RunContext context) {
  std::vector<Finding> out;
  const auto severity = context == RunContext::interactive ? Severity::info : Severity::warning;
  for (const auto* row : set_behaviour_variables(env)) {
    if (row->kind != VariableClass::injection && row->kind != VariableClass::debug) {
      continue;
    }
    const auto value = env.get(row->name).value_or("");
    auto finding =
        make_finding("env.behaviour_variable",
                     std::string(row->name) + "=" + value + " is set (" + std::string(to_string(row->kind)) +
                         "): it " + std::string(row->effect) + ", in every CUDA process that inherits it",
                     {},
                     {{"variable", std::string(row->name)},
                      {"value", value},
                      {"class", std::string(to_string(row->kind))},
                      {"context", std::string(run_context_name(context))}},
                     severity);
    finding.remedy = "Unset " + std::string(row->name) +
                     " unless this run is meant to have it (it is set by your shell profile, job script, "
                     "container image or the node's environment): `unset " +
                     std::string(row->name) + "`.";
    out.push_back(std::move(finding));
  }
  return out;
}

} // namespace cudadiag::findings
