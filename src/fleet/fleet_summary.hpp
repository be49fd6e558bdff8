#pragma once
// N node reports -> one answer: which nodes form the majority, which groups differ from it and how,
// which nodes have errors, and where each GPU model's self-test figures lie. Built incrementally
// (FleetBuilder::add per node, O(1) each: grouping is a hash of the fingerprint), so memory grows
// with the number of nodes times a few hundred bytes, plus one report text per distinct group.

#include "diff/report_diff.hpp"
#include "fleet/node_facts.hpp"

#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace cudadiag::fleet {

// Something in the input that is not a node report: a line of stray text, an unreadable file, a
// document that is not a cudadiag report. Each one counts against a healthy fleet.
struct InputProblem {
  std::string source;
  std::size_t line = 0; // 1-based; 0 when not about a line
  std::string message;
};

struct FleetOptions {
  double tolerance_percent = 10;    // figures this far under (over, for times) the median are flagged
  std::size_t detailed_groups = 32; // minority groups that get a full `diff` against the majority
};

// A fingerprint field where a group differs from the majority.
struct FieldDifference {
  std::string field;
  std::string majority;
  std::string value;
  bool core = false;
};

struct NodeGroup {
  std::vector<FingerprintField> fingerprint;
  std::vector<std::size_t> members; // indexes into FleetSummary::nodes, in input order
  bool majority = false;
  std::size_t error_nodes = 0;
  std::vector<FieldDifference> differs;  // against the majority (empty for the majority)
  std::vector<diff::Difference> details; // `cudadiag diff` majority representative -> this one's
  bool detailed = false;                 // whether `details` was computed
};

struct BelowMedian {
  std::size_t node = 0; // index into FleetSummary::nodes
  int device = -1;
  double value = 0;
  double percent_of_median = 0;
};

// One GPU model's spread of one figure across the fleet.
struct FigureSpread {
  std::string gpu_model;
  std::string metric;
  std::string unit;
  bool higher_is_better = true;
  std::size_t count = 0;
  double median = 0, min = 0, max = 0;
  std::vector<BelowMedian> outliers; // beyond the tolerance on the bad side, worst first
};

// A report left out because a newer one of the same host (or pod) counts instead.
struct OlderReport {
  std::string name;   // the host
  std::string source; // where the older report came from
};

struct FleetSummary {
  std::vector<NodeFacts> nodes;   // one per host: its newest report
  std::vector<OlderReport> older; // the other reports of those hosts, in input order
  std::vector<InputProblem> problems;
  std::vector<NodeGroup> groups;       // the majority first, then by size (largest first)
  std::vector<FigureSpread> figures;   // by GPU model, then metric
  std::vector<std::size_t> node_order; // every node: errors first, then warnings, then the rest
  double tolerance_percent = 10;
  std::size_t error_nodes = 0, warning_nodes = 0;
  // Nodes by the most invasive repair their findings ask for (NodeFacts::repair), every class.
  std::map<findings::Repair, std::size_t> repair_nodes;
  bool uniform = true;              // one group only
  std::vector<std::string> reasons; // why the exit code is 1 ("2 nodes have errors", ...)
  int exit_code = 0;                // 0 uniform and healthy; 1 errors, core drift or unreadable input
};

class FleetBuilder {
public:
  // Adds one node; `text` (its report's JSON) is kept only when the node starts a new group. One
  // report counts per host: of the reports naming the same host (host.node_name, else hostname),
  // the newest (the latest file modification time; among equals, the later in the input) replaces
  // the others, which are listed as older. A report from a Kubernetes pod's log ("... pod/NAME/CONTAINER")
  // replaces an earlier one of the same pod: a DaemonSet re-checks periodically, and its latest report is the
  // node's state.
  void add(NodeFacts facts, std::string_view text);
  void add_problem(InputProblem problem) { m_problems.push_back(std::move(problem)); }
  [[nodiscard]] std::size_t node_count() const { return m_nodes.size(); }

  // The summary; the builder is consumed.
  FleetSummary finish(const FleetOptions& options) &&;

private:
  void drop_superseded();

  std::vector<NodeFacts> m_nodes;
  std::vector<NodeGroup> m_groups;
  std::vector<std::string> m_group_text; // per group: the first member's report text
  std::unordered_map<std::string, std::size_t> m_index;
  std::unordered_map<std::string, std::size_t> m_latest; // pod source -> its latest node
  std::unordered_map<std::string, std::size_t> m_host;   // host name -> its newest node
  std::vector<bool> m_superseded;                        // per node: a later report replaced it
  std::vector<OlderReport> m_older;
  std::vector<InputProblem> m_problems;
};

} // namespace cudadiag::fleet
