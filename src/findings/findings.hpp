#pragma once
// Findings: what is wrong (or worth knowing) about this CUDA stack, each with a stable dotted id,
// a severity, a message naming the files involved, a remedy and machine-readable evidence.
// Ids are a contract (docs/findings.md documents each one): never rename, only add.

#include "core/environment.hpp"
#include "core/evidence.hpp"
#include "discovery/discovery.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::findings {

enum class Severity { info, warning, error };
std::string_view to_string(Severity severity); // "info", "warning", "error"

struct Finding {
  std::string id;
  Severity severity = Severity::info;
  std::string message;
  std::string remedy;
  std::vector<std::string> components;
  Evidence evidence; // a record; rendered as the finding's "evidence" object
};

// The reference table: one row per id this version can emit.
struct FindingDefinition {
  std::string_view id;
  Severity severity;
  std::string_view summary; // one line: the situation
  std::string_view remedy;  // what to do about it
};
const std::vector<FindingDefinition>& finding_definitions();
const FindingDefinition* find_definition(std::string_view id);

// A finding of a defined id with that id's severity and remedy (unless `severity` overrides it).
Finding make_finding(std::string_view id, std::string message, std::vector<std::string> components,
                     Evidence evidence = {},
                     std::optional<Severity> severity = std::nullopt);

// What to do so that a file reached through `via` is no longer reached, from how it was reached:
// the LD_LIBRARY_PATH entry, the ld.so.conf(.d) file that lists the directory (and ldconfig), the
// variable that named the root, the wheel distribution that owns the file (from its RECORD), the
// conda package (from conda-meta) or the system directory. One clause, no final full stop.
std::string remedy_for_route(const discovery::Sighting& via, const discovery::DiscoveryResult& discovery,
                             const Environment& env);

// The pip distribution whose RECORD lists `path` (a file under some site-packages), e.g.
// "nvidia-nvjitlink-cu12"; nullopt when no dist-info in that site dir claims it.
std::optional<std::string> owning_wheel_distribution(const std::string& path);

// Every finding the discovery facts support, in rule order.
std::vector<Finding> evaluate_discovery(const discovery::DiscoveryResult& result, const Environment& env);

} // namespace cudadiag::findings
