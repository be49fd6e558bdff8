#include "cli_support/cli_support.hpp"

#include "api/plans.hpp"
#include "api/report_data.hpp"
#include "bundle/bundle.hpp"
#include "core/filesystem.hpp"
#include "core/output_file.hpp"
#include "diff/diff_render.hpp"
#include "diff/report_input.hpp"
#include "findings/findings.hpp"
#include "findings/findings_reference.hpp"
#include "fleet/fleet_input.hpp"
#include "fleet/fleet_render.hpp"
#include "fleet/report_reader.hpp"
#include "inspect/loaded_components.hpp"
#include "linkage/framework_load.hpp"
#include "report/error_document.hpp"
#include "report/exit_style.hpp"
#include "report/fix_script.hpp"
#include "report/json_report.hpp"
#include "report/output_formats.hpp"
#include "report/text_layout.hpp"
#include "report/text_report.hpp"
#include "report/worker_kinds.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>

namespace cudadiag::cli_support {
namespace {

const report::Report& core(const Report& report) {
  static const report::Report empty;
  const auto* data = detail::Access::data(report);
  return data == nullptr ? empty : data->report;
}

policy::Policy load_policy(const RunExtras& extras) {
  policy::Policy policy;
  if (!extras.policy_file.empty()) {
    auto loaded = policy::load_policy_file(extras.policy_file);
    if (!loaded) {
      throw Exception(loaded.error().message);
    }
    policy = std::move(*loaded);
  }
  if (auto added = policy::add_requirements(policy, extras.requirements); !added) {
    throw Exception(added.error().message);
  }
  return policy;
}

api::Stages api_stages(Stages stages) {
  switch (stages) {
  case Stages::discover: return api::Stages::discover;
  case Stages::verify: return api::Stages::verify;
  case Stages::self_test: return api::Stages::self_test;
  }
  return api::Stages::discover;
}

} // namespace

int worker_main(int argc, char** argv) {
  return report::worker_main(argc, argv);
}

Report run(const Options& options, const RunExtras& extras) {
  auto policy = load_policy(extras);
  auto plan = api::make_plan(options, api_stages(extras.stages));
  if (extras.stages == Stages::discover) {
    plan.not_loaded_reason.clear(); // verification's own reason: --no-load
  }
  if (extras.headers) {
    std::erase_if(plan.components, [](const probes::ComponentSpec* spec) {
      return spec->kind != probes::ComponentKind::headers;
    });
  }
  if (plan.components.empty() && !options.components.empty()) {
    throw Exception("no header set named " + options.components.front());
  }
  if (extras.single_component && plan.components.size() > 1) {
    plan.components.resize(1);
  }
  if (extras.self_test_needs_gpu) {
    plan.selftest.require_gpu = true;
  }
  plan.selftest.progress = extras.progress;
  plan.progress = extras.activity;
  if (extras.log) {
    plan.log = [log = extras.log](pipeline::Detail detail, std::string_view message) {
      log(detail == pipeline::Detail::stage ? 1 : detail == pipeline::Detail::step ? 2 : 3, message);
    };
  }
  plan.policy = std::move(policy);
  plan.expect_gpus = extras.expect_gpus;
  return api::run_plan(plan, "cli");
}

std::vector<std::string> component_names(bool headers_only) {
  std::vector<std::string> names;
  for (const auto& spec : probes::catalog()) {
    if ((!headers_only || spec.kind == probes::ComponentKind::headers) &&
        std::find(names.begin(), names.end(), spec.name) == names.end()) {
      names.emplace_back(spec.name);
    }
  }
  return names;
}

std::optional<std::string> find_target(std::string_view name, bool headers_only) {
  const probes::ComponentSpec* spec = nullptr;
  if (name.find('/') != std::string_view::npos) {
    const auto named = probes::components_named(name);
    spec = named.size() == 1 && (!headers_only || named.front()->kind == probes::ComponentKind::headers)
               ? named.front()
               : nullptr;
  } else {
    spec = probes::find_component(name, headers_only ? std::optional(probes::ComponentKind::headers)
                                                     : std::nullopt);
  }
  if (spec == nullptr) {
    return std::nullopt;
  }
  return std::string(probes::to_string(spec->kind)) + "/" + std::string(spec->name);
}

std::optional<std::string> library_differing_in_case(std::string_view name) {
  if (name.find('/') != std::string_view::npos ||
      probes::find_component(name, probes::ComponentKind::dynamic_lib) != nullptr ||
      probes::find_component(name, probes::ComponentKind::headers) == nullptr) {
    return std::nullopt;
  }
  const auto folded = [](std::string_view text) {
    std::string out(text);
    std::transform(out.begin(), out.end(), out.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return out;
  };
  for (const auto& spec : probes::catalog()) {
    if (spec.kind == probes::ComponentKind::dynamic_lib && folded(spec.name) == folded(name)) {
      return std::string(spec.name);
    }
  }
  return std::nullopt;
}

std::vector<std::string> framework_names() {
  std::vector<std::string> names;
  for (const auto name : linkage::modelled_frameworks()) {
    names.emplace_back(name);
  }
  return names;
}

std::optional<std::string> closest_component_name(std::string_view name) {
  const auto closest = probes::closest_name(name);
  return closest ? std::optional<std::string>(*closest) : std::nullopt;
}

std::vector<std::string> self_test_keys() {
  std::vector<std::string> keys;
  for (const auto& info : selftest::test_catalog()) {
    keys.emplace_back(info.key);
  }
  return keys;
}

namespace {
report::TextStyle text_style(const Terminal& terminal) {
  return {terminal.color, std::max(terminal.width, k_min_width), terminal.full};
}
} // namespace

std::vector<std::string> render_json_pieces(const Report& report) {
  const auto* data = detail::Access::data(report);
  if (data == nullptr) {
    return {std::string("{}\n")}; // as to_json() writes a report without data
  }
  return report::render_json_pieces(data->report);
}

std::string render_text(const Report& report, const Terminal& terminal) {
  return report::render_text(core(report), text_style(terminal));
}

std::string render_selftest_text(const Report& report, const Terminal& terminal) {
  return report::render_selftest_text(core(report), text_style(terminal));
}

FixOutput render_fix(const Report& report, bool json) {
  const auto& data = core(report);
  return {report::has_fix(data), json ? report::render_fix_json(data) : report::render_fix_script(data)};
}

std::string render_candidates(const Report& report, const Terminal& terminal) {
  const auto& components = core(report).discovery.components;
  return components.empty() ? std::string()
                            : report::render_candidates(components.front(), text_style(terminal));
}

std::string render_explanation(const Report& report, const Terminal& terminal) {
  const auto& data = core(report);
  const auto& components = data.discovery.components;
  if (components.empty()) {
    return "";
  }
  const linkage::ComponentLinkage* closures = nullptr;
  for (const auto& component : data.linkage.components) {
    if (component.spec == components.front().spec) {
      closures = &component;
    }
  }
  return report::render_explanation(components.front(), text_style(terminal), closures);
}

std::string render_inspection_text(const ProcessInspection& inspection, const Terminal& terminal) {
  const auto* data = detail::Access::data(inspection);
  const auto style = text_style(terminal);
  return data == nullptr
             ? std::string()
             : report::fit_lines(inspect::render_inspection_text(data->inspection, style), style.width);
}

std::string wrap_text(std::string_view text, std::size_t width, std::string_view first_prefix,
                      std::string_view continuation_prefix) {
  return report::wrap(text, width, first_prefix, continuation_prefix);
}

std::string shorten_middle(std::string_view text, std::size_t width) {
  return report::ellipsize_middle(text, width);
}

std::vector<std::string> finding_ids() {
  return findings::documented_ids();
}

std::optional<std::string> explain_finding(std::string_view id, const Terminal& terminal) {
  const auto text = findings::reference_text(id);
  if (!text) {
    return std::nullopt;
  }
  // The heading in bold, then each paragraph of the reference wrapped (a blank line between).
  const auto style = text_style(terminal);
  std::string out;
  std::string paragraph;
  bool first = true;
  const auto flush = [&] {
    if (!paragraph.empty()) {
      out += report::wrap(paragraph, style.width, "  ", "  ");
      paragraph.clear();
    }
  };
  std::size_t start = 0;
  while (start < text->size()) {
    const auto end = std::min(text->find('\n', start), text->size());
    const std::string_view line(text->data() + start, end - start);
    if (first) {
      out += report::paint(style, report::k_bold, line) + "\n";
      first = false;
    } else if (line.empty()) {
      flush();
      out += "\n";
    } else if (line.starts_with("Severity rule") || line.starts_with("Evidence") ||
               line.starts_with("Remedy")) {
      flush(); // the reference's labelled parts each start a paragraph of their own
      paragraph = std::string(line);
    } else if (line.starts_with("- ") || line.starts_with("* ")) {
      flush();
      out += report::wrap(line.substr(2), style.width, "  - ", "    ");
    } else {
      paragraph += (paragraph.empty() ? "" : " ") + std::string(line);
    }
    start = end + 1;
  }
  flush();
  return report::fit_lines(report::escape_controls(out, style), style.width);
}

std::optional<std::string> explain_finding_json(std::string_view id) {
  const auto text = findings::reference_text(id);
  if (!text) {
    return std::nullopt;
  }
  const auto* definition = findings::find_definition(id);
  nlohmann::ordered_json out;
  out["id"] = std::string(id);
  out["severity"] = definition != nullptr
                        ? nlohmann::ordered_json(std::string(findings::to_string(definition->severity)))
                        : nlohmann::ordered_json(nullptr);
  out["summary"] = definition != nullptr ? nlohmann::ordered_json(std::string(definition->summary))
                                         : nlohmann::ordered_json(nullptr);
  out["remedy"] = definition != nullptr ? nlohmann::ordered_json(std::string(definition->remedy))
                                        : nlohmann::ordered_json(nullptr);
  out["repair"] = definition != nullptr
                      ? nlohmann::ordered_json(std::string(findings::to_string(definition->repair)))
                      : nlohmann::ordered_json(nullptr);
  out["reference"] = *text;
  return out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

std::string version_json() {
  const nlohmann::ordered_json out = {
      {"name", "cudadiag"}, {"version", CUDADIAG_VERSION}, {"schema_version", report::k_schema_version}};
  return out.dump(2) + "\n";
}

std::optional<std::string> closest_match(std::string_view word, const std::vector<std::string>& choices) {
  // Damerau-Levenshtein (optimal string alignment), case-insensitive.
  const auto lower = [](char c) { return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c); };
  const auto distance = [&](std::string_view a, std::string_view b) {
    std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
    for (std::size_t i = 0; i <= a.size(); ++i) {
      d[i][0] = i;
    }
    for (std::size_t j = 0; j <= b.size(); ++j) {
      d[0][j] = j;
    }
    for (std::size_t i = 1; i <= a.size(); ++i) {
      for (std::size_t j = 1; j <= b.size(); ++j) {
        const std::size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
        d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
        if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) && lower(a[i - 2]) == lower(b[j - 1])) {
          d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
        }
      }
    }
    return d[a.size()][b.size()];
  };
  const auto stripped = [](std::string_view text) {
    while (text.starts_with('-')) {
      text.remove_prefix(1);
    }
    return text;
  };
  const auto limit = std::max<std::size_t>(1, stripped(word).size() / 3);
  std::optional<std::string> best;
  std::size_t best_distance = limit + 1;
  for (const auto& choice : choices) {
    const auto d = distance(stripped(word), stripped(choice));
    if (d < best_distance || (d == best_distance && best && stripped(choice).starts_with(stripped(word)))) {
      best = choice;
      best_distance = d;
    }
  }
  // A prefix of exactly one choice ("--expl" for "--explain") counts too.
  if (!best && !stripped(word).empty()) {
    for (const auto& choice : choices) {
      if (stripped(choice).starts_with(stripped(word)) && word.starts_with('-') == choice.starts_with('-')) {
        if (best) {
          return std::nullopt;
        }
        best = choice;
      }
    }
  }
  return best;
}

