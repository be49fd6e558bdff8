#include "diff/report_diff.hpp"

#include "core/json_fields.hpp"
#include "findings/findings.hpp"
#include "probes/catalog.hpp"
#include "report/report_document.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace cudadiag::diff {
namespace {

using nlohmann::json;
using report::display;

using Value = std::optional<std::string>;

// Variables that steer where libraries come from weigh more than the rest.
constexpr std::array<std::string_view, 10> k_search_variables = {
    "LD_LIBRARY_PATH",        "LD_PRELOAD",  "CUDA_PATH",  "CUDA_HOME",
    "CONDA_PREFIX",           "VIRTUAL_ENV", "PYTHONPATH", "CUDA_VISIBLE_DEVICES",
    "NVIDIA_VISIBLE_DEVICES", "PATH"};

// Variables that hold a list of directories separated by ':': compared entry by entry.
constexpr std::array<std::string_view, 3> k_path_lists = {"PATH", "LD_LIBRARY_PATH", "PYTHONPATH"};

// The entries of a ':' list, each once, in order (an empty entry kept: it means the working directory).
std::vector<std::string> path_entries(const std::string& value) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= value.size()) {
    const auto colon = std::min(value.find(':', start), value.size());
    auto entry = value.substr(start, colon - start);
    if (std::find(out.begin(), out.end(), entry) == out.end()) {
      out.push_back(std::move(entry));
    }
    start = colon + 1;
  }
  return out;
}

const json& at(const json& object, std::string_view key) {
  static const json null_value;
  if (!object.is_object()) {
    return null_value;
  }
  const auto it = object.find(key);
  return it == object.end() ? null_value : *it;
}

const json& array_at(const json& object, std::string_view key) {
  static const json empty = json::array();
  const auto& value = at(object, key);
  return value.is_array() ? value : empty;
}

Value value_of(const json& object, std::string_view key) {
  auto text = display(object, key);
  return text.empty() ? Value() : Value(std::move(text));
}

class Collector {
public:
  explicit Collector(std::vector<Difference>& out) : m_out(out) {}

  // Records a difference when `a` and `b` differ.
  void compare(Area area, std::string subject, std::string aspect, const Value& a, const Value& b, int weight,
               int priority = 0, std::string note = {}) {
    if (a == b) {
      return;
    }
    m_out.push_back({area, std::move(subject), std::move(aspect), a, b, std::move(note), weight, priority});
  }

private:
  std::vector<Difference>& m_out;
};

// Core components (the catalog's `.importance = core` rows) rank by their place among them in the
// catalog; the others come after, in report order, and one weight step lower (a missing cuDNN
// matters less than a different NVRTC). Reports name components, so the first row of a name decides.
constexpr int k_other_components = 100;

int component_priority(std::string_view name, std::size_t position) {
  int rank = 0;
  for (const auto& spec : probes::catalog()) {
    if (spec.importance != probes::Importance::core) {
      continue;
    }
    if (spec.name == name) {
      return rank;
    }
    ++rank;
  }
  return k_other_components + static_cast<int>(position);
}

void compare_driver(Collector& c, const json& a, const json& b) {
  auto version = [](const json& report) -> Value {
    if (const auto found = report::driver_version(report)) {
      return found->version;
    }
    return std::nullopt;
  };
  c.compare(Area::driver, "driver", "version", version(a), version(b), 0, 0,
            "CUDA 13.x needs driver >= 580, CUDA 12.x >= 525");
  c.compare(Area::driver, "driver", "CUDA version (cuDriverGetVersion)", report::cuda_driver_version(a),
            report::cuda_driver_version(b), 0);
  c.compare(Area::driver, "driver", "cuInit", report::cuinit_result(a), report::cuinit_result(b), 0);
}

