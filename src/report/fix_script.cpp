#include "report/fix_script.hpp"

#include "report/json_report.hpp"

#include <nlohmann/json.hpp>

#include <set>

namespace cudadiag::report {

namespace {

using nlohmann::ordered_json;

bool worth_fixing(const findings::Finding& finding) {
  return finding.severity != findings::Severity::info;
}

// A comment line: no newline of outside text may end the comment early.
std::string comment(std::string_view text) {
  std::string out = "# ";
  for (const char c : text) {
    out += (c == '\n' || c == '\r') ? ' ' : c;
  }
  return out + "\n";
}

} // namespace

bool has_fix(const Report& report) {
  for (const auto& finding : report.findings) {
    if (worth_fixing(finding) && !finding.fix.empty()) {
      return true;
    }
  }
  return false;
}

std::string render_fix_script(const Report& report) {
  std::string out = "#!/bin/sh\n";
  if (!has_fix(report)) {
    out += comment("cudadiag fix: nothing to fix (no warning or error with a plan).");
  } else {
    out += comment("cudadiag fix: the best plan of each warning and error, least invasive first.");
    out += comment("Nothing here has been run. Read it, then run what you choose; variable changes hold");
    out += comment("in the shell that sources it (`. ./fix.sh`). Lines marked 'as root' need root.");
  }
  std::set<std::string> printed;
  std::string unplanned;
  for (const auto& finding : report.findings) {
    if (!worth_fixing(finding)) {
      continue;
    }
    if (finding.fix.empty()) {
      unplanned += comment(finding.id + " (" + std::string(findings::to_string(finding.severity)) +
                           "): " + finding.message);
      unplanned += comment("  no plan; remedy: " + finding.remedy);
      continue;
    }
    const auto& plan = finding.fix.front();
    const auto scope = findings::scope_of(plan);
    out += "\n" + comment(finding.id + " (" + std::string(findings::to_string(finding.severity)) +
                          "): " + finding.message);
    out +=
        comment("plan: " + plan.why + " [as " +
                (findings::runner_of(plan) == findings::Runner::root ? "root" : "the user") + "; touches " +
                (scope == findings::Scope::environment ? "this environment only"
                 : scope == findings::Scope::user      ? "this user's shell or job"
                                                       : "the whole host") +
                "]");
    for (const auto& action : plan.actions) {
      const auto line = findings::shell_command(action);
      if (!printed.insert(line).second) {
        out += comment("(done above) " + line);
        continue;
      }
      out += line + "\n";
    }
  }
  if (!unplanned.empty()) {
    out += "\n" + comment("Findings without a plan (their remedy is prose):") + unplanned;
  }
  return out;
}

std::string render_fix_json(const Report& report) {
  ordered_json planned = ordered_json::array();
  ordered_json unplanned = ordered_json::array();
  for (const auto& finding : report.findings) {
    if (!worth_fixing(finding)) {
      continue;
    }
    const auto severity = std::string(findings::to_string(finding.severity));
    if (finding.fix.empty()) {
      unplanned.push_back({{"id", finding.id},
                           {"severity", severity},
                           {"message", to_valid_utf8(finding.message)},
                           {"remedy", to_valid_utf8(finding.remedy)}});
      continue;
    }
    const auto plans = fix_to_json({finding.fix.front()});
    planned.push_back({{"id", finding.id},
                       {"severity", severity},
                       {"message", to_valid_utf8(finding.message)},
                       {"components", finding.components},
                       {"plan", ordered_json::parse(plans.front().dump())}});
  }
  const ordered_json document = {{"schema_version", k_schema_version},
                                 {"planned", std::move(planned)},
                                 {"unplanned", std::move(unplanned)},
                                 {"script", to_valid_utf8(render_fix_script(report))}};
  return document.dump(2) + "\n";
}

} // namespace cudadiag::report