std::string to_valid_utf8(std::string_view text) {
  return report::to_valid_utf8(text);
}

std::string escape_controls(std::string_view text) {
  return report::escape_controls(text, {});
}

std::string error_document(std::string_view message, int exit_code) {
  return report::error_document(message, exit_code).dump(2) + "\n";
}

std::vector<OutputFormat> output_formats() {
  std::vector<OutputFormat> out;
  for (const auto& format : report::output_formats()) {
    out.push_back({std::string(format.flag), std::string(format.help)});
  }
  return out;
}

std::optional<std::string> write_outputs(const Report& report, const std::vector<OutputFile>& files) {
  if (files.empty()) {
    return std::nullopt;
  }
  const auto& done = core(report);
  const auto document = report::report_to_json(done);
  for (const auto& format : report::output_formats()) {
    for (const auto& file : files) {
      if (file.flag != format.flag) {
        continue;
      }
      if (auto written = output::write_output_file(file.path, format.render(document, done.summary.fail_on));
          !written) {
        return written.error().message;
      }
    }
  }
  return std::nullopt;
}

std::optional<OutputFile> output_on_standard_output(const std::vector<OutputFile>& files) {
  for (const auto& file : files) {
    if (output::is_standard_output(file.path)) {
      return file;
    }
  }
  return std::nullopt;
}

