#include "report/text_report.hpp"

#include "report/closure_text.hpp"
#include "report/framework_text.hpp"
#include "report/json_report.hpp"
#include "report/text_layout.hpp"

#include <algorithm>
#include <array>
#include <cstdio>

namespace cudadiag::report {
namespace {

std::string kind_label(probes::ComponentKind kind) {
  switch (kind) {
  case probes::ComponentKind::dynamic_lib: return "lib";
  case probes::ComponentKind::headers: return "headers";
  case probes::ComponentKind::binary: return "binary";
  case probes::ComponentKind::static_lib: return "static";
  case probes::ComponentKind::bitcode_lib: return "bitcode";
  }
  return "?";
}

std::string version_of(const discovery::Candidate* candidate) {
  return candidate != nullptr && candidate->version ? candidate->version->version : "-";
}

std::string spaces(std::size_t count) {
  return std::string(count, ' ');
}

// A section title, and an optional note after it (wrapped under the title when it does not fit).
std::string heading(TextStyle style, std::string_view title, std::string_view note = {}) {
  if (note.empty()) {
    return "\n" + paint(style, k_bold, title) + "\n";
  }
  return "\n" + wrap(paint(style, k_bold, title) + "  " + std::string(note), style.width, "", "  ");
}

std::string verdict(const Report& report, TextStyle style) {
  const auto& summary = report.summary;
  std::string counts = std::to_string(summary.errors) + " error(s), " + std::to_string(summary.warnings) +
                       " warning(s), " + std::to_string(summary.infos) + " note(s)";
  const auto status = summary.status();
  const auto color = status == "error" ? k_red : status == "warning" ? k_yellow : k_green;
  std::string label = status == "error" ? "PROBLEMS FOUND" : status == "warning" ? "WARNINGS" : "OK";
  std::size_t found = 0;
  for (const auto& component : report.discovery.components) {
    found += component.status == discovery::ComponentStatus::found ? 1 : 0;
  }
  const std::string line =
      paint(style, k_bold, "cudadiag " CUDADIAG_VERSION ":") + " " + paint(style, color, label) + " — " + counts +
      "; " + std::to_string(found) + "/" + std::to_string(report.discovery.components.size()) +
      " components found" +
      (report.verification.ran ? "; core libraries loaded in isolated workers"
                               : " (files inspected only; nothing was loaded)");
  return wrap(line, style.width, "", "  ");
}

std::string components_table(const Report& report, TextStyle style) {
  std::string out = heading(style, "Components",
                            "(path: what CUDA Python loads; native: what dlopen/PATH gives, when different)");
  TextTable table;
  table.header = {"NAME", "KIND", "VERSION", "FOUND VIA", "PATH"};
  table.flexible = 4;
  std::vector<std::string> notes;
  std::string not_found; // named on one wrapped line under the table, not a row each
  std::size_t not_found_count = 0;
  const auto add = [&](std::vector<std::string> row, std::string_view color, std::string note) {
    table.rows.push_back(std::move(row));
    table.flexible_color.emplace_back(color);
    notes.push_back(std::move(note));
  };
  for (const auto& component : report.discovery.components) {
    const auto* python = component.selected_candidate();
    const auto* native = component.loader_candidate();
    const auto* shown = python != nullptr ? python : native;
    const auto& choice = python != nullptr ? component.selected : component.loader;
    std::string where;
    std::string via = "-";
    std::string_view where_color;
    std::string note;
    if (shown != nullptr) {
      where = to_valid_utf8(choice->via.path);
      via = choice->via.found_via;
      if (python == nullptr) {
        via += " (native only)";
      }
      if (shown->is_stub) {
        note += paint(style, k_red, "[stub]");
      }
      if (choice->fails) {
        const bool says_crash = choice->fails->find("crashes (SIGBUS)") != std::string::npos;
        note += (note.empty() ? "" : " ") +
                paint(style, k_red,
                      "[" + (says_crash ? std::string() : std::string(probes::to_string(choice->outcome)) + ": ") +
                          to_valid_utf8(*choice->fails) + "]");
      }
    } else if (component.status == discovery::ComponentStatus::error) {
      where = "error: no usable candidate";
      where_color = k_red;
    } else {
      const auto kind = kind_label(component.spec->kind);
      not_found += (not_found.empty() ? "" : ", ") + std::string(component.spec->name) +
                   (kind == "lib" ? "" : " (" + kind + ")");
      ++not_found_count;
      continue;
    }
    add({std::string(component.spec->name), kind_label(component.spec->kind), version_of(shown), via, where},
        where_color, note);
    if (python != nullptr && native != nullptr && python != native) {
      add({"", "", version_of(native), component.loader->via.found_via,
           "native: " + to_valid_utf8(component.loader->via.path)},
          k_yellow, "");
    }
  }
  table.notes = std::move(notes);
  out += render_table(table, style.width, style.color);
  if (not_found_count > 0) {
    out += "\n" + wrap(paint(style, k_dim, "not found (" + std::to_string(not_found_count) + "):") + " " + not_found,
                style.width, "  ", "    ");
  }
  return out;
}

// What a loaded library said about its own version, in a short form.
std::string reported_version(const verify::LibraryStep& step) {
  const auto cuda_version = [](int value) {
    return "CUDA " + std::to_string(value / 1000) + "." + std::to_string((value % 1000) / 10);
  };
  if (const auto* nvrtc = std::get_if<verify::NvrtcFacts>(&step.facts); nvrtc != nullptr && nvrtc->version) {
    return *nvrtc->version;
  }
  if (const auto* nvjitlink = std::get_if<verify::NvJitLinkFacts>(&step.facts);
      nvjitlink != nullptr && nvjitlink->version) {
    return *nvjitlink->version;
  }
  if (const auto* cudart = std::get_if<verify::CudartFacts>(&step.facts)) {
    if (cudart->runtime_version) {
      return cuda_version(*cudart->runtime_version);
    }
    if (cudart->driver_version) {
      return cuda_version(*cudart->driver_version);
    }
  }
  if (const auto* driver = std::get_if<verify::DriverFacts>(&step.facts); driver != nullptr && driver->driver_version) {
    return cuda_version(*driver->driver_version);
  }
  if (const auto* nvml = std::get_if<verify::NvmlFacts>(&step.facts); nvml != nullptr && nvml->driver_version) {
    return *nvml->driver_version;
  }
  return "-";
}

std::string verification_section(const Report& report, TextStyle style) {
  const auto& verification = report.verification;
  std::string out = heading(style, "Loaded in isolated workers");
  if (!verification.ran) {
    return out + wrap("skipped: " + to_valid_utf8(verification.skipped_reason), style.width, "  ", "    ");
  }
  TextTable table;
  for (const auto& step : verification.steps) {
    std::string state = step.status;
    const auto* facts = verify::load_facts(step.facts);
    const auto* driver = std::get_if<verify::DriverFacts>(&step.facts);
    if (step.status == "ok" && facts != nullptr && !facts->loaded) {
      state = "load failed";
    } else if (step.status == "ok" && driver != nullptr && driver->init && driver->init->code != 0) {
      state = "cuInit: " + driver->init->name.value_or("error " + std::to_string(driver->init->code));
    }
    const auto color = state == "ok" ? k_green : k_red;
    table.rows.push_back({step.id, to_valid_utf8(reported_version(step)),
                          std::to_string(static_cast<long long>(step.elapsed_ms)) + " ms",
                          paint(style, color, to_valid_utf8(state))});
    table.notes.push_back(step.status != "ok" ? to_valid_utf8(step.detail) : std::string());
  }
  return out + render_table(table, style.width, style.color);
}

std::string devices_section(const Report& report, TextStyle style) {
  const auto& devices = report.verification.devices;
  if (!report.verification.ran) {
    return "";
  }
  std::string out = heading(style, "Devices");
  if (devices.empty()) {
    return out + "  none visible to CUDA\n";
  }
  const auto number = [](const std::optional<unsigned>& value) { return value ? std::to_string(*value) : "null"; };
  for (const auto& device : devices) {
    const auto* driver = device.driver ? &*device.driver : nullptr;
    const bool queried = driver != nullptr && !driver->error; // cuDeviceGet worked: every field was asked
    const auto ordinal = driver != nullptr ? std::to_string(driver->ordinal) : std::string("-");
    const std::string name = driver != nullptr ? driver->name.value_or("?")
                                               : (device.nvml ? device.nvml->name.value_or("") : std::string());
    std::string line = "GPU " + ordinal + "  " + name;
    if (queried) {
      line += "  cc " + driver->compute_capability.value_or("?");
      if (driver->sm_count) {
        line += "  " + std::to_string(*driver->sm_count) + " SMs";
      }
      if (driver->total_memory_bytes) {
        line += "  " + std::to_string(static_cast<double>(*driver->total_memory_bytes) / 1e9).substr(0, 5) + " GB";
      }
      if (driver->peak_bandwidth_gbps) {
        line += "  peak " + std::to_string(static_cast<long long>(*driver->peak_bandwidth_gbps)) + " GB/s";
      }
    }
    out += wrap(to_valid_utf8(line), style.width, "  ", "    ");
    if (queried) {
      out += wrap(to_valid_utf8(driver->pci_bus_id.value_or("") + "  " + driver->uuid.value_or("")), style.width,
                  "    ", "    ");
    } else if (driver == nullptr) {
      out += wrap(to_valid_utf8(device.nvml ? device.nvml->uuid.value_or("") : std::string()), style.width, "    ",
                  "    ");
    }
    if (device.nvml && device.nvml->pcie) {
      const auto& pcie = *device.nvml->pcie;
      out += "    PCIe gen " + number(pcie.gen_current) + " x" + number(pcie.width_current) + " (max gen " +
             number(pcie.gen_max) + " x" + number(pcie.width_max) + ")\n";
    }
  }
  return out;
}

std::string format_figure(double value) {
  std::array<char, 32> buffer{};
  static_cast<void>(std::snprintf(buffer.data(), buffer.size(), value >= 100 ? "%.0f" : value >= 10 ? "%.1f" : "%.3g", value));
  return buffer.data();
}

std::string selftest_section(const Report& report, TextStyle style) {
  const auto& run = report.selftest;
  if (!run.ran && run.skipped_reason.empty()) {
    return "";
  }
  const std::string title = "GPU self-test (" + std::string(selftest::level_name(run.level)) + ")";
  if (!run.ran) {
    return heading(style, title) + wrap("skipped: " + to_valid_utf8(run.skipped_reason), style.width, "  ", "    ");
  }
  const auto status = run.status();
  // How many tests ran on a GPU (a skipped test or jit's compile-only pass without one is no run).
  std::size_t ran = 0;
  for (const auto& test : run.tests) {
    ran += test.status != "skip" && test.status != "not_run" && test.device ? 1U : 0U;
  }
  std::string summary = paint(style, status == "fail" ? k_red : status == "pass" ? k_green : k_yellow, status) +
                        " — " + std::to_string(ran) + " of " + std::to_string(run.tests.size()) + " ran on a GPU";
  if (run.score.value) {
    summary += "  score " + format_figure(*run.score.value) + "/100";
  }
  summary += "  (" + std::to_string(static_cast<long long>(run.wall_ms)) + " ms)";
  std::string out = heading(style, title, summary);
  TextTable table;
  for (const auto& test : run.tests) {
    const auto color = test.status == "pass" ? k_green : test.status == "skip" ? k_yellow : k_red;
    std::string figure;
    if (test.primary) {
      figure = test.primary->name + " " + format_figure(test.primary->value) + " " + test.primary->unit;
    }
    table.rows.push_back({test.key, test.device ? "GPU " + std::to_string(*test.device) : "-",
                          paint(style, color, test.status), to_valid_utf8(figure),
                          std::to_string(static_cast<long long>(test.wall_ms)) + " ms"});
    table.notes.push_back(to_valid_utf8(test.reason));
  }
  out += render_table(table, style.width, style.color);
  if (run.module && !run.module->built()) {
    out += wrap("note: " + to_valid_utf8(run.module->reason), style.width, "  ", "    ");
  }
  return out;
}

std::string python_section(const Report& report, TextStyle style) {
  std::string out = heading(style, "Python environments searched");
  if (report.discovery.python_error) {
    out += wrap(paint(style, k_red, "--python failed: " + to_valid_utf8(*report.discovery.python_error)),
                style.width, "  ", "    ");
  }
  if (report.discovery.python.environments.empty()) {
    out += "  none found\n";
  } else if (const auto& primary = report.discovery.python.environments.front(); primary.primary) {
    const auto who = to_valid_utf8(primary.interpreter.empty() ? primary.prefix : primary.interpreter);
    const std::string why = primary.label == "--python" ? " (--python)" : " (what python3 runs here)";
    const std::string lead = "answers for ";
    const auto room = style.width > 2 + lead.size() + why.size() ? style.width - 2 - lead.size() - why.size() : 0;
    out += "  " + lead + ellipsize_middle(who, std::max<std::size_t>(room, 16)) + why + "\n";
  }
  TextTable table;
  table.flexible = 1;
  for (const auto& environment : report.discovery.python.environments) {
    table.rows.push_back({environment.primary ? "*" : " ", to_valid_utf8(environment.prefix),
                          "(" + to_valid_utf8(environment.label) +
                              (environment.version.empty() ? "" : ", Python " + environment.version) +
                              (environment.is_venv ? ", venv" : "") + ")"});
  }
  out += render_table(table, style.width, style.color);
  const auto& cache = report.discovery.ld_cache;
  const std::string state = cache.error ? paint(style, k_red, "unreadable: " + to_valid_utf8(*cache.error))
                                        : std::to_string(cache.entries) + " entries";
  const auto state_width = display_width(state);
  const std::string title = "Loader cache  ";
  const auto room = style.width > title.size() + 2 + state_width ? style.width - title.size() - 2 - state_width : 0;
  if (room >= 16) {
    out += paint(style, k_bold, "Loader cache") + "  " + ellipsize_middle(to_valid_utf8(cache.path), room) + ": " +
           state + "\n";
  } else {
    out += paint(style, k_bold, "Loader cache") + "\n" +
           wrap(to_valid_utf8(cache.path) + ": " + state, style.width, "  ", "    ");
  }
  return out;
}

std::string findings_section(const Report& report, TextStyle style) {
  if (report.findings.empty()) {
    return heading(style, "Findings") + "  none\n";
  }
  auto ordered = report.findings;
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.severity > b.severity; });
  std::string out = heading(style, "Findings");
  for (const auto& finding : ordered) {
    std::string label(findings::to_string(finding.severity));
    std::transform(label.begin(), label.end(), label.begin(), [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    out += wrap(paint(style, severity_color(finding.severity), pad(label, 8)) + paint(style, k_bold, finding.id),
                style.width, "  ", "    ");
    out += wrap(to_valid_utf8(finding.message), style.width, "    ", "    ");
    out += wrap(to_valid_utf8(finding.remedy), style.width, "    remedy: ", spaces(12));
  }
  return out;
}

std::string markers(const discovery::ComponentResult& component, std::size_t index) {
  std::string out;
  if (component.selected && component.selected->candidate == index) {
    out += "python";
  }
  if (component.loader && component.loader->candidate == index) {
    out += out.empty() ? "native" : "+native";
  }
  return out.empty() ? "-" : out;
}

// Escapes first (a \xNN is four columns), then fits: every line is within style.width.
std::string finish(std::string_view text, TextStyle style) {
  return fit_lines(escape_controls(text, style), style.width);
}

} // namespace

std::string render_text(const Report& report, TextStyle style) {
  return finish(verdict(report, style) + components_table(report, style) + verification_section(report, style) +
                    render_closures_section(report.linkage, style) + devices_section(report, style) + selftest_section(report, style) + python_section(report, style) +
                    render_frameworks_section(report, style) +
                    findings_section(report, style),
                style);
}

std::string render_selftest_text(const Report& report, TextStyle style) {
  return finish(verdict(report, style) + devices_section(report, style) + selftest_section(report, style) +
                    findings_section(report, style),
                style);
}

std::string chosen_path(const discovery::ComponentResult& component) {
  if (component.selected) {
    return component.selected->via.path;
  }
  if (component.loader) {
    return component.loader->via.path;
  }
  return "";
}

namespace {

// Each found_via once, in the order of the sightings.
std::string found_via_list(const discovery::Candidate& candidate, std::string_view separator) {
  std::vector<std::string> seen{candidate.first.found_via};
  for (const auto& sighting : candidate.also_found_as) {
    if (std::find(seen.begin(), seen.end(), sighting.found_via) == seen.end()) {
      seen.push_back(sighting.found_via);
    }
  }
  std::string out;
  for (const auto& via : seen) {
    out += (out.empty() ? "" : std::string(separator)) + via;
  }
  return out;
}

bool searched_by_pathfinder(const discovery::Candidate& candidate) {
  if (candidate.first.pathfinder_step != discovery::PathfinderStep::none) {
    return true;
  }
  return std::any_of(candidate.also_found_as.begin(), candidate.also_found_as.end(), [](const auto& sighting) {
    return sighting.pathfinder_step != discovery::PathfinderStep::none;
  });
}

bool searched_by_loader(const discovery::Candidate& candidate) {
  if (candidate.first.loader_step != discovery::LoaderStep::none) {
    return true;
  }
  return std::any_of(candidate.also_found_as.begin(), candidate.also_found_as.end(), [](const auto& sighting) {
    return sighting.loader_step != discovery::LoaderStep::none;
  });
}

// Why candidate `index` is or is not an answer, in a few words.
std::string candidate_verdict(const discovery::ComponentResult& component, std::size_t index) {
  const auto& candidate = component.candidates[index];
  const bool python = component.selected && component.selected->candidate == index;
  const bool native = component.loader && component.loader->candidate == index;
  std::string out;
  if (python || native) {
    out = python && native ? "both answers" : python ? "the python answer" : "the native answer";
    const auto& fails = python ? component.selected->fails : component.loader->fails;
    if (fails) {
      out += ", " + std::string(probes::to_string((python ? component.selected : component.loader)->outcome)) + ": " + *fails;
    }
  } else if (candidate.rejected) {
    out = "rejected: " + *candidate.rejected;
  } else if (!searched_by_pathfinder(candidate) && !searched_by_loader(candidate)) {
    out = "not taken: neither cuda-pathfinder nor the loader looks there";
  } else {
    out = "not taken: an earlier place has the answer";
  }
  if (candidate.is_stub) {
    out += " (toolkit stub)";
  }
  return out;
}

// The decision for one answer, and why there is none when there is none.
std::string decision(const discovery::ComponentResult& component, const std::optional<discovery::Choice>& choice,
                     bool python) {
  if (choice) {
    return to_valid_utf8(choice->via.path) + " — " + to_valid_utf8(choice->reason) +
           (choice->fails ? "; " + std::string(probes::to_string(choice->outcome)) + ": " + to_valid_utf8(*choice->fails) : "");
  }
  std::size_t reachable = 0;
  std::size_t rejected = 0;
  for (const auto& candidate : component.candidates) {
    if (python ? searched_by_pathfinder(candidate) : searched_by_loader(candidate)) {
      ++reachable;
      rejected += candidate.rejected ? 1U : 0U;
    }
  }
  const std::string who = python ? "cuda-pathfinder" : "the loader";
  if (reachable == 0) {
    return "none — no file in the places " + who + " searches (listed above, in order)" +
           (component.candidates.empty() ? std::string()
                                         : "; the " + std::to_string(component.candidates.size()) +
                                               " candidate(s) are where it does not look");
  }
  return "none — " + std::to_string(reachable) + " file(s) where " + who + " looks, " + std::to_string(rejected) +
         " of them unusable (see the candidates)";
}

} // namespace

std::string render_candidates(const discovery::ComponentResult& component, TextStyle style) {
  std::string out;
  for (std::size_t i = 0; i < component.candidates.size(); ++i) {
    const auto& candidate = component.candidates[i];
    std::string line = to_valid_utf8(candidate.first.path) + "\t" + markers(component, i) + "\t" +
                       version_of(&candidate) +
                       (candidate.version ? " (" + std::string(versions::to_string(candidate.version->source)) + ")" : "") +
                       "\t" + found_via_list(candidate, ",");
    if (candidate.is_stub) {
      line += "\tstub";
    }
    if (candidate.rejected) {
      line += "\t" + paint(style, k_red, "rejected: " + to_valid_utf8(*candidate.rejected));
    }
    out += line + "\n";
  }
  return escape_controls(out, style);
}

std::string render_explanation(const discovery::ComponentResult& component, TextStyle style,
                               const linkage::ComponentLinkage* linkage) {
  std::string out = wrap(paint(style, k_bold, std::string(component.spec->name) + " (" + kind_label(component.spec->kind) + ")") +
                             ": " + std::string(component.spec->description),
                         style.width, "", "  ");
  out += heading(style, "Searched, in order", "(what each place held, and why it gave no answer)");
  std::size_t step = 0;
  const auto number_width = std::to_string(component.trace.size()).size();
  for (const auto& line : component.trace) {
    auto number = std::to_string(++step);
    number.insert(0, number_width - number.size(), ' ');
    out += wrap(to_valid_utf8(line), style.width, "  " + number + "  ", spaces(4 + number_width + 2));
  }
  if (component.trace.empty()) {
    out += "  (no search location exists on this machine)\n";
  }
  out += heading(style, "Candidates");
  if (component.candidates.empty()) {
    out += "  none: no file of this name in any place searched\n";
  } else {
    TextTable table;
    table.header = {"#", "VERSION", "FROM", "FOUND VIA", "PATH"};
    table.flexible = 4;
    table.keep_whole = true; // --explain shows whole paths: one that does not fit goes under its row
    for (std::size_t i = 0; i < component.candidates.size(); ++i) {
      const auto& candidate = component.candidates[i];
      const auto verdict = candidate_verdict(component, i);
      const bool answer = verdict.starts_with("the ") || verdict.starts_with("both");
      table.rows.push_back({std::to_string(i + 1), version_of(&candidate),
                            candidate.version ? std::string(versions::to_string(candidate.version->source)) : "-",
                            found_via_list(candidate, ", "), to_valid_utf8(candidate.first.path)});
      table.notes.push_back(paint(style, answer ? k_green : candidate.rejected ? k_red : k_dim, to_valid_utf8(verdict)));
    }
    out += render_table(table, style.width, style.color);
  }
  out += heading(style, "Decision");
  out += wrap(decision(component, component.selected, true), style.width, "  python (cuda-pathfinder order): ", spaces(4));
  if (component.spec->kind == probes::ComponentKind::dynamic_lib || component.spec->kind == probes::ComponentKind::binary) {
    out += wrap(decision(component, component.loader, false), style.width,
                "  native (" + std::string(component.spec->kind == probes::ComponentKind::binary ? "PATH" : "dlopen") + "): ",
                spaces(4));
  }
  if (linkage != nullptr && !linkage->closures.empty()) {
    out += heading(style, "Dependency closures", "(each answer's DT_NEEDED tree, as glibc resolves it)");
    for (const auto& closure : linkage->closures) {
      out += render_closure(closure, style);
    }
  }
  return fit_lines(escape_controls(out, style), style.width);
}

} // namespace cudadiag::report
