#pragma once
// Remedies as plans: what to do about a finding, as typed actions the tool's own model understands
// (a variable, a search-path entry, a wheel in a named environment, a conda package in a prefix, a
// line of a loader configuration file, the driver). A finding carries its plans ranked least
// invasive first; its text remedy is rendered from them (render_remedy), the JSON report carries
// them (`findings[].fix`) and `cudadiag fix` prints the best one as a shell script. The scenario
// corpus applies every simulable plan to the scenario's model and re-runs the rules
// (tests/scenarios/test_fix_simulation.py): the finding must go and nothing worse may come.
//
// Ranking (docs/findings.md, "Remedies as plans"): an environment-local change (a wheel in this
// venv) before a user-level one (a variable of this user's shell or job) before a host-wide one
// (ld.so.conf.d + ldconfig, the driver), which needs root; a problem of one environment never gets
// a host-wide plan.

#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::findings {

enum class ActionKind {
  set_variable,        // export VARIABLE=VALUE
  unset_variable,      // unset VARIABLE
  remove_path_entry,   // drop VALUE from the search-path VARIABLE (LD_LIBRARY_PATH, PATH)
  prepend_path_entry,  // put VALUE first in the search-path VARIABLE
  pip_install,         // TARGET -m pip install SPEC (TARGET: the environment's own interpreter)
  pip_uninstall,       // TARGET -m pip uninstall -y SPEC
  conda_install,       // conda install -p TARGET SPEC
  add_ld_conf_line,    // append the line VALUE (a directory) to TARGET, then ldconfig
  remove_ld_conf_line, // delete the line VALUE from TARGET, then ldconfig
  install_driver,      // install or upgrade the NVIDIA driver to SPEC or later (never simulated)
};
std::string_view to_string(ActionKind kind); // the enumerator's name, as the JSON spells it

enum class Runner { user, root };
std::string_view to_string(Runner runner); // "user", "root"

// What an action touches, least to most invasive.
enum class Scope { environment, user, host };
std::string_view to_string(Scope scope); // "environment", "user", "host"

struct Action {
  ActionKind kind = ActionKind::set_variable;
  std::string variable; // set/unset/remove/prepend: the variable's name
  std::string value;    // set: the value; remove/prepend: the entry; ld conf: the line
  std::string spec;     // pip/conda: a requirement or distribution; driver: the minimum version
  std::string target;   // pip: the interpreter; conda: the prefix; ld conf: the file
  Runner runner = Runner::user;
  Scope scope = Scope::user;
};

Action set_variable(std::string variable, std::string value);
Action unset_variable(std::string variable);
Action remove_path_entry(std::string variable, std::string entry);
Action prepend_path_entry(std::string variable, std::string entry);
// A pip action in the environment whose interpreter is `python`: environment scope as the user,
// unless `python` is a system interpreter (under /usr), which only root changes, host-wide.
Action pip_install(std::string python, std::string spec);
Action pip_uninstall(std::string python, std::string distribution);
Action conda_install(std::string prefix, std::string spec);
Action add_ld_conf_line(std::string file, std::string directory);
Action remove_ld_conf_line(std::string file, std::string directory);
Action install_driver(std::string minimum_version);

// Whether the simulation can apply it to a scenario's model (every action but the driver's).
bool simulable(const Action& action);
// One line of shell that performs it (POSIX sh; values single-quoted). The driver's is a comment.
std::string shell_command(const Action& action);
// What it does, in words, with its command: "put /v/lib first on LD_LIBRARY_PATH (`export ...`)".
std::string describe(const Action& action);

struct Plan {
  std::string why; // one clause: what the plan changes, so that the finding's cause goes
  std::vector<Action> actions;
};
Runner runner_of(const Plan& plan); // root when any action needs root
Scope scope_of(const Plan& plan);   // the widest scope any action touches
bool simulable(const Plan& plan);   // every action is

// `plans` least invasive first (scope, then runner; stable otherwise).
void rank(std::vector<Plan>& plans);

// The text remedy of ranked plans: the first, then each alternative ("Or: ..."), each naming who
// runs it and what it touches. "" for no plan.
std::string render_remedy(const std::vector<Plan>& plans);

// `text` single-quoted for sh.
std::string shell_quote(std::string_view text);

} // namespace cudadiag::findings