void compare_devices(Collector& c, const json& a, const json& b) {
  const auto& left = array_at(a, "devices");
  const auto& right = array_at(b, "devices");
  auto names = [](const json& devices) {
    std::string list;
    for (const auto& device : devices) {
      list += (list.empty() ? "" : ", ") + display(device, "name", "?");
    }
    return std::to_string(devices.size()) + (list.empty() ? "" : " (" + list + ")");
  };
  c.compare(Area::devices, "GPUs", "visible", names(left), names(right), 0);
  for (std::size_t i = 0; i < std::min(left.size(), right.size()); ++i) {
    const auto subject = "GPU " + display(left[i], "ordinal", std::to_string(i));
    const auto& x = left[i];
    const auto& y = right[i];
    c.compare(Area::devices, subject, "name", value_of(x, "name"), value_of(y, "name"), 0);
    c.compare(Area::devices, subject, "compute capability", value_of(x, "compute_capability"),
              value_of(y, "compute_capability"), 0);
    c.compare(Area::devices, subject, "SMs", value_of(x, "sm_count"), value_of(y, "sm_count"), 1);
    c.compare(Area::devices, subject, "memory bytes", value_of(x, "total_memory_bytes"),
              value_of(y, "total_memory_bytes"), 1);
    c.compare(Area::devices, subject, "peak bandwidth GB/s", value_of(x, "peak_bandwidth_gbps"),
              value_of(y, "peak_bandwidth_gbps"), 2);
    const auto& xn = at(x, "nvml");
    const auto& yn = at(y, "nvml");
    auto link = [](const json& nvml) -> Value {
      const auto& pcie = at(nvml, "pcie");
      if (!pcie.is_object()) {
        return std::nullopt;
      }
      return "gen" + display(pcie, "gen_max", "?") + " x" + display(pcie, "width_max", "?");
    };
    c.compare(Area::devices, subject, "PCIe link (max)", link(xn), link(yn), 1);
    c.compare(Area::devices, subject, "ECC", value_of(at(xn, "ecc"), "current"),
              value_of(at(yn, "ecc"), "current"), 2);
    c.compare(Area::devices, subject, "MIG mode", value_of(at(xn, "mig_mode"), "current"),
              value_of(at(yn, "mig_mode"), "current"), 1);
    c.compare(Area::devices, subject, "persistence mode", value_of(xn, "persistence_mode"),
              value_of(yn, "persistence_mode"), 3);
    c.compare(Area::devices, subject, "remapped rows pending", value_of(at(xn, "remapped_rows"), "pending"),
              value_of(at(yn, "remapped_rows"), "pending"), 0, 0, "a pending row remap needs a GPU reset");
    c.compare(Area::devices, subject, "remapped rows failed", value_of(at(xn, "remapped_rows"), "failed"),
              value_of(at(yn, "remapped_rows"), "failed"), 0);
    c.compare(Area::devices, subject, "uncorrected ECC errors", value_of(xn, "ecc_uncorrected_aggregate"),
              value_of(yn, "ecc_uncorrected_aggregate"), 1);
  }
}

std::string component_key(const json& component) {
  return display(component, "kind") + "/" + display(component, "name");
}

std::string component_subject(const json& component) {
  const auto kind = display(component, "kind");
  const auto name = display(component, "name", "?");
  return kind == "dynamic_lib" ? name : name + " (" + kind + ")";
}

std::set<std::string> versions_on_disk(const json& component) {
  std::set<std::string> out;
  for (const auto& candidate : array_at(component, "candidates")) {
    if (at(candidate, "rejected").is_null() && !json_fields::bool_or(candidate, "is_stub", false)) {
      out.insert(display(candidate, "version", "unknown"));
    }
  }
  return out;
}

Value joined(const std::set<std::string>& values) {
  if (values.empty()) {
    return std::nullopt;
  }
  std::string out;
  for (const auto& value : values) {
    out += (out.empty() ? "" : ", ") + value;
  }
  return out;
}

