#include "report/text_report.hpp"

#include "report/closure_text.hpp"
#include "report/framework_text.hpp"
#include "report/json_report.hpp"
#include "report/text_layout.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <iterator>
#include <tuple>
#include <utility>

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

// Device memory in binary units, as every renderer shows it ("139.8 GiB").
std::string memory_gib(std::uint64_t bytes) {
  std::array<char, 32> buffer{};
  static_cast<void>(std::snprintf(buffer.data(), buffer.size(), "%.1f GiB",
                                  static_cast<double>(bytes) / (1024.0 * 1024.0 * 1024.0)));
  return buffer.data();
}

// "pass — 6 of 9 ran on a GPU  score 99.5/100  (2400 ms)"; a run where nothing ran on a GPU is a
// skip, however many tests passed without one ("skip — 0 of 1 ran on a GPU (1 passed without one)").
std::string selftest_summary(const selftest::SelfTestRun& run, TextStyle style);

// "the venv /opt/torch/.venv, Python 3.12 (what python3 runs here)": a venv named by its own
// prefix, not by the interpreter it links to; otherwise the interpreter.
std::string answers_for(const python::PythonEnvironment& primary) {
  const bool venv = primary.is_venv || primary.interpreter.empty();
  const std::string who =
      venv ? (primary.is_venv ? "the venv " : "the environment ") + to_valid_utf8(primary.prefix)
           : to_valid_utf8(primary.interpreter);
  const std::string version = primary.version.empty() ? "" : ", Python " + primary.version;
  const std::string why = primary.label == "--python" ? "--python" : "what python3 runs here";
  return "answers for " + who + version + " (" + why + ")";
}

