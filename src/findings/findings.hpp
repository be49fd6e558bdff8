#pragma once
// Findings: what is wrong (or worth knowing) about this CUDA stack, each with a stable dotted id,
// a severity, a message naming the files involved, a remedy and machine-readable evidence.
// Ids are a contract (docs/findings.md documents each one): never rename, only add.

#include "core/environment.hpp"
#include "core/evidence.hpp"
#include "discovery/discovery.hpp"
#include "findings/fix_plan.hpp"
#include "findings/repair.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::findings {

enum class Severity { info, warning, error };
std::string_view to_string(Severity severity); // "info", "warning", "error"
// The severity `text` names (a saved report's "severity"); nullopt for any other text.
std::optional<Severity> parse_severity(std::string_view text);

struct Finding {
  std::string id;
  Severity severity = Severity::info;
  std::string message;
  std::string remedy;
  Repair repair = Repair::none; // the id's default unless its rule chose another for this instance
  std::vector<std::string> components;
  Evidence evidence; // a record; rendered as the finding's "evidence" object
  // Its plans, least invasive first (fix_plan.hpp); empty where the rule gives prose only.
  std::vector<Plan> fix;
};

// Gives `finding` these plans, ranked, and the remedy rendered from them (unchanged when empty).
void set_plans(Finding& finding, std::vector<Plan> plans);

// The interpreter whose `-m pip` installs into the Python environment whose site directory holds
// `path` (a venv's own bin/python, else the environment's interpreter; for a site directory no
// discovered environment lists, PREFIX/bin/python from its lib/pythonX.Y/site-packages); nullopt
// when `path` is in no site directory.
std::optional<std::string> environment_python(const std::string& path,
                                              const discovery::DiscoveryResult& result);

// The reference table: one row per id this version can emit.
struct FindingDefinition {
  std::string_view id;
  Severity severity;
  Repair repair;            // the default repair class of its instances
  std::string_view summary; // one line: the situation
  std::string_view remedy;  // what to do about it
};
const std::vector<FindingDefinition>& finding_definitions();
const FindingDefinition* find_definition(std::string_view id);

// A finding of a defined id with that id's severity, remedy and repair class (unless `severity`
// overrides the first).
Finding make_finding(std::string_view id, std::string message, std::vector<std::string> components,
                     Evidence evidence = {}, std::optional<Severity> severity = std::nullopt);

// What to do so that a file reached through `via` is no longer reached, from how it was reached:
// the LD_LIBRARY_PATH entry, the ld.so.conf(.d) file that lists the directory (and ldconfig), the
// variable that named the root, the wheel distribution that owns the file (from its RECORD), the
// conda package (from conda-meta) or the system directory. One clause, no final full stop.
std::string remedy_for_route(const discovery::Sighting& via, const discovery::DiscoveryResult& discovery,
                             const Environment& env);

// The repair class of that remedy: a variable (LD_LIBRARY_PATH, CUDA_PATH, PATH, LD_PRELOAD, ...)
// or a loader configuration file (ld.so.conf.d, /etc/ld.so.preload) is fix_environment; a file a
// package owns (a wheel, a conda package, a system directory) is reinstall_package.
Repair repair_for_route(const discovery::Sighting& via);

// The pip distribution whose RECORD lists `path` (a file under some site-packages), e.g.
// "nvidia-nvjitlink-cu12"; nullopt when no dist-info in that site dir claims it.
std::optional<std::string> owning_wheel_distribution(const std::string& path);

// Whether a candidate's version comes from a file-name suffix that does not extend its SONAME's
// number (libcupti.so.13 -> libcupti.so.2025.3.1): another numbering, not comparable with packaging
// versions.
bool version_in_other_numbering(const discovery::Candidate& candidate);

// The interpreter whose `-m pip` installs into the primary Python environment: a venv's own
// bin/python (its interpreter's realpath is the base Python, whose pip installs elsewhere), else
// the environment's interpreter, else "python3".
std::string primary_python(const discovery::DiscoveryResult& result);

// Why a component's CUDA Python answer does not load, followed through the dependencies
// cuda-pathfinder loads first (Choice::failed_dependency) to the one answer whose own load fails:
// the cause. nullopt when the answer loads or there is none.
struct LoadCause {
  const discovery::ComponentResult* owner = nullptr; // the component whose own file or closure fails
  bool closure = false; // its file opens and its closure fails (a linkage finding says where)
};
std::optional<LoadCause> load_cause(const discovery::DiscoveryResult& all,
                                    const discovery::ComponentResult& result);

// One cause, one finding, across the rule sets: a closure's broken dependency (lib.missing_dependency
// with an `error`) whose file is already the cause of a lib.unusable_candidate, lib.wrong_arch or
// lib.loader_blocked (compared by real path) is folded into that finding, its components added.
// A lib.release_mismatch takes in what its pair raises besides it: the lib.python_native_differ of
// either member and the lib.undefined_symbol between its two files (their ids listed in its
// evidence's `folded`).
// For the whole list, after every rule set has run.
void merge_shared_causes(std::vector<Finding>& found);

// Every finding the discovery facts support, in rule order.
std::vector<Finding> evaluate_discovery(const discovery::DiscoveryResult& result, const Environment& env);

} // namespace cudadiag::findings
