#include "core/run_context.hpp"

#include <algorithm>
#include <cctype>
#include <string>

namespace cudadiag {

std::string_view run_context_name(RunContext context) {
  switch (context) {
  case RunContext::ci: return "ci";
  case RunContext::fleet: return "fleet";
  case RunContext::interactive: break;
  }
  return "interactive";
}

std::optional<RunContext> parse_run_context(std::string_view text) {
  for (const auto context : {RunContext::interactive, RunContext::ci, RunContext::fleet}) {
    if (text == run_context_name(context)) {
      return context;
    }
  }
  return std::nullopt;
}

RunContext detect_run_context(const Environment& env) {
  if (env.non_empty("SLURM_JOB_ID") || env.non_empty("KUBERNETES_SERVICE_HOST")) {
    return RunContext::fleet;
  }
  if (const auto ci = env.non_empty("CI")) {
    std::string value = *ci;
    std::transform(value.begin(), value.end(), value.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (value == "true" || value == "1") {
      return RunContext::ci;
    }
  }
  return RunContext::interactive;
}

} // namespace cudadiag