StyledExit styled_exit(const Report& report, std::string_view style, bool json) {
  const auto exit_style = report::parse_exit_style(style).value_or(report::ExitStyle::cudadiag);
  const auto& done = core(report);
  StyledExit out;
  out.exit_code = report::styled_exit_code(exit_style, done.summary.exit_code, done.summary.errors,
                                           done.summary.warnings);
  if (exit_style != report::ExitStyle::cudadiag && !json) {
    out.status_line = report::status_line(exit_style, report::report_to_json(done), out.exit_code);
  }
  return out;
}

BundleWritten write_bundle(const Report& report, const BundleRequest& request) {
  const auto& done = core(report);
  const auto document = report::report_to_json(done);
  bundle::BundleOptions options;
  options.output = request.output;
  options.redaction.paths = request.redact_paths;
  options.sources.nvidia_smi_timeout =
      std::chrono::milliseconds(static_cast<long long>(request.smi_timeout_seconds * 1000.0));
  options.created_unix = static_cast<std::int64_t>(std::time(nullptr));
  options.fail_on = done.summary.fail_on;
  const auto written = bundle::write_bundle(document, done.environment, options);
  if (!written) {
    throw Exception(written.error().message + " (nothing was written)");
  }
  BundleWritten out;
  out.path = written->path;
  nlohmann::json not_collected = nlohmann::json::array();
  for (const auto& item : written->not_collected) {
    not_collected.push_back({{"what", item.what}, {"why", item.why}});
    out.notes.push_back(item.what + ": " + item.why);
  }
  const nlohmann::json answer = {{"bundle", written->path},        {"bytes", written->bytes},
                                 {"files", written->files},        {"redacted", written->redacted.to_json()},
                                 {"not_collected", not_collected}, {"summary", document["summary"]}};
  out.json = answer.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  return out;
}