void compare_answer(Collector& c, const std::string& subject, int priority, int demote, const json& x,
                    const json& y, std::string_view label) {
  const std::string who = " (" + std::string(label) + ")";
  if (x.is_object() != y.is_object()) {
    auto shown = [](const json& answer) -> Value {
      return answer.is_object() ? Value(display(answer, "path", "?")) : std::nullopt;
    };
    c.compare(Area::components, subject, "found" + who, shown(x), shown(y), demote, priority);
    return;
  }
  if (!x.is_object()) {
    return;
  }
  c.compare(Area::components, subject, "stub" + who, value_of(x, "is_stub"), value_of(y, "is_stub"), demote,
            priority, "a stub libcuda makes every CUDA call fail (CUDA_ERROR_STUB_LIBRARY)");
  c.compare(Area::components, subject, "version" + who, value_of(x, "version"), value_of(y, "version"),
            1 + demote, priority);
  // A different way of finding it implies a different file: one line says both.
  auto where = [](const json& answer) {
    return value_of(answer, "realpath").value_or(display(answer, "path", "?"));
  };
  const auto via_x = value_of(x, "found_via");
  const auto via_y = value_of(y, "found_via");
  if (via_x != via_y) {
    auto shown = [&where](const Value& via, const json& answer) {
      return via.value_or("?") + " (" + where(answer) + ")";
    };
    c.compare(Area::components, subject, "found_via" + who, shown(via_x, x), shown(via_y, y), 2 + demote,
              priority);
    return;
  }
  c.compare(Area::components, subject, "file" + who, where(x), where(y), 3 + demote, priority);
}

void compare_components(Collector& c, const json& a, const json& b) {
  std::vector<std::string> order;
  std::map<std::string, std::pair<const json*, const json*>> paired;
  for (const auto& component : array_at(a, "components")) {
    const auto key = component_key(component);
    order.push_back(key);
    paired[key].first = &component;
  }
  for (const auto& component : array_at(b, "components")) {
    const auto key = component_key(component);
    if (paired.find(key) == paired.end()) {
      order.push_back(key);
    }
    paired[key].second = &component;
  }
  for (std::size_t i = 0; i < order.size(); ++i) {
    const auto [x, y] = paired[order[i]];
    const auto& any = x != nullptr ? *x : *y;
    const auto subject = component_subject(any);
    const int priority = component_priority(display(any, "name"), i);
    const int demote = priority >= k_other_components ? 1 : 0;
    if (x == nullptr || y == nullptr) {
      c.compare(Area::components, subject, "in report", x != nullptr ? Value("yes") : std::nullopt,
                y != nullptr ? Value("yes") : std::nullopt, 4, priority);
      continue;
    }
    // Found on one side only: one line, with the file the found side loads.
    const auto status_x = value_of(*x, "status");
    const auto status_y = value_of(*y, "status");
    if (status_x != status_y) {
      auto shown = [](const Value& status, const json& component) {
        const auto* answer = report::chosen_answer(component);
        return status.value_or("?") + (answer != nullptr ? " (" + display(*answer, "path", "?") + ")" : "");
      };
      c.compare(Area::components, subject, "status", shown(status_x, *x), shown(status_y, *y), demote,
                priority);
      continue;
    }
    compare_answer(c, subject, priority, demote, at(*x, "selected"), at(*y, "selected"), "CUDA Python");
    compare_answer(c, subject, priority, demote, at(*x, "loader"), at(*y, "loader"), "native loader");
    c.compare(Area::components, subject, "versions on disk", joined(versions_on_disk(*x)),
              joined(versions_on_disk(*y)), 4, priority);
  }
}

void compare_verification(Collector& c, const json& a, const json& b) {
  std::set<std::string> names;
  for (const auto* report : {&a, &b}) {
    for (const auto& step : array_at(at(*report, "verification"), "steps")) {
      names.insert(display(step, "component"));
    }
  }
  for (const auto& name : names) {
    const auto* x = report::verification_step(a, name);
    const auto* y = report::verification_step(b, name);
    const int priority = component_priority(name, 0);
    auto status = [](const json* step) -> Value {
      return step != nullptr ? value_of(*step, "status") : std::nullopt;
    };
    c.compare(Area::verification, name, "load status", status(x), status(y), 0, priority);
    auto api_version = [](const json* step) -> Value {
      if (step == nullptr) {
        return std::nullopt;
      }
      const auto& result = at(*step, "result");
      auto version = value_of(result, "version");
      return version ? version : value_of(result, "runtime_version");
    };
    c.compare(Area::verification, name, "version its API reports", api_version(x), api_version(y), 1,
              priority);
  }
}

