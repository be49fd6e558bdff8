#include "report/json_report.hpp"

#include "core/evidence_json.hpp"
#include "core/parallel.hpp"
#include "core/utf8.hpp"
#include "linkage/linkage_json.hpp"
#include "report/json_text.hpp"
#include "report/selftest_json.hpp"
#include "verify/facts_codec.hpp"

#include <algorithm>
#include <utility>

namespace cudadiag::report {

std::string to_valid_utf8(std::string_view text) {
  constexpr std::string_view k_hex = "0123456789abcdef";
  // Most text (paths, names, trace lines) is ASCII: taken whole, without decoding.
  if (std::all_of(text.begin(), text.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80U; })) {
    return std::string(text);
  }
  std::string out;
  out.reserve(text.size());
  std::size_t at = 0;
  char32_t code = 0;
  while (at < text.size()) {
    const auto length = utf8::sequence_at(text, at, code);
    if (length == 0) {
      const auto byte = static_cast<unsigned char>(text[at]);
      out += "\\x";
      out += k_hex[byte >> 4U];
      out += k_hex[byte & 0x0fU];
      ++at;
    } else {
      out.append(text.substr(at, length));
      at += length;
    }
  }
  return out;
}

namespace {

using nlohmann::json;

json text(std::string_view value) { return to_valid_utf8(value); }
json optional_text(const std::optional<std::string>& value) { return value ? text(*value) : json(nullptr); }

json candidate_to_json(const discovery::Candidate& candidate) {
  json also = json::array();
  for (const auto& sighting : candidate.also_found_as) {
    also.push_back({{"path", text(sighting.path)}, {"found_via", text(sighting.found_via)}});
  }
  json out = {
      {"path", text(candidate.first.path)},
      {"realpath", optional_text(candidate.realpath)},
      {"found_via", text(candidate.first.found_via)},
      {"search_dir", text(candidate.first.search_dir)},
      {"also_found_as", std::move(also)},
      {"soname", candidate.elf ? optional_text(candidate.elf->soname) : json(nullptr)},
      {"elf", candidate.elf ? json{{"class", candidate.elf->class_name()}, {"machine", candidate.elf->machine_name()}}
                            : json(nullptr)},
      {"version", candidate.version ? text(candidate.version->version) : json(nullptr)},
      {"version_source", candidate.version ? json(std::string(versions::to_string(candidate.version->source)))
                                           : json(nullptr)},
      {"is_stub", candidate.is_stub},
      {"rejected", optional_text(candidate.rejected)},
  };
  if (!candidate.features.empty()) {
    out["features"] = candidate.features;
  }
  return out;
}

json choice_to_json(const discovery::ComponentResult& component, const std::optional<discovery::Choice>& choice) {
  if (!choice) {
    return nullptr;
  }
  json out = candidate_to_json(component.candidates[choice->candidate]);
  // The sighting through which it was chosen is what the user's program sees.
  out["path"] = text(choice->via.path);
  out["found_via"] = text(choice->via.found_via);
  out["search_dir"] = text(choice->via.search_dir);
  out["reason"] = text(choice->reason);
  const auto pathfinder = discovery::pathfinder_found_via(choice->via);
  out["pathfinder_found_via"] = pathfinder.empty() ? json(nullptr) : json(pathfinder);
  out["fails"] = optional_text(choice->fails);
  return out;
}

json python_environment_to_json(const python::PythonEnvironment& environment) {
  json site_dirs = json::array();
  for (const auto& dir : environment.site_dirs) {
    site_dirs.push_back(text(dir));
  }
  return {{"label", text(environment.label)},
          {"how", text(environment.how)},
          {"interpreter", text(environment.interpreter)},
          {"prefix", text(environment.prefix)},
          {"version", text(environment.version)},
          {"is_venv", environment.is_venv},
          {"include_system_site_packages", environment.include_system_site_packages},
          {"user_site_enabled", environment.user_site_enabled},
          {"site_dirs", std::move(site_dirs)},
          {"primary", environment.primary}};
}

json environment_to_json(const Report& report) {
  json variables = json::object();
  for (const auto name : reported_variables()) {
    variables[std::string(name)] = optional_text(report.environment.get(name));
  }
  json pythons = json::array();
  for (const auto& environment : report.discovery.python.environments) {
    pythons.push_back(python_environment_to_json(environment));
  }
  json frameworks = json::array();
  for (const auto& build : report.discovery.frameworks) {
    json entry = {{"framework", text(build.framework)},
                  {"version", text(build.version)},
                  {"cuda", text(build.cuda)},
                  {"source", text(build.source)}};
    if (!build.tool.empty()) {
      entry["tool"] = text(build.tool);
    }
    if (build.gpu_code) {
      json codes = json::array();
      for (const auto& code : *build.gpu_code) {
        codes.push_back(code.name());
      }
      entry["gpu_code"] = std::move(codes);
    }
    if (!build.gpu_code_source.empty()) {
      entry["gpu_code_source"] = text(build.gpu_code_source);
    }
    if (!build.gpu_code_problem.empty()) {
      entry["gpu_code_problem"] = text(build.gpu_code_problem);
    }
    frameworks.push_back(std::move(entry));
  }
  json requirements = json::array();
  for (const auto& requirement : report.discovery.framework_requirements) {
    requirements.push_back({{"framework", text(requirement.framework)},
                            {"framework_version", text(requirement.framework_version)},
                            {"requirement", text(requirement.requirement)},
                            {"dependency", text(requirement.dependency)},
                            {"installed", requirement.installed ? json(text(*requirement.installed)) : json(nullptr)},
                            {"extra", requirement.through_extra ? json(text(*requirement.through_extra)) : json(nullptr)},
                            {"met", requirement.met}});
  }
  const auto& cache = report.discovery.ld_cache;
  return {{"variables", std::move(variables)},
          {"cwd", text(report.environment.cwd)},
          {"uid", report.environment.uid},
          {"python_environments", std::move(pythons)},
          {"frameworks", std::move(frameworks)},
          {"framework_requirements", std::move(requirements)},
          {"ld_so_cache",
           {{"path", text(cache.path)},
            {"status", cache.error ? "error" : "ok"},
            {"error", optional_text(cache.error)},
            {"entries", cache.entries}}}};
}

// JSON from a probe may hold raw bytes (paths, dlerror text): sanitize by round-tripping.
json sanitized(const json& value) {
  return json::parse(value.dump(-1, ' ', false, json::error_handler_t::replace));
}

json step_to_json(const verify::LibraryStep& step) {
  return {{"component", text(step.id)},
          {"kind", text(step.kind)},
          {"path", text(step.path)},
          {"status", step.status},
          {"signal", step.signal ? json(*step.signal) : json(nullptr)},
          {"exit_code", step.exit_code ? json(*step.exit_code) : json(nullptr)},
          {"detail", text(step.detail)},
          {"last_phase", text(step.last_phase)},
          {"stderr_tail", text(step.stderr_tail)},
          {"elapsed_ms", step.elapsed_ms},
          {"result", sanitized(verify::to_json(step.facts))}};
}

json verification_to_json(const verify::Verification& verification) {
  json steps = json::array();
  for (const auto& step : verification.steps) {
    steps.push_back(step_to_json(step));
  }
  return {{"ran", verification.ran},
          {"skipped_reason", verification.ran ? json(nullptr) : json(text(verification.skipped_reason))},
          {"steps", std::move(steps)}};
}

} // namespace