std::string verdict(const Report& report, TextStyle style) {
  const auto& summary = report.summary;
  std::string counts = std::to_string(summary.errors) + " error(s), " + std::to_string(summary.warnings) +
                       " warning(s), " + std::to_string(summary.infos) + " note(s)";
  const auto status = summary.status();
  const auto color = status == SummaryStatus::error     ? k_red
                     : status == SummaryStatus::warning ? k_yellow
                                                        : k_green;
  std::string label = status == SummaryStatus::error     ? "PROBLEMS FOUND"
                      : status == SummaryStatus::warning ? "WARNINGS"
                                                         : "OK";
  std::size_t found = 0;
  for (const auto& component : report.discovery.components) {
    found += component.status == discovery::ComponentStatus::found ? 1 : 0;
  }
  const std::string line = paint(style, k_bold, "cudadiag " CUDADIAG_VERSION ":") + " " +
                           paint(style, color, label) + " — " + counts + "; " + std::to_string(found) + "/" +
                           std::to_string(report.discovery.components.size()) + " components found" +
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
  table.keep_whole = true; // the details layer shows whole paths: one that does not fit goes under its row
  table.first_column_cap = 18; // cuDNN's sub-libraries' names (cudnn_engines_runtime_compiled) go above
  std::vector<std::string> notes;
  std::string not_found; // named on one wrapped line under the table, not a row each
  std::size_t not_found_count = 0;
  const auto add = [&](std::vector<std::string> row, std::string_view color, std::string note) {
    table.rows.push_back(std::move(row));
    table.flexible_color.emplace_back(color);
    notes.push_back(std::move(note));
  };
  for (const auto& component : report.discovery.components) {
    // CUDA Python's failed load (before it raised "not found") is its answer here, not the native one.
    const auto& python_choice = component.selected ? component.selected : component.python_failed;
    const auto* python = python_choice && python_choice->candidate < component.candidates.size()
                             ? &component.candidates[python_choice->candidate]
                             : nullptr;
    const auto* native = component.loader_candidate();
    const auto* shown = python != nullptr ? python : native;
    const auto& choice = python != nullptr ? python_choice : component.loader;
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
      if (!component.selected && component.python_failed && python != nullptr) {
        // cuda-pathfinder's system search failed on this file, then it raised "not found".
        const bool native_loads = native == python && component.loader->loads();
        note += (note.empty() ? "" : " ") +
                paint(style, k_red,
                      "[CUDA Python " + std::string(probes::to_string(choice->outcome)) + ": " +
                          to_valid_utf8(choice->fails.value_or("")) +
                          (native_loads ? "; a native dlopen loads it" : "") + "]");
      } else if (choice->fails) {
        const bool says_crash = choice->fails->find("crashes (SIGBUS)") != std::string::npos;
        note +=
            (note.empty() ? "" : " ") +
            paint(style, k_red,
                  "[" +
                      (says_crash ? std::string() : std::string(probes::to_string(choice->outcome)) + ": ") +
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
    out += "\n" +
           wrap(paint(style, k_dim, "not found (" + std::to_string(not_found_count) + "):") + " " + not_found,
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
  if (const auto* driver = std::get_if<verify::DriverFacts>(&step.facts);
      driver != nullptr && driver->driver_version) {
    return cuda_version(*driver->driver_version);
  }
  if (const auto* nvml = std::get_if<verify::NvmlFacts>(&step.facts);
      nvml != nullptr && nvml->driver_version) {
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
    std::string state(worker::to_string(step.status));
    bool loaded = step.status == worker::StepStatus::ok;
    const auto* facts = verify::load_facts(step.facts);
    const auto* driver = std::get_if<verify::DriverFacts>(&step.facts);
    if (loaded && facts != nullptr && !facts->loaded) {
      state = "load failed";
      loaded = false;
    } else if (loaded && driver != nullptr && driver->init && driver->init->code != 0) {
      state = "cuInit: " + driver->init->name.value_or("error " + std::to_string(driver->init->code));
      loaded = false;
    }
    const auto color = loaded ? k_green : k_red;
    // Where the answer came from the cache of proven loads, said after the state (the last column,
    // unpadded), so that the time column stays as narrow as the live rows need.
    table.rows.push_back(
        {step.id, to_valid_utf8(reported_version(step)),
         std::to_string(static_cast<long long>(step.elapsed_ms)) + " ms",
         paint(style, color, to_valid_utf8(state)) +
             (step.proven_at ? " (from the cache, proven " + linkage::utc_time(*step.proven_at) + ")" : "")});
    table.notes.push_back(step.status != worker::StepStatus::ok ? to_valid_utf8(step.detail) : std::string());
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
  const auto number = [](const std::optional<unsigned>& value) {
    return value ? std::to_string(*value) : "null";
  };
  for (const auto& device : devices) {
    const auto* driver = device.driver ? &*device.driver : nullptr;
    const bool queried = driver != nullptr && !driver->error; // cuDeviceGet worked: every field was asked
    const auto ordinal = driver != nullptr ? std::to_string(driver->ordinal) : std::string("-");
    const std::string name = driver != nullptr
                                 ? driver->name.value_or("?")
                                 : (device.nvml ? device.nvml->name.value_or("") : std::string());
    std::string line = "GPU " + ordinal + "  " + name;
    if (queried) {
      line += "  cc " + driver->compute_capability.value_or("?");
      if (driver->sm_count) {
        line += "  " + std::to_string(*driver->sm_count) + " SMs";
      }
      if (driver->total_memory_bytes) {
        line += "  " + memory_gib(*driver->total_memory_bytes);
      }
      if (driver->peak_bandwidth_gbps) {
        line += "  peak " + std::to_string(static_cast<long long>(*driver->peak_bandwidth_gbps)) + " GB/s";
      }
    }
    out += wrap(to_valid_utf8(line), style.width, "  ", "    ");
    if (queried) {
      out += wrap(to_valid_utf8(driver->pci_bus_id.value_or("") + "  " + driver->uuid.value_or("")),
                  style.width, "    ", "    ");
    } else if (driver == nullptr) {
      out += wrap(to_valid_utf8(device.nvml ? device.nvml->uuid.value_or("") : std::string()), style.width,
                  "    ", "    ");
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
  static_cast<void>(std::snprintf(buffer.data(), buffer.size(),
                                  value >= 100  ? "%.0f"
                                  : value >= 10 ? "%.1f"
                                                : "%.3g",
                                  value));
  return buffer.data();
}

std::string selftest_summary(const selftest::SelfTestRun& run, TextStyle style) {
  const auto status = run.status();
  // How many tests ran on a GPU (a skipped test or jit's compile-only pass without one is no run).
  std::size_t ran = 0;
  std::size_t passed_without = 0;
  for (const auto& test : run.tests) {
    ran += test.status != selftest::TestStatus::skip && test.device ? 1U : 0U;
    passed_without += test.status == selftest::TestStatus::pass && !test.device ? 1U : 0U;
  }
  std::string summary = paint(style,
                              status == selftest::TestStatus::fail   ? k_red
                              : status == selftest::TestStatus::pass ? k_green
                                                                     : k_yellow,
                              std::string(selftest::to_string(status))) +
                        " — " + std::to_string(ran) + " of " + std::to_string(run.tests.size()) +
                        " ran on a GPU";
  if (passed_without > 0) {
    summary += " (" + std::to_string(passed_without) + " passed without one)";
  }
  if (run.score.value) {
    summary += "  score " + format_figure(*run.score.value) + "/100";
  }
  summary += "  (" + std::to_string(static_cast<long long>(run.wall_ms)) + " ms)";
  return summary;
}

std::string selftest_section(const Report& report, TextStyle style) {
  const auto& run = report.selftest;
  if (!run.ran && run.skipped_reason.empty()) {
    return "";
  }
  const std::string title = "GPU self-test (" + std::string(selftest::level_name(run.level)) + ")";
  if (!run.ran) {
    return heading(style, title) +
           wrap("skipped: " + to_valid_utf8(run.skipped_reason), style.width, "  ", "    ");
  }
  std::string out = heading(style, title, selftest_summary(run, style));
  TextTable table;
  for (const auto& test : run.tests) {
    const auto color = test.status == selftest::TestStatus::pass   ? k_green
                       : test.status == selftest::TestStatus::skip ? k_yellow
                                                                   : k_red;
    std::string figure;
    if (test.primary) {
      figure = test.primary->name + " " + format_figure(test.primary->value) + " " + test.primary->unit;
    }
    table.rows.push_back({test.key, test.device ? "GPU " + std::to_string(*test.device) : "-",
                          paint(style, color, selftest::to_string(test.status)), to_valid_utf8(figure),
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
    out += wrap(answers_for(primary), style.width, "  ", "    ");
  }
  TextTable table;
  table.flexible = 1;
  table.keep_whole = true;
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
  out += wrap(paint(style, k_bold, "Loader cache") + "  " + to_valid_utf8(cache.path) + ": " + state,
              style.width, "", "  ");
  return out;
}

// "    repair: reset_gpu" under a remedy, for a class other than none.
std::string repair_line(findings::Repair repair, TextStyle style) {
  if (repair == findings::Repair::none) {
    return "";
  }
  return wrap(paint(style, k_bold, std::string(findings::to_string(repair))), style.width,
              "    repair: ", spaces(12));
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
    std::transform(label.begin(), label.end(), label.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    out +=
        wrap(paint(style, severity_color(finding.severity), pad(label, 8)) + paint(style, k_bold, finding.id),
             style.width, "  ", "    ");
    out += wrap(to_valid_utf8(finding.message), style.width, "    ", "    ");
    out += wrap(to_valid_utf8(finding.remedy), style.width, "    remedy: ", spaces(12));
    out += repair_line(finding.repair, style);
  }
  return out;
}

// ---- The summary layers (the default report).

// The families of the stack summary, in the order they are shown.
enum class Family { driver, runtime, math, other, binaries };

struct FamilyRow {
  Family family;
  std::string_view title;
  std::string_view lead; // the component whose version heads the line, when found
};

// One row per family: its title and the component whose version speaks for it.
const std::array<FamilyRow, 5> k_families = {{
    {Family::driver, "driver", "cuda"}, // libcuda, NVML: the driver's own libraries
    {Family::runtime, "runtime",
     "cudart"}, // the runtime and compiler: cudart, NVRTC, nvJitLink, NVVM, CUPTI, headers
    {Family::math, "math libs", "cublas"},  // cuBLAS, cuFFT, cuRAND, cuSPARSE, NPP, nvJPEG, ...
    {Family::other, "cuDNN/NCCL", "cudnn"}, // cuDNN, NCCL and the others shipped apart from the toolkit
    {Family::binaries, "binaries", "nvcc"}, // the toolkit's nvcc, ptxas, nvdisasm, ...
}};

// The toolkit libraries that make up the runtime and the compiler chain (the rest are math libraries).
constexpr std::array<std::string_view, 6> k_runtime_libraries = {"cudart", "nvrtc",    "nvJitLink",
                                                                 "nvvm",   "nvfatbin", "cupti"};

Family family_of(const probes::ComponentSpec& spec) {
  if (spec.packaging == probes::Packaging::driver) {
    return Family::driver;
  }
  if (spec.kind == probes::ComponentKind::binary) {
    return Family::binaries;
  }
  if (spec.packaging == probes::Packaging::other) {
    return Family::other;
  }
  if (spec.kind == probes::ComponentKind::dynamic_lib &&
      std::find(k_runtime_libraries.begin(), k_runtime_libraries.end(), spec.name) ==
          k_runtime_libraries.end()) {
    return Family::math;
  }
  return Family::runtime;
}

// Where a file (or a header directory) comes from, as a user names the place: a Python
// environment's prefix for one in its site-packages, a toolkit's root for one in its lib, lib64,
// include, bin, nvvm, targets or extras directory, else its directory (/usr/lib/x86_64-linux-gnu;
// also for /usr/include and /usr/local/lib, which name no toolkit).
std::string root_of(std::string_view path, bool is_directory) {
  if (const auto site = path.find("/site-packages/"); site != std::string_view::npos) {
    const auto python = path.rfind("/lib/python", site);
    return std::string(path.substr(0, python != std::string_view::npos ? python : site + 14));
  }
  const auto directory =
      is_directory ? path : path.substr(0, path.rfind('/') == std::string_view::npos ? 0 : path.rfind('/'));
  static constexpr std::array<std::string_view, 7> k_layout = {"lib",  "lib64",   "include", "bin",
                                                               "nvvm", "targets", "extras"};
  std::size_t at = 0;
  while (at < directory.size()) {
    const auto next = std::min(directory.find('/', at + 1), directory.size());
    const auto part = directory.substr(at + 1, next - at - 1);
    if (std::find(k_layout.begin(), k_layout.end(), part) != k_layout.end()) {
      const auto root = directory.substr(0, at);
      // "/usr" or "/" would name no toolkit: the file's directory says more (/usr/lib/x86_64-linux-gnu),
      // and for headers the include directory (/usr/local/include for /usr/local/include/cccl).
      if (root.empty() || root == "/usr" || root == "/usr/local") {
        return std::string(is_directory ? directory.substr(0, next) : directory);
      }
      return std::string(root);
    }
    at = next;
  }
  return std::string(directory);
}

struct Placed {
  const discovery::ComponentResult* component = nullptr;
  const discovery::Candidate* shown = nullptr; // what CUDA Python loads, else what the loader does
  const discovery::Choice* choice = nullptr;
  std::string root;
};

std::string component_label(const discovery::ComponentResult& component) {
  return std::string(component.spec->name) +
         (component.spec->kind == probes::ComponentKind::headers ? " headers" : "");
}

// A root and who comes from it.
using Place = std::pair<std::string, std::vector<const Placed*>>;

// How a place's files were found, the most used way first, the others counted: "CUDA_HOME +1".
std::string ways_of(const Place& place) {
  std::vector<std::pair<std::string, std::size_t>> vias;
  for (const auto* item : place.second) {
    const auto& via = item->choice->via.found_via;
    auto it =
        std::find_if(vias.begin(), vias.end(), [&via](const auto& entry) { return entry.first == via; });
    if (it == vias.end()) {
      vias.emplace_back(via, 0);
      it = std::prev(vias.end());
    }
    ++it->second;
  }
  std::stable_sort(vias.begin(), vias.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return vias.front().first + (vias.size() > 1 ? " +" + std::to_string(vias.size() - 1) : "");
}

// One line of the stack: the family and how many of its components were found, the lead
// component's version, the root most of them come from and how they were found; under it the other
// roots, each with its components; then a row for each component that fails, is a stub, or that
// native programs load in another version (and a row for that native copy).
void add_family(TextTable& table, const FamilyRow& row, const std::vector<Placed>& placed, TextStyle style) {
  if (placed.empty()) {
    table.rows.push_back({std::string(row.title), paint(style, k_dim, "none found")});
    table.flexible_color.emplace_back();
    table.notes.emplace_back();
    return;
  }
  std::vector<Place> places;
  for (const auto& item : placed) {
    auto it = std::find_if(places.begin(), places.end(),
                           [&item](const auto& entry) { return entry.first == item.root; });
    if (it == places.end()) {
      places.emplace_back(item.root, std::vector<const Placed*>());
      it = std::prev(places.end());
    }
    it->second.push_back(&item);
  }
  // The place most of the family comes from first (among equals, the first seen).
  std::stable_sort(places.begin(), places.end(),
                   [](const auto& a, const auto& b) { return a.second.size() > b.second.size(); });
  std::string version = "-";
  for (const auto& item : placed) {
    if (item.component->spec->name == row.lead &&
        item.component->spec->kind != probes::ComponentKind::headers) {
      version = std::string(row.lead) + " " + version_of(item.shown);
    }
  }
  // The other places: "nvml from …/fake-nvml (LD_LIBRARY_PATH)", the root shortened at its start to fit.
  std::string elsewhere;
  for (auto it = std::next(places.begin()); it != places.end(); ++it) {
    std::string names;
    for (const auto* item : it->second) {
      names += (names.empty() ? "" : ", ") + component_label(*item->component);
    }
    const std::string ways = " (" + ways_of(*it) + ")";
    const auto used =
        6 + display_width(names) + 6 + ways.size(); // the note's indent, the names, " from ", the ways
    const auto room = style.width > used ? style.width - used : std::size_t{16};
    elsewhere += (elsewhere.empty() ? "" : "\n") + names + " from " +
                 shorten_path_start(it->first, std::max<std::size_t>(room, 16)) + ways;
  }
  table.rows.push_back({std::string(row.title) + " (" + std::to_string(placed.size()) + ")", version,
                        ways_of(places.front()), places.front().first});
  table.flexible_color.emplace_back();
  table.notes.push_back(to_valid_utf8(elsewhere));
  for (const auto& item : placed) {
    const auto& component = *item.component;
    const auto* native = component.loader_candidate();
    const bool native_differs = native != nullptr && item.shown != native && component.selected &&
                                version_of(native) != version_of(item.shown);
    const bool broken = item.shown->is_stub || item.choice->fails.has_value();
    if (!native_differs && !broken) {
      continue;
    }
    std::string what = version_of(item.shown);
    if (item.shown->is_stub) {
      what += " " + paint(style, k_red, "[stub]");
    }
    if (item.choice->fails) {
      what += " " + paint(style, k_red, "[fails]");
    }
    table.rows.push_back({"  " + component_label(component), what, item.choice->via.found_via, item.root});
    table.flexible_color.emplace_back(broken ? k_red : "");
    table.notes.emplace_back();
    if (native_differs) {
      table.rows.push_back({"    native", version_of(native), component.loader->via.found_via,
                            root_of(to_valid_utf8(component.loader->via.path), false)});
      table.flexible_color.emplace_back(k_yellow);
      table.notes.emplace_back();
    }
  }
}

std::string stack_section(const Report& report, TextStyle style) {
  std::array<std::vector<Placed>, k_families.size()> placed;
  for (const auto& component : report.discovery.components) {
    const auto* python = component.selected_candidate();
    const auto* shown = python != nullptr ? python : component.loader_candidate();
    if (shown == nullptr) {
      continue;
    }
    const auto& choice = python != nullptr ? *component.selected : *component.loader;
    placed[static_cast<std::size_t>(family_of(*component.spec))].push_back(
        {&component, shown, &choice,
         root_of(to_valid_utf8(choice.via.path), component.spec->kind == probes::ComponentKind::headers)});
  }
  std::string out = heading(style, "Stack", "(what CUDA Python loads; only the exceptions are listed)");
  TextTable table;
  table.flexible = 3; // the root, shortened at its start (whole in --full and --json)
  table.min_flexible = 16;
  for (std::size_t i = 0; i < k_families.size(); ++i) {
    add_family(table, k_families[i], placed[i], style);
  }
  return out + render_table(table, style.width, style.color);
}

// The label of a severity, in capitals.
std::string severity_label(findings::Severity severity) {
  std::string label(findings::to_string(severity));
  std::transform(label.begin(), label.end(), label.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  return label;
}

// Errors and warnings, grouped by cause: the findings about the same components (two copies of
// cuDNN: the python/native difference and the two versions) are one group, findings about no
// component one group per id and remedy. Each group: a line naming its severity, ids and
// components, its messages, then one remedy (its most severe finding's). Errors first, then the
// groups with more findings.
std::string problems_section(const Report& report, TextStyle style) {
  struct Group {
    std::vector<std::string> components; // sorted; empty: grouped by id and remedy
    std::vector<const findings::Finding*> members;
    findings::Severity severity = findings::Severity::info;
  };
  std::vector<Group> groups;
  for (const auto& finding : report.findings) {
    if (finding.severity == findings::Severity::info) {
      continue;
    }
    auto components = finding.components;
    std::sort(components.begin(), components.end());
    components.erase(std::unique(components.begin(), components.end()), components.end());
    auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& group) {
      if (!components.empty() || !group.components.empty()) {
        return group.components == components;
      }
      return group.members.front()->id == finding.id && group.members.front()->remedy == finding.remedy;
    });
    if (it == groups.end()) {
      groups.push_back({components, {}, finding.severity});
      it = std::prev(groups.end());
    }
    it->members.push_back(&finding);
    it->severity = std::max(it->severity, finding.severity);
  }
  if (groups.empty()) {
    return "";
  }
  std::stable_sort(groups.begin(), groups.end(), [](const Group& a, const Group& b) {
    return std::tuple(a.severity, a.members.size()) > std::tuple(b.severity, b.members.size());
  });
  std::string out = heading(style, "What to do first");
  for (auto& group : groups) {
    std::stable_sort(group.members.begin(), group.members.end(),
                     [](const auto* a, const auto* b) { return a->severity > b->severity; });
    std::string ids;
    for (const auto* finding : group.members) {
      if (ids.find(finding->id) == std::string::npos) {
        ids += (ids.empty() ? "" : ", ") + finding->id;
      }
    }
    std::string names;
    for (const auto& name : group.components) {
      names += (names.empty() ? "" : ", ") + name;
    }
    out += wrap(paint(style, severity_color(group.severity), pad(severity_label(group.severity), 8)) +
                    (names.empty() ? "" : paint(style, k_bold, to_valid_utf8(names)) + "  ") +
                    paint(style, k_dim, ids),
                style.width, "  ", "    ");
    const bool several = group.members.size() > 1;
    for (const auto* finding : group.members) {
      out += wrap(to_valid_utf8(finding->message), style.width, several ? "    - " : "    ",
                  several ? "      " : "    ");
    }
    out += wrap(to_valid_utf8(group.members.front()->remedy), style.width, "    remedy: ", spaces(12));
    out += repair_line(group.members.front()->repair, style);
  }
  return out;
}

// Info notes, one line per id: one note as its message, many as their count, the id's summary and
// the components they name.
std::string notes_section(const Report& report, TextStyle style) {
  std::vector<std::pair<std::string, std::vector<const findings::Finding*>>> ids;
  for (const auto& finding : report.findings) {
    if (finding.severity != findings::Severity::info) {
      continue;
    }
    auto it = std::find_if(ids.begin(), ids.end(),
                           [&finding](const auto& entry) { return entry.first == finding.id; });
    if (it == ids.end()) {
      ids.emplace_back(finding.id, std::vector<const findings::Finding*>());
      it = std::prev(ids.end());
    }
    it->second.push_back(&finding);
  }
  if (ids.empty()) {
    return "";
  }
  std::string out = heading(style, "Notes");
  for (const auto& [id, members] : ids) {
    // The classes other than none its notes ask for, least invasive first.
    std::string classes;
    for (const auto repair : findings::k_repairs) {
      const bool asked = repair != findings::Repair::none &&
                         std::any_of(members.begin(), members.end(),
                                     [repair](const auto* finding) { return finding->repair == repair; });
      if (asked) {
        classes += (classes.empty() ? " (repair: " : ", ") + std::string(findings::to_string(repair));
      }
    }
    classes += classes.empty() ? "" : ")";
    if (members.size() == 1) {
      out += wrap(paint(style, k_bold, id) + ": " + to_valid_utf8(members.front()->message) + classes,
                  style.width, "  ", "    ");
      continue;
    }
    std::vector<std::string> components;
    for (const auto* finding : members) {
      for (const auto& name : finding->components) {
        if (std::find(components.begin(), components.end(), name) == components.end()) {
          components.push_back(name);
        }
      }
    }
    std::string names;
    for (std::size_t i = 0; i < components.size() && i < 6; ++i) {
      names += (names.empty() ? "" : ", ") + components[i];
    }
    if (components.size() > 6) {
      names += ", … " + std::to_string(components.size() - 6) + " more";
    }
    const auto* definition = findings::find_definition(id);
    const std::string summary =
        definition != nullptr ? std::string(definition->summary) : members.front()->message;
    out += wrap(paint(style, k_bold, id) + " ×" + std::to_string(members.size()) +
                    (names.empty() ? "" : " (" + to_valid_utf8(names) + ")") + ": " + to_valid_utf8(summary) +
                    classes,
                style.width, "  ", "    ");
  }
  return out;
}

// The GPUs, one line per model (GPU ordinals, name, compute capability, SMs, memory), when the driver was
// asked.
std::string gpus_line(const Report& report, TextStyle style) {
  if (!report.verification.ran) {
    return "";
  }
  const auto& devices = report.verification.devices;
  if (devices.empty()) {
    return wrap(paint(style, k_bold, "GPUs") + "  none visible to CUDA", style.width, "", "  ");
  }
  std::vector<std::pair<std::string, std::vector<int>>> models; // description -> ordinals
  for (const auto& device : devices) {
    const auto* driver = device.driver ? &*device.driver : nullptr;
    std::string description = driver != nullptr
                                  ? driver->name.value_or("?")
                                  : (device.nvml ? device.nvml->name.value_or("?") : std::string("?"));
    if (driver != nullptr && !driver->error) {
      description += "  cc " + driver->compute_capability.value_or("?");
      if (driver->sm_count) {
        description += "  " + std::to_string(*driver->sm_count) + " SMs";
      }
      if (driver->total_memory_bytes) {
        description += "  " + memory_gib(*driver->total_memory_bytes);
      }
    }
    auto it = std::find_if(models.begin(), models.end(),
                           [&](const auto& entry) { return entry.first == description; });
    if (it == models.end()) {
      models.emplace_back(description, std::vector<int>());
      it = std::prev(models.end());
    }
    it->second.push_back(driver != nullptr ? driver->ordinal : -1);
  }
  std::string out;
  for (const auto& [description, ordinals] : models) {
    std::string label = ordinals.size() == 1 ? "GPU " + std::to_string(ordinals.front())
                                             : std::to_string(ordinals.size()) + " GPUs";
    out += wrap(paint(style, k_bold, label) + "  " + to_valid_utf8(description), style.width, "", "  ");
  }
  return out;
}

// The self-test in a line, when it ran or was skipped for a reason.
std::string selftest_line(const Report& report, TextStyle style) {
  const auto& run = report.selftest;
  if (!run.ran && run.skipped_reason.empty()) {
    return "";
  }
  const std::string title =
      paint(style, k_bold, "Self-test (" + std::string(selftest::level_name(run.level)) + ")");
  if (!run.ran) {
    return wrap(title + "  skipped: " + to_valid_utf8(run.skipped_reason), style.width, "", "  ");
  }
  // A failed test is a selftest.failed finding: what to do first names it, with its reason.
  return wrap(title + "  " + selftest_summary(run, style), style.width, "", "  ");
}

// Whose answers these are: the Python environment (a venv by its own prefix, not the interpreter
// it links to), and why that one.
std::string python_line(const Report& report, TextStyle style) {
  std::string out;
  if (report.discovery.python_error) {
    out += wrap(paint(style, k_red, "--python failed: " + to_valid_utf8(*report.discovery.python_error)),
                style.width, "", "  ");
  }
  const auto& environments = report.discovery.python.environments;
  if (environments.empty() || !environments.front().primary) {
    return out +
           wrap(paint(style, k_bold, "Python") + "  no Python environment found", style.width, "", "  ");
  }
  return out + wrap(paint(style, k_bold, "Python") + "  " + answers_for(environments.front()), style.width,
                    "", "  ");
}

std::string loader_cache_line(const Report& report, TextStyle style) {
  const auto& cache = report.discovery.ld_cache;
  if (!cache.error) {
    return "";
  }
  return wrap(paint(style, k_bold, "Loader cache") + "  " + to_valid_utf8(cache.path) + ": " +
                  paint(style, k_red, "unreadable: " + to_valid_utf8(*cache.error)),
              style.width, "", "  ");
}

// The kernel log the Xid/SXid findings come from: in the summary, a line only when it could not be
// read (no finding then does not mean no event); with `full`, a section saying what happened to it.
std::string kernel_log_line(const Report& report, TextStyle style, bool full) {
  const auto& log = report.kernel_log;
  std::string state;
  switch (log.status) {
  case health::KernelLogStatus::unreadable:
    state = paint(style, k_yellow, "unreadable: " + to_valid_utf8(log.reason)) +
            "; Xid and SXid events not checked";
    break;
  case health::KernelLogStatus::read:
    state = std::to_string(log.events.size()) + " Xid/SXid event line(s) in the last " +
            std::to_string((log.bytes + 1023) / 1024) + " KiB" +
            (log.truncated ? " (older ones dropped)" : "");
    break;
  case health::KernelLogStatus::not_read: state = "not read: " + to_valid_utf8(log.reason); break;
  }
  const std::string text = to_valid_utf8(log.source) + ": " + state;
  if (full) {
    return heading(style, "Kernel log", text);
  }
  if (log.status != health::KernelLogStatus::unreadable) {
    return "";
  }
  return wrap(paint(style, k_bold, "Kernel log") + "  " + text, style.width, "", "  ");
}

std::string summary_text(const Report& report, TextStyle style) {
  std::string system = gpus_line(report, style) + selftest_line(report, style) + python_line(report, style) +
                       loader_cache_line(report, style) + kernel_log_line(report, style, false);
  return verdict(report, style) + problems_section(report, style) + stack_section(report, style) + "\n" +
         system + notes_section(report, style) + "\n" +
         wrap(paint(style, k_dim,
                    "Details: cudadiag --full, cudadiag explain ID, cudadiag find --explain NAME"),
              style.width, "", "  ");
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
  if (!style.full) {
    return finish(summary_text(report, style), style);
  }
  return finish(verdict(report, style) + components_table(report, style) +
                    verification_section(report, style) + render_closures_section(report.linkage, style) +
                    devices_section(report, style) + kernel_log_line(report, style, true) +
                    selftest_section(report, style) + python_section(report, style) +
                    render_frameworks_section(report, style) + findings_section(report, style),
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
  return std::any_of(
      candidate.also_found_as.begin(), candidate.also_found_as.end(),
      [](const auto& sighting) { return sighting.pathfinder_step != discovery::PathfinderStep::none; });
}

bool searched_by_loader(const discovery::Candidate& candidate) {
  if (candidate.first.loader_step != discovery::LoaderStep::none) {
    return true;
  }
  return std::any_of(
      candidate.also_found_as.begin(), candidate.also_found_as.end(),
      [](const auto& sighting) { return sighting.loader_step != discovery::LoaderStep::none; });
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
      out += ", " +
             std::string(probes::to_string((python ? component.selected : component.loader)->outcome)) +
             ": " + *fails;
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
std::string decision(const discovery::ComponentResult& component,
                     const std::optional<discovery::Choice>& choice, bool python) {
  if (choice) {
    return to_valid_utf8(choice->via.path) + " — " + to_valid_utf8(choice->reason) +
           (choice->fails ? "; " + std::string(probes::to_string(choice->outcome)) + ": " +
                                to_valid_utf8(*choice->fails)
                          : "");
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
  return "none — " + std::to_string(reachable) + " file(s) where " + who + " looks, " +
         std::to_string(rejected) + " of them unusable (see the candidates)";
}

} // namespace

std::string render_candidates(const discovery::ComponentResult& component, TextStyle style) {
  std::string out;
  for (std::size_t i = 0; i < component.candidates.size(); ++i) {
    const auto& candidate = component.candidates[i];
    std::string line =
        to_valid_utf8(candidate.first.path) + "\t" + markers(component, i) + "\t" + version_of(&candidate) +
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
  std::string out =
      wrap(paint(style, k_bold,
                 std::string(component.spec->name) + " (" + kind_label(component.spec->kind) + ")") +
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
      table.rows.push_back(
          {std::to_string(i + 1), version_of(&candidate),
           candidate.version ? std::string(versions::to_string(candidate.version->source)) : "-",
           found_via_list(candidate, ", "), to_valid_utf8(candidate.first.path)});
      table.notes.push_back(paint(style,
                                  answer               ? k_green
                                  : candidate.rejected ? k_red
                                                       : k_dim,
                                  to_valid_utf8(verdict)));
    }
    out += render_table(table, style.width, style.color);
  }
  out += heading(style, "Decision");
  out += wrap(decision(component, component.selected ? component.selected : component.python_failed, true),
              style.width, "  python (cuda-pathfinder order): ", spaces(4));
  if (component.spec->kind == probes::ComponentKind::dynamic_lib ||
      component.spec->kind == probes::ComponentKind::binary) {
    out += wrap(decision(component, component.loader, false), style.width,
                "  native (" +
                    std::string(component.spec->kind == probes::ComponentKind::binary ? "PATH" : "dlopen") +
                    "): ",
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