void compare_environment(Collector& c, const json& a, const json& b) {
  const auto& x = at(at(a, "environment"), "variables");
  const auto& y = at(at(b, "environment"), "variables");
  std::set<std::string> names;
  for (const auto* variables : {&x, &y}) {
    if (variables->is_object()) {
      for (const auto& [name, value] : variables->items()) {
        names.insert(name);
      }
    }
  }
  for (const auto& name : names) {
    const bool search =
        std::find(k_search_variables.begin(), k_search_variables.end(), name) != k_search_variables.end();
    const auto before = value_of(x, name);
    const auto after = value_of(y, name);
    const bool list = std::find(k_path_lists.begin(), k_path_lists.end(), name) != k_path_lists.end();
    if (list && before && after && before != after) {
      // A list that changed in both: the entries that went and came, not two whole strings.
      const auto old_entries = path_entries(*before);
      const auto new_entries = path_entries(*after);
      bool changed = false;
      for (const auto& entry : old_entries) {
        if (std::find(new_entries.begin(), new_entries.end(), entry) == new_entries.end()) {
          c.compare(Area::environment, name, "entry removed",
                    entry.empty() ? "(empty: the working directory)" : entry, std::nullopt, 0, 0);
          changed = true;
        }
      }
      for (const auto& entry : new_entries) {
        if (std::find(old_entries.begin(), old_entries.end(), entry) == old_entries.end()) {
          c.compare(Area::environment, name, "entry added", std::nullopt,
                    entry.empty() ? "(empty: the working directory)" : entry, 0, 0);
          changed = true;
        }
      }
      if (!changed) {
        c.compare(Area::environment, name, "order", before, after, 0, 0);
      }
      continue;
    }
    c.compare(Area::environment, name, "value", before, after, search ? 0 : 1, search ? 0 : 1);
  }
  auto primary = [](const json& report) -> const json* {
    for (const auto& python : array_at(at(report, "environment"), "python_environments")) {
      if (json_fields::bool_or(python, "primary", false)) {
        return &python;
      }
    }
    return nullptr;
  };
  const auto* p = primary(a);
  const auto* q = primary(b);
  auto field = [](const json* python, std::string_view key) -> Value {
    return python != nullptr ? value_of(*python, key) : std::nullopt;
  };
  c.compare(Area::environment, "Python environment", "kind", field(p, "label"), field(q, "label"), 1, 2);
  c.compare(Area::environment, "Python environment", "version", field(p, "version"), field(q, "version"), 1,
            2);
  c.compare(Area::environment, "Python environment", "prefix", field(p, "prefix"), field(q, "prefix"), 2, 2);
  c.compare(Area::environment, "ld.so.cache", "status",
            value_of(at(at(a, "environment"), "ld_so_cache"), "status"),
            value_of(at(at(b, "environment"), "ld_so_cache"), "status"), 1, 3);
}

void compare_host(Collector& c, const json& a, const json& b) {
  const auto& x = at(a, "host");
  const auto& y = at(b, "host");
  c.compare(Area::host, "host", "architecture", value_of(x, "machine"), value_of(y, "machine"), 0);
  c.compare(Area::host, "host", "OS", value_of(x, "distro"), value_of(y, "distro"), 1);
  c.compare(Area::host, "host", "kernel", value_of(x, "kernel"), value_of(y, "kernel"), 2);
}

int severity_weight(std::string_view severity) {
  const auto parsed = findings::parse_severity(severity);
  return parsed == findings::Severity::error ? 0 : parsed == findings::Severity::warning ? 1 : 2;
}

struct FindingGroup {
  std::vector<const json*> a, b;
};

