#include "findings/fix_plan.hpp"

#include <algorithm>

namespace cudadiag::findings {

std::string_view to_string(ActionKind kind) {
  switch (kind) {
  case ActionKind::set_variable: return "set_variable";
  case ActionKind::unset_variable: return "unset_variable";
  case ActionKind::remove_path_entry: return "remove_path_entry";
  case ActionKind::prepend_path_entry: return "prepend_path_entry";
  case ActionKind::pip_install: return "pip_install";
  case ActionKind::pip_uninstall: return "pip_uninstall";
  case ActionKind::conda_install: return "conda_install";
  case ActionKind::add_ld_conf_line: return "add_ld_conf_line";
  case ActionKind::remove_ld_conf_line: return "remove_ld_conf_line";
  case ActionKind::install_driver: return "install_driver";
  }
  return "set_variable";
}

std::string_view to_string(Runner runner) {
  return runner == Runner::root ? "root" : "user";
}

std::string_view to_string(Scope scope) {
  switch (scope) {
  case Scope::environment: return "environment";
  case Scope::user: return "user";
  case Scope::host: return "host";
  }
  return "host";
}

namespace {

Action make_action(ActionKind kind, Runner runner, Scope scope) {
  Action action;
  action.kind = kind;
  action.runner = runner;
  action.scope = scope;
  return action;
}

// A change of one of the user's environment variables: set it, or add or remove one of its entries.
Action variable_action(ActionKind kind, std::string variable, std::string value) {
  auto action = make_action(kind, Runner::user, Scope::user);
  action.variable = std::move(variable);
  action.value = std::move(value);
  return action;
}

// An interpreter of the system (/usr/bin/python3): its site-packages belong to the host.
bool system_interpreter(const std::string& python) {
  return python.rfind("/usr/", 0) == 0;
}

} // namespace

Action set_variable(std::string variable, std::string value) {
  return variable_action(ActionKind::set_variable, std::move(variable), std::move(value));
}

Action unset_variable(std::string variable) {
  auto action = make_action(ActionKind::unset_variable, Runner::user, Scope::user);
  action.variable = std::move(variable);
  return action;
}

Action remove_path_entry(std::string variable, std::string entry) {
  return variable_action(ActionKind::remove_path_entry, std::move(variable), std::move(entry));
}

Action prepend_path_entry(std::string variable, std::string entry) {
  return variable_action(ActionKind::prepend_path_entry, std::move(variable), std::move(entry));
}

Action pip_install(std::string python, std::string spec) {
  const bool system = system_interpreter(python);
  auto action = make_action(ActionKind::pip_install, system ? Runner::root : Runner::user,
                            system ? Scope::host : Scope::environment);
  action.target = std::move(python);
  action.spec = std::move(spec);
  return action;
}

Action pip_uninstall(std::string python, std::string distribution) {
  auto action = pip_install(std::move(python), std::move(distribution));
  action.kind = ActionKind::pip_uninstall;
  return action;
}

Action conda_install(std::string prefix, std::string spec) {
  auto action = make_action(ActionKind::conda_install, Runner::user, Scope::environment);
  action.target = std::move(prefix);
  action.spec = std::move(spec);
  return action;
}

Action add_ld_conf_line(std::string file, std::string directory) {
  auto action = make_action(ActionKind::add_ld_conf_line, Runner::root, Scope::host);
  action.target = std::move(file);
  action.value = std::move(directory);
  return action;
}

Action remove_ld_conf_line(std::string file, std::string directory) {
  auto action = add_ld_conf_line(std::move(file), std::move(directory));
  action.kind = ActionKind::remove_ld_conf_line;
  return action;
}

Action install_driver(std::string minimum_version) {
  auto action = make_action(ActionKind::install_driver, Runner::root, Scope::host);
  action.spec = std::move(minimum_version);
  return action;
}

bool simulable(const Action& action) {
  return action.kind != ActionKind::install_driver;
}

std::string shell_quote(std::string_view text) {
  std::string out = "'";
  for (const char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::string shell_command(const Action& action) {
  const auto& variable = action.variable;
  switch (action.kind) {
  case ActionKind::set_variable: return "export " + variable + "=" + shell_quote(action.value);
  case ActionKind::unset_variable: return "unset " + variable;
  case ActionKind::remove_path_entry:
    return "export " + variable + "=\"$(printf '%s' \"$" + variable + "\" | tr ':' '\\n' | grep -vxF -- " +
           shell_quote(action.value) + " | paste -sd: -)\"";
  case ActionKind::prepend_path_entry:
    return "export " + variable + "=" + shell_quote(action.value) + "\"${" + variable + ":+:$" + variable +
           "}\"";
  case ActionKind::pip_install:
    return shell_quote(action.target) + " -m pip install " + shell_quote(action.spec);
  case ActionKind::pip_uninstall:
    return shell_quote(action.target) + " -m pip uninstall -y " + shell_quote(action.spec);
  case ActionKind::conda_install:
    return "conda install -y -p " + shell_quote(action.target) + " " + shell_quote(action.spec);
  case ActionKind::add_ld_conf_line:
    return "printf '%s\\n' " + shell_quote(action.value) + " >> " + shell_quote(action.target) +
           " && ldconfig";
  case ActionKind::remove_ld_conf_line:
    return "{ grep -vxF -- " + shell_quote(action.value) + " " + shell_quote(action.target) +
           " || true; } > " + shell_quote(action.target + ".cudadiag-new") + " && mv " +
           shell_quote(action.target + ".cudadiag-new") + " " + shell_quote(action.target) + " && ldconfig";
  case ActionKind::install_driver:
    return "# install or upgrade the NVIDIA driver to " + action.spec +
           " or later (your distribution's packages or NVIDIA's installer; not scripted here)";
  }
  return "";
}

std::string describe(const Action& action) {
  const auto command = " (`" + shell_command(action) + "`)";
  switch (action.kind) {
  case ActionKind::set_variable: return "set " + action.variable + " to " + action.value + command;
  case ActionKind::unset_variable: return "unset " + action.variable + command;
  case ActionKind::remove_path_entry: return "remove " + action.value + " from " + action.variable + command;
  case ActionKind::prepend_path_entry:
    return "put " + action.value + " first on " + action.variable + command;
  case ActionKind::pip_install:
    return "install " + action.spec + " in the environment of " + action.target + command;
  case ActionKind::pip_uninstall:
    return "uninstall " + action.spec + " from the environment of " + action.target + command;
  case ActionKind::conda_install:
    return "install " + action.spec + " in the conda environment " + action.target + command;
  case ActionKind::add_ld_conf_line:
    return "add the line " + action.value + " to " + action.target + " and run ldconfig" + command;
  case ActionKind::remove_ld_conf_line:
    return "delete the line " + action.value + " from " + action.target + " and run ldconfig" + command;
  case ActionKind::install_driver:
    return "install or upgrade the NVIDIA driver to " + action.spec +
           " or later (your distribution's packages or NVIDIA's installer; cudadiag cannot simulate it)";
  }
  return "";
}

Runner runner_of(const Plan& plan) {
  return std::any_of(plan.actions.begin(), plan.actions.end(),
                     [](const Action& action) { return action.runner == Runner::root; })
             ? Runner::root
             : Runner::user;
}

Scope scope_of(const Plan& plan) {
  auto widest = Scope::environment;
  for (const auto& action : plan.actions) {
    widest = std::max(widest, action.scope);
  }
  return widest;
}

bool simulable(const Plan& plan) {
  return std::all_of(plan.actions.begin(), plan.actions.end(),
                     [](const Action& action) { return simulable(action); });
}

void rank(std::vector<Plan>& plans) {
  std::stable_sort(plans.begin(), plans.end(), [](const Plan& a, const Plan& b) {
    return std::pair(scope_of(a), runner_of(a)) < std::pair(scope_of(b), runner_of(b));
  });
}

std::string render_remedy(const std::vector<Plan>& plans) {
  std::string out;
  for (const auto& plan : plans) {
    std::string steps;
    for (const auto& action : plan.actions) {
      steps += (steps.empty() ? "" : "; then ") + describe(action);
    }
    const auto scope = scope_of(plan);
    const std::string touches = scope == Scope::environment ? "this environment only"
                                : scope == Scope::user      ? "this user's shell or job"
                                                            : "the whole host";
    std::string why = plan.why;
    if (out.empty() && !why.empty()) {
      why.front() =
          static_cast<char>(why.front() >= 'a' && why.front() <= 'z' ? why.front() - 'a' + 'A' : why.front());
    }
    out += (out.empty() ? "" : " Or, ") + why + ": " + steps + " [as " +
           (runner_of(plan) == Runner::root ? "root" : "the user") + "; touches " + touches + "].";
  }
  return out;
}

} // namespace cudadiag::findings
