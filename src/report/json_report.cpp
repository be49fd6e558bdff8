#include "report/json_report.hpp"

#include "core/evidence_json.hpp"
#include "core/parallel.hpp"
#include "core/timeline.hpp"
#include "core/utf8.hpp"
#include "findings/container_rules.hpp"
#include "findings/environment_rules.hpp"
#include "linkage/linkage_json.hpp"
#include "report/selftest_json.hpp"
#include "verify/facts_codec.hpp"

#include <algorithm>
#include <functional>
#include <iterator>
#include <optional>
#include <utility>

namespace cudadiag::report {

namespace {

using nlohmann::json;

json text(std::string_view value) {
  return to_valid_utf8(value);
}
json optional_text(const std::optional<std::string>& value) {
  return value ? text(*value) : json(nullptr);
}

// A candidate's object; for a choice (`selected`, `loader`) also why it was chosen, with the sighting
// through which it was chosen in place of the first one (what the user's program sees).
void write_candidate(JsonStream& out, const discovery::Candidate& candidate,
                     const discovery::Choice* choice) {
  const auto& via = choice != nullptr ? choice->via : candidate.first;
  out.begin_object();
  out.key("also_found_as");
  out.begin_array();
  for (const auto& sighting : candidate.also_found_as) {
    out.begin_object();
    out.key("found_via");
    out.text(sighting.found_via);
    out.key("path");
    out.text(sighting.path);
    out.end_object();
  }
  out.end_array();
  out.key("elf");
  if (candidate.elf) {
    out.begin_object();
    out.key("class");
    out.text(candidate.elf->class_name());
    out.key("machine");
    out.text(candidate.elf->machine_name());
    out.end_object();
  } else {
    out.null();
  }
  if (choice != nullptr) {
    out.key("fails");
    out.optional_text(choice->fails);
  }
  if (!candidate.features.empty()) {
    out.key("features");
    out.begin_object();
    for (const auto& [feature, present] : candidate.features) {
      out.key(feature);
      out.boolean(present);
    }
    out.end_object();
  }
  out.key("found_via");
  out.text(via.found_via);
  out.key("is_stub");
  out.boolean(candidate.is_stub);
  if (choice != nullptr) {
    out.key("outcome");
    out.text(probes::to_string(choice->outcome));
  }
  out.key("path");
  out.text(via.path);
  if (choice != nullptr) {
    out.key("pathfinder_found_via");
    const auto pathfinder = discovery::pathfinder_found_via(choice->via);
    out.optional_text(pathfinder.empty() ? std::nullopt : std::optional<std::string>(pathfinder));
  }
  out.key("realpath");
  out.optional_text(candidate.realpath);
  if (choice != nullptr) {
    out.key("reason");
    out.text(choice->reason);
  }
  out.key("rejected");
  out.optional_text(candidate.rejected);
  out.key("search_dir");
  out.text(via.search_dir);
  out.key("soname");
  out.optional_text(candidate.elf ? candidate.elf->soname : std::nullopt);
  out.key("version");
  out.optional_text(candidate.version ? std::optional<std::string>(candidate.version->version)
                                      : std::nullopt);
  out.key("version_source");
  out.optional_text(candidate.version
                        ? std::optional<std::string>(versions::to_string(candidate.version->source))
                        : std::nullopt);
  out.end_object();
}

void write_choice(JsonStream& out, const discovery::ComponentResult& component,
                  const std::optional<discovery::Choice>& choice) {
  if (choice) {
    write_candidate(out, component.candidates[choice->candidate], &*choice);
  } else {
    out.null();
  }
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

json image_to_json(const image::ImageInfo& image) {
  json layers = json::array();
  for (const auto& layer : image.layers) {
    layers.push_back({{"digest", text(layer.digest)}, {"source", text(layer.source)}});
  }
  const auto texts = [](const std::vector<std::string>& items) {
    json out = json::array();
    for (const auto& item : items) {
      out.push_back(text(item));
    }
    return out;
  };
  json labels = json::object();
  for (const auto& [key, value] : image.config.labels) {
    labels[text(key).get<std::string>()] = text(value);
  }
  json config = nullptr;
  if (image.has_config) {
    config = {{"env", texts(image.config.env)},  {"entrypoint", texts(image.config.entrypoint)},
              {"cmd", texts(image.config.cmd)},  {"working_dir", text(image.config.working_dir)},
              {"user", text(image.config.user)}, {"labels", std::move(labels)}};
  }
  return {{"reference", text(image.reference)},
          {"format", image.format},
          {"manifest_digest", image.manifest_digest.empty() ? json(nullptr) : json(image.manifest_digest)},
          {"config_digest", image.config_digest.empty() ? json(nullptr) : json(image.config_digest)},
          {"layers", std::move(layers)},
          {"config", std::move(config)}};
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
    requirements.push_back(
        {{"framework", text(requirement.framework)},
         {"framework_version", text(requirement.framework_version)},
         {"requirement", text(requirement.requirement)},
         {"dependency", text(requirement.dependency)},
         {"installed", requirement.installed ? json(text(*requirement.installed)) : json(nullptr)},
         {"extra", requirement.through_extra ? json(text(*requirement.through_extra)) : json(nullptr)},
         {"met", requirement.met}});
  }
  json not_judged = json::array();
  for (const auto& requirement : report.discovery.framework_requirements_not_judged) {
    not_judged.push_back({{"framework", text(requirement.framework)},
                          {"framework_version", text(requirement.framework_version)},
                          {"requirement", text(requirement.requirement)},
                          {"dependency", text(requirement.dependency)},
                          {"reason", text(requirement.reason)}});
  }
  json behaviour = json::array();
  for (const auto* row : findings::set_behaviour_variables(report.environment)) {
    behaviour.push_back({{"name", std::string(row->name)},
                         {"value", text(report.environment.get(row->name).value_or(""))},
                         {"class", std::string(findings::to_string(row->kind))},
                         {"effect", std::string(row->effect)}});
  }
  const auto& cache = report.discovery.ld_cache;
  json out = {{"variables", std::move(variables)},
              {"behaviour_variables", std::move(behaviour)},
              {"cwd", text(report.environment.cwd)},
              {"uid", report.environment.uid},
              {"python_environments", std::move(pythons)},
              {"frameworks", std::move(frameworks)},
              {"framework_requirements", std::move(requirements)},
              {"framework_requirements_not_judged", std::move(not_judged)},
              {"ld_so_cache",
               {{"path", text(cache.path)},
                {"status", cache.error ? "error" : "ok"},
                {"error", optional_text(cache.error)},
                {"entries", cache.entries}}}};
  if (!report.root.empty()) {
    out["root"] = text(report.root);
  }
  if (report.image) {
    out["image"] = image_to_json(*report.image);
  }
  if (report.target_host) {
    const auto& host = *report.target_host;
    const auto cuda = findings::cuda_version_of_driver(host.driver);
    const auto or_null = [](const std::string& value) {
      return value.empty() ? json(nullptr) : json(text(value));
    };
    out["target_host"] = {{"driver", or_null(host.driver)},
                          {"cuda", or_null(cuda)},
                          {"brand", or_null(host.brand)},
                          {"arch", or_null(host.arch)},
                          {"source", or_null(host.source)}};
  }
  return out;
}

// JSON from a probe may hold raw bytes (paths, dlerror text): sanitize by round-tripping.
json sanitized(const json& value) {
  return json::parse(value.dump(-1, ' ', false, json::error_handler_t::replace));
}

json step_to_json(const verify::LibraryStep& step) {
  return {{"component", text(step.id)},
          {"kind", text(step.kind)},
          {"path", text(step.path)},
          {"status", worker::to_string(step.status)},
          {"signal", step.signal ? json(*step.signal) : json(nullptr)},
          {"exit_code", step.exit_code ? json(*step.exit_code) : json(nullptr)},
          {"detail", text(step.detail)},
          {"last_phase", text(step.last_phase)},
          {"stderr_tail", text(step.stderr_tail)},
          {"elapsed_ms", step.elapsed_ms},
          {"cache", step.proven_at ? json{{"proven_at", linkage::utc_time(*step.proven_at)}} : json(nullptr)},
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

void write_component(JsonStream& out, const discovery::ComponentResult& component) {
  out.begin_object();
  out.key("candidates");
  out.begin_array();
  for (const auto& candidate : component.candidates) {
    write_candidate(out, candidate, nullptr);
  }
  out.end_array();
  out.key("cuda_python");
  out.boolean(component.spec->cuda_python);
  out.key("description");
  out.text(component.spec->description);
  out.key("kind");
  out.text(probes::to_string(component.spec->kind));
  out.key("loader");
  write_choice(out, component, component.loader);
  out.key("name");
  out.text(component.spec->name);
  if (component.spec->kind == probes::ComponentKind::dynamic_lib) {
    out.key("python_failed");
    write_choice(out, component, component.python_failed);
  }
  out.key("selected");
  write_choice(out, component, component.selected);
  out.key("status");
  out.text(discovery::to_string(component.status));
  out.key("trace");
  out.begin_array();
  for (const auto& line : component.trace) {
    out.text(line);
  }
  out.end_array();
  out.end_object();
}

json kernel_log_to_json(const health::KernelLog& log) {
  // The newest events only: the findings group them all; a flooded log must not flood the report.
  constexpr std::size_t k_events = 64;
  json events = json::array();
  const auto start = log.events.size() > k_events ? log.events.size() - k_events : 0;
  for (std::size_t i = start; i < log.events.size(); ++i) {
    const auto& event = log.events[i];
    events.push_back({{"kind", std::string(health::to_string(event.kind))},
                      {"code", event.code},
                      {"pci", text(event.pci)},
                      {"seconds", event.seconds ? json(*event.seconds) : json(nullptr)},
                      {"pid", event.pid ? json(*event.pid) : json(nullptr)},
                      {"process", optional_text(event.name)},
                      {"text", text(event.text)}});
  }
  return {{"source", text(log.source)},
          {"status", std::string(health::to_string(log.status))},
          {"reason", log.reason.empty() ? json(nullptr) : text(log.reason)},
          {"bytes", log.bytes},
          {"truncated", log.truncated},
          {"event_count", log.events.size()},
          {"events", std::move(events)}};
}

json fix_to_json(const std::vector<findings::Plan>& plans) {
  json out = json::array();
  for (const auto& plan : plans) {
    json actions = json::array();
    for (const auto& action : plan.actions) {
      json item = {{"action", std::string(findings::to_string(action.kind))}};
      // Each action's own fields (fix_plan.hpp); a path entry may be "" (an empty entry).
      const bool has_value = !action.value.empty() ||
                             action.kind == findings::ActionKind::remove_path_entry ||
                             action.kind == findings::ActionKind::set_variable;
      const std::pair<const char*, const std::string*> fields[] = {
          {"variable", &action.variable},
          {"value", has_value ? &action.value : nullptr},
          {"spec", &action.spec},
          {"target", &action.target}};
      for (const auto& [name, value] : fields) {
        if (value != nullptr && (!value->empty() || std::string_view(name) == "value")) {
          item[name] = text(*value);
        }
      }
      item["runs_as"] = std::string(findings::to_string(action.runner));
      item["scope"] = std::string(findings::to_string(action.scope));
      item["simulable"] = findings::simulable(action);
      item["shell"] = text(findings::shell_command(action));
      actions.push_back(std::move(item));
    }
    out.push_back({{"why", text(plan.why)},
                   {"runs_as", std::string(findings::to_string(findings::runner_of(plan)))},
                   {"scope", std::string(findings::to_string(findings::scope_of(plan)))},
                   {"simulable", findings::simulable(plan)},
                   {"actions", std::move(actions)}});
  }
  return out;
}

json finding_to_json(const findings::Finding& finding) {
  // Evidence strings may hold raw paths: round-trip through a sanitizing dump.
  const auto evidence =
      json::parse(evidence_to_json(finding.evidence).dump(-1, ' ', false, json::error_handler_t::replace));
  return {{"id", finding.id},
          {"severity", std::string(findings::to_string(finding.severity))},
          {"message", text(finding.message)},
          {"remedy", text(finding.remedy)},
          {"repair", std::string(findings::to_string(finding.repair))},
          {"components", finding.components},
          {"evidence", evidence},
          {"fix", fix_to_json(finding.fix)}};
}

namespace {

// Every member of the report's document but its components and linkage, as a tree.
json members_but_streamed(const Report& report) {
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
                   {"devices", sanitized(verify::devices_to_json(report.verification.devices))},
                   {"verification", verification_to_json(report.verification)},
                   {"selftest", sanitized(selftest_to_json(report.selftest))},
                   {"findings", std::move(found)},
                   {"kernel_log", kernel_log_to_json(report.kernel_log)},
                   {"summary",
                    {{"status", std::string(to_string(report.summary.status()))},
                     {"exit_code", report.summary.exit_code},
                     {"counts",
                      {{"error", report.summary.errors},
                       {"warning", report.summary.warnings},
                       {"info", report.summary.infos}}}}}};
  if (report.policy) {
    document["policy"] =
        policy_to_json(*report.policy, report.summary.fail_on == FailOn::warning ? "warning" : "error");
  }
  return document;
}

} // namespace

json policy_to_json(const PolicyResult& policy, std::string_view fail_on) {
  json requirements = json::array();
  for (const auto& outcome : policy.outcomes) {
    requirements.push_back({{"spec", outcome.spec}, {"met", outcome.met}, {"detail", outcome.detail}});
  }
  return {{"sources", policy.sources}, {"fail_on", std::string(fail_on)}, {"requirements", requirements}};
}

json report_to_json(const Report& report) {
  return json::parse(render_json(report));
}

std::vector<std::string> render_json_pieces(const Report& report) {
  // The components and the linkage are most of the document's bytes: written straight from the
  // results, one component per task, without a tree, and each element's text handed over as a
  // piece of its own (not copied into one string); the rest is small and written from its tree.
  const auto& components = report.discovery.components;
  std::vector<std::string> pieces;
  pieces.reserve(2 * (components.size() + report.linkage.components.size()) + 8);
  std::string out;
  JsonStream stream(out, 2);
  stream.hand_over_arrays_to(pieces);
  const std::pair<std::string_view, std::function<void()>> streamed[] = {
      {"components",
       [&] {
         const timeline::Span span("json_components");
         stream.array_of(components.size(), [&](JsonStream& element, std::size_t i) {
           write_component(element, components[i]);
         });
       }},
      {"linkage",
       [&] {
         const timeline::Span span("json_linkage");
         linkage::write_linkage(stream, report.linkage);
       }},
  }; // in the document's (ascending) order
  const auto rest = [&] {
    const timeline::Span span("json_rest");
    return members_but_streamed(report);
  }();
  stream.begin_object();
  std::size_t next = 0;
  const auto write_streamed = [&](const std::optional<std::string_view>& before) {
    for (; next < std::size(streamed) && (!before || streamed[next].first < *before); ++next) {
      stream.key(streamed[next].first);
      streamed[next].second();
    }
  };
  for (const auto& [key, member] : rest.items()) {
    write_streamed(key);
    stream.key(key);
    stream.value(member);
  }
  write_streamed(std::nullopt); // those after the tree's last key
  stream.end_object();
  out += '\n';
  pieces.push_back(std::move(out));
  return pieces;
}

std::string render_json(const Report& report) {
  const auto pieces = render_json_pieces(report);
  std::size_t size = 0;
  for (const auto& piece : pieces) {
    size += piece.size();
  }
  std::string text;
  text.reserve(size);
  for (const auto& piece : pieces) {
    text += piece;
  }
  return text;
}

} // namespace cudadiag::report