void compare_findings(Collector& c, const json& a, const json& b) {
  // Findings are matched by id and components: messages name paths, which differ between machines.
  std::vector<std::string> order;
  std::map<std::string, FindingGroup> groups;
  auto collect = [&](const json& report, bool left) {
    for (const auto& finding : array_at(report, "findings")) {
      std::string key = display(finding, "id", "?");
      std::string names;
      for (const auto& name : array_at(finding, "components")) {
        names += (names.empty() ? "" : ", ") + (name.is_string() ? name.get<std::string>() : name.dump());
      }
      key += names.empty() ? "" : " [" + names + "]";
      if (groups.find(key) == groups.end()) {
        order.push_back(key);
      }
      (left ? groups[key].a : groups[key].b).push_back(&finding);
    }
  };
  collect(a, true);
  collect(b, false);
  for (const auto& key : order) {
    const auto& group = groups[key];
    auto shown = [](const json* finding) {
      return display(*finding, "severity", "?") + ": " + display(*finding, "message");
    };
    const std::size_t common = std::min(group.a.size(), group.b.size());
    for (std::size_t i = 0; i < common; ++i) {
      const auto severity_a = display(*group.a[i], "severity");
      const auto severity_b = display(*group.b[i], "severity");
      c.compare(Area::findings, key, "severity", severity_a, severity_b,
                std::min(severity_weight(severity_a), severity_weight(severity_b)));
    }
    for (std::size_t i = common; i < group.a.size(); ++i) {
      c.compare(Area::findings, key, "only in A", shown(group.a[i]), std::nullopt,
                severity_weight(display(*group.a[i], "severity")));
    }
    for (std::size_t i = common; i < group.b.size(); ++i) {
      c.compare(Area::findings, key, "only in B", std::nullopt, shown(group.b[i]),
                severity_weight(display(*group.b[i], "severity")));
    }
  }
}

bool moved(double x, double y, double tolerance) {
  if (x == y) {
    return false;
  }
  const double base = std::max(std::fabs(x), 1e-12);
  return std::fabs(y - x) / base > tolerance;
}

std::string change_note(double x, double y) {
  if (x == 0) {
    return {};
  }
  const double percent = (y - x) / std::fabs(x) * 100.0;
  return (percent >= 0 ? "+" : "") + report::format_number(std::round(percent)) + "%";
}

void compare_selftest(Collector& c, const json& a, const json& b, double tolerance) {
  const auto& x = at(a, "selftest");
  const auto& y = at(b, "selftest");
  auto state = [](const json& selftest) -> Value {
    if (!selftest.is_object()) {
      return "not run";
    }
    if (!json_fields::bool_or(selftest, "ran", true)) {
      return "not run: " + display(selftest, "skipped_reason", "no reason given");
    }
    return display(selftest, "status", "?") + " (" + display(selftest, "level", "?") + ")";
  };
  c.compare(Area::selftest, "self-test", "status", state(x), state(y), 0);
  const auto& xs = at(at(x, "score"), "value");
  const auto& ys = at(at(y, "score"), "value");
  if (xs.is_number() && ys.is_number()) {
    const double p = xs.get<double>();
    const double q = ys.get<double>();
    if (moved(p, q, tolerance)) {
      c.compare(Area::selftest, "self-test", "score", report::format_number(p), report::format_number(q), 1,
                0, change_note(p, q));
    }
  } else {
    c.compare(Area::selftest, "self-test", "score",
              xs.is_number() ? Value(report::format_number(xs.get<double>())) : std::nullopt,
              ys.is_number() ? Value(report::format_number(ys.get<double>())) : std::nullopt, 1);
  }
  // Tests are matched by key and device.
  std::vector<std::string> order;
  std::map<std::string, std::pair<const json*, const json*>> paired;
  for (const bool left : {true, false}) {
    for (const auto& test : report::selftest_tests(left ? a : b)) {
      const auto device = display(test, "device");
      const auto key = display(test, "key", "?") + (device.empty() ? "" : " (GPU " + device + ")");
      if (paired.find(key) == paired.end()) {
        order.push_back(key);
      }
      (left ? paired[key].first : paired[key].second) = &test;
    }
  }
  for (std::size_t i = 0; i < order.size(); ++i) {
    const auto& [p, q] = paired[order[i]];
    const int priority = static_cast<int>(i);
    auto status = [](const json* test) -> Value {
      if (test == nullptr) {
        return std::nullopt;
      }
      const auto reason = display(*test, "reason");
      return display(*test, "status", "?") + (reason.empty() ? "" : ": " + reason);
    };
    if (p == nullptr || q == nullptr || display(*p, "status") != display(*q, "status")) {
      c.compare(Area::selftest, order[i], "status", status(p), status(q), 0, priority);
      continue;
    }
    for (const auto& metric : array_at(*p, "metrics")) {
      const auto name = display(metric, "name");
      for (const auto& other : array_at(*q, "metrics")) {
        if (display(other, "name") != name || !at(metric, "value").is_number() ||
            !at(other, "value").is_number()) {
          continue;
        }
        const double m = at(metric, "value").get<double>();
        const double n = at(other, "value").get<double>();
        if (moved(m, n, tolerance)) {
          c.compare(Area::selftest, order[i], name, report::format_metric(metric),
                    report::format_metric(other), 2, priority, change_note(m, n));
        }
      }
    }
  }
}

} // namespace

