#include "python/python_environments.hpp"

#include "python/conda.hpp"
#include "python/interpreter.hpp"
#include "python/interpreter_probe.hpp"
#include "python/path_search.hpp"
#include "python/search_context.hpp"
#include "python/venv.hpp"

#include <optional>
#include <utility>

namespace cudadiag::python {
namespace {

std::optional<PythonEnvironment> from_system(const Context& ctx, const std::string& exe) {
  if (!fs::is_executable_file(exe)) {
    ctx.note("system interpreter " + exe + " does not exist or is not executable");
    return std::nullopt;
  }
  return interpreter_environment(ctx, "system python3", exe);
}

// Adds `pe` unless an environment with the same prefix (by realpath) is already listed.
void add_unique(const Context& ctx, std::vector<PythonEnvironment>& list,
                std::optional<PythonEnvironment> pe) {
  if (!pe) {
    return;
  }
  const auto key = real_or_same(pe->prefix);
  for (const auto& existing : list) {
    if (real_or_same(existing.prefix) == key) {
      ctx.note(pe->label + " (" + pe->prefix + ") is the same environment as " + existing.label +
               "; listed once");
      return;
    }
  }
  ctx.note(pe->label + ": accepted " + pe->prefix + (list.empty() ? " (primary)" : ""));
  list.push_back(std::move(*pe));
}

} // namespace

PythonDiscovery discover_python_environments(const Environment& env, const PythonSearchOptions& options) {
  PythonDiscovery out;
  Context ctx{env, out.trace, env.non_empty("PYTHONNOUSERSITE").has_value()};
  if (ctx.no_user_site) {
    ctx.note("PYTHONNOUSERSITE is set: the user site is disabled");
  }
  auto virtual_env = from_virtual_env(ctx);
  auto conda = from_conda_prefix(ctx);
  auto python3 = python3_on_path(ctx);
  // `python3` runs what PATH finds, whatever $VIRTUAL_ENV says: that environment leads.
  if (python3) {
    const auto runs = real_or_same(python3->prefix);
    if (virtual_env && real_or_same(virtual_env->prefix) != runs) {
      out.virtual_env_inactive =
          InactiveVirtualEnv{virtual_env->prefix, python3->interpreter, python3->prefix, python3->how};
      ctx.note("VIRTUAL_ENV=" + virtual_env->prefix + " is not the environment python3 runs (" +
               python3->prefix + "): Python ignores VIRTUAL_ENV; python3 on PATH leads");
    }
    for (auto* source : {&virtual_env, &conda}) {
      if (*source && real_or_same((*source)->prefix) == runs) {
        add_unique(ctx, out.environments, std::move(*source));
        source->reset();
      }
    }
    add_unique(ctx, out.environments, std::move(python3));
  }
  add_unique(ctx, out.environments, std::move(virtual_env));
  add_unique(ctx, out.environments, std::move(conda));
  for (const auto& exe : options.system_interpreters) {
    add_unique(ctx, out.environments, from_system(ctx, exe));
  }
  if (out.environments.empty()) {
    ctx.note("no Python environment found");
  } else {
    out.environments.front().primary = true;
  }
  return out;
}

Expected<PythonDiscovery> discover_python_environments_with(const Environment& env,
                                                            const std::string& python_exe,
                                                            std::chrono::milliseconds timeout,
                                                            const PythonSearchOptions& options) {
  PythonDiscovery out;
  Context ctx{env, out.trace, env.non_empty("PYTHONNOUSERSITE").has_value()};
  auto exe = resolve_interpreter(ctx, python_exe);
  if (!exe) {
    return exe.error();
  }
  auto asked = ask_interpreter(ctx, *exe, timeout);
  if (!asked) {
    return asked.error();
  }
  auto pe = std::move(*asked);

  auto snapshot = discover_python_environments(env, options);
  out.environments.push_back(std::move(pe));
  const auto key = real_or_same(out.environments.front().prefix);
  for (auto& other : snapshot.environments) {
    if (real_or_same(other.prefix) == key) {
      ctx.note(other.label + " (" + other.prefix + ") is the same environment as --python; listed once");
      continue;
    }
    other.primary = false;
    out.environments.push_back(std::move(other));
  }
  out.trace.insert(out.trace.end(), snapshot.trace.begin(), snapshot.trace.end());
  return out;
}

} // namespace cudadiag::python