json component_to_json(const discovery::ComponentResult& component) {
  json candidates = json::array();
  for (const auto& candidate : component.candidates) {
    candidates.push_back(candidate_to_json(candidate));
  }
  json trace = json::array();
  for (const auto& line : component.trace) {
    trace.push_back(text(line));
  }
  return {{"name", std::string(component.spec->name)},
          {"kind", std::string(probes::to_string(component.spec->kind))},
          {"description", std::string(component.spec->description)},
          {"status", std::string(discovery::to_string(component.status))},
          {"selected", choice_to_json(component, component.selected)},
          {"loader", choice_to_json(component, component.loader)},
          {"candidates", std::move(candidates)},
          {"trace", std::move(trace)}};
}

json finding_to_json(const findings::Finding& finding) {
  // Evidence strings may hold raw paths: round-trip through a sanitizing dump.
  const auto evidence = json::parse(evidence_to_json(finding.evidence).dump(-1, ' ', false, json::error_handler_t::replace));
  return {{"id", finding.id},
          {"severity", std::string(findings::to_string(finding.severity))},
          {"message", text(finding.message)},
          {"remedy", text(finding.remedy)},
          {"components", finding.components},
          {"evidence", evidence}};
}

json report_to_json(const Report& report) {
  // Each component's object is built on its own (most of the document's bytes): in parallel.
  const auto& all = report.discovery.components;
  json components =
      json::array_t(parallel_map<json>(all.size(), [&](std::size_t i) { return component_to_json(all[i]); }));
  json found = json::array();
  for (const auto& finding : report.findings) {
    found.push_back(finding_to_json(finding));
  }
  const auto& host = report.host;
  json document = {{"schema_version", k_schema_version},
          {"tool", {{"name", "cudadiag"}, {"version", CUDADIAG_VERSION}}},
          {"host",
           {{"os", text(host.os)},
            {"kernel", text(host.kernel)},
            {"machine", text(host.machine)},
            {"hostname", text(host.hostname)},
            {"node_name", optional_text(host.node_name)},
            {"node_name_source", optional_text(host.node_name_source)},
            {"distro", optional_text(host.distro)}}},
          {"environment", environment_to_json(report)},
          {"components", std::move(components)},
          {"linkage", linkage::linkage_to_json(report.linkage)},
          {"devices", sanitized(verify::devices_to_json(report.verification.devices))},
          {"verification", verification_to_json(report.verification)},
          {"selftest", sanitized(selftest_to_json(report.selftest))},
          {"findings", std::move(found)},
          {"summary",
           {{"status", std::string(report.summary.status())},
            {"exit_code", report.summary.exit_code},
            {"counts",
             {{"error", report.summary.errors}, {"warning", report.summary.warnings}, {"info", report.summary.infos}}}}}};
  if (report.policy) {
    document["policy"] = policy::outcomes_to_json(report.policy->outcomes, report.policy->sources,
                                                  report.summary.fail_on == FailOn::warning ? "warning" : "error");
  }
  return document;
}

std::string render_json(const Report& report) {
  return dump_json(report_to_json(report), 2) + "\n";
}

} // namespace cudadiag::report