DiffOutcome diff(const DiffRequest& request, bool json, const Terminal& terminal) {
  const auto a = diff::load_report(request.a, "A");
  if (!a) {
    throw Exception(a.error().message);
  }
  const auto b = diff::load_report(request.b, "B");
  if (!b) {
    throw Exception(b.error().message);
  }
  if (const auto problem = diff::incomparable(*a, *b)) {
    throw Exception(*problem);
  }
  auto result = diff::diff_reports(a->document, b->document, {request.tolerance_percent / 100.0});
  result.a.label = a->label;
  result.a.kind = a->kind;
  result.b.label = b->label;
  result.b.kind = b->kind;
  DiffOutcome out;
  out.equivalent = result.equivalent();
  out.rendered =
      json ? diff::diff_to_json(result).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"
           : report::fit_lines(diff::render_diff_text(result, text_style(terminal)),
                               text_style(terminal).width);
  return out;
}

std::string_view fleet_parser() {
  return fleet::parser_name();
}

std::optional<std::string> faster_fleet_program(const std::string& executable) {
  if (fleet::parser_name() == "simdjson") {
    return std::nullopt;
  }
  const auto here = fs::parent(executable);
  for (const auto& candidate : {fs::join(here, "cudadiag-fleet"),
                                fs::lexically_normal(fs::join(here, CUDADIAG_BINDIR_TO_FLEET_PROGRAM))}) {
    if (fs::is_executable_file(candidate)) {
      return candidate;
    }
  }
  return std::nullopt;
}

FleetOutcome fleet(const FleetRequest& request, bool json, const Terminal& terminal) {
  constexpr int k_exit_usage = 2;
  FleetOutcome out;
  fleet::FleetBuilder builder;
  if (const auto read = fleet::read_inputs(request.inputs, stdin, builder); !read) {
    out.errors.push_back(read.error().message);
    out.exit_code = k_exit_usage;
    return out;
  }
  fleet::FleetOptions settings;
  settings.tolerance_percent = request.tolerance_percent;
  if (builder.node_count() == 0) {
    const auto summary = std::move(builder).finish(settings);
    for (const auto& problem : summary.problems) {
      out.errors.push_back(problem.source +
                           (problem.line > 0 ? " line " + std::to_string(problem.line) : "") + ": " +
                           problem.message);
    }
    out.errors.emplace_back(
        "no cudadiag report in the input (expected the output of cudadiag --json, report files or bundles)");
    out.exit_code = k_exit_usage;
    return out;
  }
  const auto summary = std::move(builder).finish(settings);
  if (!request.html.empty()) {
    if (const auto written = output::write_output_file(request.html, fleet::render_fleet_html(summary));
        !written) {
      out.errors.push_back(written.error().message);
      out.exit_code = k_exit_usage;
      return out;
    }
  }
  out.rendered =
      json
          ? fleet::fleet_to_json(summary).dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n"
          // Host and device names come from other machines: no escape sequence of theirs
          // reaches the terminal.
          : report::fit_lines(report::escape_controls(fleet::render_fleet_text(summary, text_style(terminal)),
                                                      text_style(terminal)),
                              text_style(terminal).width);
  out.exit_code = summary.exit_code;
  return out;
}

} // namespace cudadiag::cli_support
