#pragma once
// What the fleet keeps of one node's report: its identity, verdict, stack fingerprint and
// self-test figures — a few hundred bytes, so that 10,000 nodes fit in a few MiB.
//
// The fingerprint is the list of facts that must agree across nodes that should behave alike, in
// this order (`core` ones make a differing node a failure of `cudadiag fleet`):
//   driver version, driver branch, CUDA driver version                            core
//   per core component: the chosen file's version and how it was found           core
//   error findings (ids)                                                          core
//   warning findings (ids)
//   GPUs (count and models), PCIe link (max gen and width, per distinct value)

#include "findings/repair.hpp"
#include "report/summary_status.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::fleet {

struct FingerprintField {
  std::string name;  // "driver version", "nvJitLink version", "nvJitLink found via", "GPUs", ...
  std::string value; // "580.95.05", "LD_LIBRARY_PATH", "8 x NVIDIA H200", "-" when unknown
  bool core = false;
};

// One self-test figure: a test's headline metric on one device, or the node's score.
struct SelftestFigure {
  std::string gpu_model; // the device's name ("NVIDIA H200"); "unknown GPU" when not reported
  std::string metric;    // "reduce.f32_gbps", "score"
  std::string unit;      // "GB/s", "Gkeys/s", "ms", "points"
  int device = -1;       // the ordinal; -1 for the node's score
  double value = 0;
};

struct NodeFacts {
  std::string name;                            // host.hostname; the source when the report names none
  std::string source;                          // where it came from (a file, "stdin: task 3", ...)
  std::optional<report::SummaryStatus> status; // the report's verdict; nullopt: it names none known
  std::vector<std::string> errors;             // error-level finding ids, sorted, unique
  std::vector<std::string> warnings;           // warning-level finding ids, sorted, unique
  // The most invasive repair class among its warning and error findings (`findings[].repair`;
  // none for a report of an earlier release, and a class this release does not know is left out).
  // Not part of the fingerprint: the finding ids already are.
  findings::Repair repair = findings::Repair::none;
  std::vector<FingerprintField> fingerprint;
  std::vector<SelftestFigure> figures;
  std::string tool_version;
  double modified =
      0; // when the file it came from was last modified (seconds since the epoch); 0 for a stream
  bool named = false; // whether the report names its host (else `name` is the source)
};

// The facts of a (pruned or whole) report document.
NodeFacts node_facts(const nlohmann::json& report, std::string source);

// Every member node_facts() reads, as a path from the report's root through objects' keys; arrays
// on the way are passed through ("components.selected.version" is that member of each component).
// node_facts() of a document that holds only these members (each whole below the path's end, and
// every array item, emptied or not) equals node_facts() of the whole report: readers may keep just
// these (report_reader.hpp's read_fleet_fields). Whoever reads another member here adds its path.
std::span<const std::string_view> node_facts_fields();

// The fingerprint as one string (for grouping): the values joined with separators no value holds.
std::string fingerprint_key(const std::vector<FingerprintField>& fingerprint);

// The components whose version and origin are part of the fingerprint, in order.
const std::vector<std::string_view>& fingerprint_components();

} // namespace cudadiag::fleet