std::string_view to_string(Area area) {
  switch (area) {
  case Area::driver: return "driver";
  case Area::devices: return "devices";
  case Area::components: return "components";
  case Area::verification: return "verification";
  case Area::environment: return "environment";
  case Area::host: return "host";
  case Area::findings: return "findings";
  case Area::selftest: return "selftest";
  }
  return "unknown";
}

std::string_view area_title(Area area) {
  switch (area) {
  case Area::driver: return "Driver";
  case Area::devices: return "Devices";
  case Area::components: return "Components";
  case Area::verification: return "Verification (libraries loaded in isolated workers)";
  case Area::environment: return "Environment";
  case Area::host: return "Host";
  case Area::findings: return "Findings";
  case Area::selftest: return "Self-test";
  }
  return "Unknown";
}

SideSummary summarize_side(const json& report) {
  SideSummary side;
  const auto& host = at(report, "host");
  side.hostname = display(host, "hostname", "?");
  side.distro = display(host, "distro", "unknown OS");
  side.tool_version = display(at(report, "tool"), "version", "?");
  const auto& summary = at(report, "summary");
  side.status = display(summary, "status", "?");
  side.verdict = report::parse_summary_status(side.status);
  side.errors = json_fields::integer(at(summary, "counts"), "error").value_or(0);
  side.warnings = json_fields::integer(at(summary, "counts"), "warning").value_or(0);
  return side;
}

ReportDiff diff_reports(const json& a, const json& b, const DiffOptions& options) {
  ReportDiff result;
  result.a = summarize_side(a);
  result.b = summarize_side(b);
  result.metric_tolerance = options.metric_tolerance;
  Collector collector(result.differences);
  compare_driver(collector, a, b);
  compare_devices(collector, a, b);
  compare_components(collector, a, b);
  compare_verification(collector, a, b);
  compare_environment(collector, a, b);
  compare_host(collector, a, b);
  compare_findings(collector, a, b);
  compare_selftest(collector, a, b, options.metric_tolerance);
  // What decides where libraries come from (the search variables, weight 0 in the environment) is
  // a cause: it comes first, before the components and findings it changes.
  for (auto& difference : result.differences) {
    difference.cause = difference.area == Area::environment && difference.weight == 0 &&
                       std::find(k_search_variables.begin(), k_search_variables.end(), difference.subject) !=
                           k_search_variables.end();
  }
  std::stable_sort(result.differences.begin(), result.differences.end(),
                   [](const Difference& x, const Difference& y) {
                     return std::tuple(!x.cause, x.area, x.weight, x.priority) <
                            std::tuple(!y.cause, y.area, y.weight, y.priority);
                   });
  return result;
}

} // namespace cudadiag::diff
