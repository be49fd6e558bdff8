#pragma once
// `cudadiag diff A B`: what differs between two reports (from two machines, or one machine before
// and after a change), ordered so that the most likely cause of a broken stack comes first:
//   driver       driver version, CUDA driver version, cuInit's result
//   devices      how many GPUs, which, and their configuration and health
//   components   per component: whether found (one line, naming the file, when only one side has
//                it), then versions, then how found (found_via, with the file), then the file when
//                only that moved, then the set of versions on disk — for CUDA Python's and the
//                loader's answer; components outside the core set weigh one step less
//   verification each library's load status and the version its API reports
//   environment  search variables (LD_LIBRARY_PATH, CUDA_PATH, ...) and the Python environment
//   host         architecture, OS release, kernel
//   findings     findings only one side has (matched by id and components), severity changes
//   selftest     whether it ran, statuses, and figures that moved by more than the tolerance
// Within an area, differences are ordered by weight (0 = decisive) then by component importance.
// Not compared, because they differ on every run: hostname, timings, search traces, the working
// directory, uid, and self-test figures within the tolerance. Equivalent = no difference at all.

#include "report/summary_status.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::diff {

enum class Area { driver, devices, components, verification, environment, host, findings, selftest };
std::string_view to_string(Area area);  // "driver", "devices", ...
std::string_view area_title(Area area); // "Driver", "Devices", ...

struct Difference {
  Area area = Area::driver;
  std::string subject;          // "nvrtc", "driver", "GPU 0", "LD_LIBRARY_PATH", "driver.stub [cuda]"
  std::string aspect;           // "version (CUDA Python)", "found_via (native loader)", "added", ...
  std::optional<std::string> a; // the value in A; nullopt = absent there
  std::optional<std::string> b; // the value in B
  std::string note;             // why it matters, when that is not obvious ("" otherwise)
  int weight = 0;               // 0 decisive ... 4 incidental, within the area
  int priority = 0;             // tie-break: component importance (lower first)
  bool cause = false;           // a variable that steers the search: listed before everything else
};

// One side's identity, for the header of the output.
struct SideSummary {
  std::string label; // the path as given
  std::string kind;  // "report" or "bundle"
  std::string hostname;
  std::string distro;
  std::string tool_version;
  std::string status;                           // the report's verdict as it spells it ("?" if none)
  std::optional<report::SummaryStatus> verdict; // that verdict, when it names one this release knows
  std::int64_t errors = 0, warnings = 0;
};

struct DiffOptions {
  // Self-test figures are compared relatively: |b - a| / |a| above this is a difference.
  double metric_tolerance = 0.10;
};

struct ReportDiff {
  SideSummary a, b;
  double metric_tolerance = 0.10;
  std::vector<Difference> differences; // most likely cause first
  [[nodiscard]] bool equivalent() const { return differences.empty(); }
};

// Compares two report documents (both of the schema_version this cudadiag reads).
ReportDiff diff_reports(const nlohmann::json& a, const nlohmann::json& b, const DiffOptions& options = {});

// The identity of a report for the header (label and kind are left for the caller).
SideSummary summarize_side(const nlohmann::json& report);

} // namespace cudadiag::diff
