#include "fleet/fleet_summary.hpp"

#include "core/bounded_json.hpp"
#include "diff/report_input.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <tuple>

namespace cudadiag::fleet {
namespace {

int status_rank(std::optional<report::SummaryStatus> status) {
  if (!status) {
    return 3;
  }
  switch (*status) {
  case report::SummaryStatus::error: return 0;
  case report::SummaryStatus::warning: return 1;
  case report::SummaryStatus::ok: return 2;
  }
  return 3;
}

// Times, latencies and slowdowns get worse upwards; everything else the self-test reports (GB/s,
// Gkeys/s, the score) downwards.
bool higher_is_better(std::string_view metric, std::string_view unit) {
  const bool time = unit == "ms" || unit == "s" || unit == "us";
  return !(time || metric.find("latency") != std::string_view::npos ||
           metric.find("slowdown") != std::string_view::npos);
}

double median_of(std::vector<double> values) {
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  if (values.size() % 2 == 1) {
    return *middle;
  }
  const double upper = *middle;
  const double lower = *std::max_element(values.begin(), middle);
  return (lower + upper) / 2;
}

std::vector<FigureSpread> spread_figures(const std::vector<NodeFacts>& nodes, double tolerance) {
  struct Sample {
    std::size_t node;
    int device;
    double value;
  };
  std::map<std::tuple<std::string, std::string, std::string>, std::vector<Sample>> samples;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    for (const auto& figure : nodes[i].figures) {
      samples[{figure.gpu_model, figure.metric, figure.unit}].push_back({i, figure.device, figure.value});
    }
  }
  std::vector<FigureSpread> out;
  for (const auto& [key, list] : samples) {
    FigureSpread spread;
    std::tie(spread.gpu_model, spread.metric, spread.unit) = key;
    spread.higher_is_better = higher_is_better(spread.metric, spread.unit);
    spread.count = list.size();
    std::vector<double> values;
    values.reserve(list.size());
    for (const auto& sample : list) {
      values.push_back(sample.value);
    }
    spread.min = *std::min_element(values.begin(), values.end());
    spread.max = *std::max_element(values.begin(), values.end());
    spread.median = median_of(std::move(values));
    if (spread.median > 0) {
      for (const auto& sample : list) {
        const double ratio = sample.value / spread.median;
        const bool bad = spread.higher_is_better ? ratio < 1 - tolerance : ratio > 1 + tolerance;
        if (bad) {
          spread.outliers.push_back({sample.node, sample.device, sample.value, ratio * 100});
        }
      }
      std::stable_sort(spread.outliers.begin(), spread.outliers.end(),
                       [&spread](const auto& x, const auto& y) {
                         return spread.higher_is_better ? x.value < y.value : x.value > y.value;
                       });
    }
    out.push_back(std::move(spread));
  }
  return out;
}

std::string counted(std::size_t count, std::string_view one, std::string_view many) {
  return std::to_string(count) + " " + std::string(count == 1 ? one : many);
}

} // namespace

void FleetBuilder::drop_superseded() {
  if (std::find(m_superseded.begin(), m_superseded.end(), true) == m_superseded.end()) {
    return;
  }
  std::vector<std::size_t> renumbered(m_nodes.size(), 0);
  std::vector<NodeFacts> kept;
  for (std::size_t i = 0; i < m_nodes.size(); ++i) {
    renumbered[i] = kept.size();
    if (!m_superseded[i]) {
      kept.push_back(std::move(m_nodes[i]));
    } else {
      m_older.push_back({m_nodes[i].name, m_nodes[i].source});
    }
  }
  for (auto& group : m_groups) {
    std::vector<std::size_t> members;
    group.error_nodes = 0;
    for (const auto index : group.members) {
      if (!m_superseded[index]) {
        members.push_back(renumbered[index]);
        group.error_nodes += kept[renumbered[index]].status == report::SummaryStatus::error ? 1U : 0U;
      }
    }
    group.members = std::move(members);
  }
  // A group left empty keeps its slot (and text) but is dropped from the summary in finish().
  m_nodes = std::move(kept);
  m_superseded.assign(m_nodes.size(), false);
}

void FleetBuilder::add(NodeFacts facts, std::string_view text) {
  bool superseded = false; // by a newer report already added
  const bool pod = facts.source.find(": pod/") != std::string::npos;
  if (pod) {
    auto [previous, first] = m_latest.try_emplace(facts.source, m_nodes.size());
    if (!first) {
      m_superseded[previous->second] = true;
      previous->second = m_nodes.size();
    }
  }
  if (facts.named && !pod) { // a pod's reports are matched by the pod (pods of one image share a hostname)
    auto [previous, first] = m_host.try_emplace(facts.name, m_nodes.size());
    if (!first && !m_superseded[previous->second]) {
      if (m_nodes[previous->second].modified > facts.modified) {
        superseded = true;
      } else {
        m_superseded[previous->second] = true;
        previous->second = m_nodes.size();
      }
    } else if (!first) {
      previous->second = m_nodes.size();
    }
  }
  m_superseded.push_back(superseded);
  auto key = fingerprint_key(facts.fingerprint);
  auto [it, inserted] = m_index.try_emplace(std::move(key), m_groups.size());
  if (inserted) {
    NodeGroup group;
    group.fingerprint = facts.fingerprint;
    m_groups.push_back(std::move(group));
    m_group_text.emplace_back(text);
  }
  auto& group = m_groups[it->second];
  group.members.push_back(m_nodes.size());
  group.error_nodes += facts.status == report::SummaryStatus::error ? 1U : 0U;
  facts.fingerprint.clear(); // the group holds it
  facts.fingerprint.shrink_to_fit();
  m_nodes.push_back(std::move(facts));
}

FleetSummary FleetBuilder::finish(const FleetOptions& options) && {
  drop_superseded();
  FleetSummary summary;
  summary.tolerance_percent = options.tolerance_percent;
  const double tolerance = options.tolerance_percent / 100.0;

  // The majority: the largest group; among equals the one with fewer erroring nodes, then the first seen.
  std::vector<std::size_t> order;
  for (std::size_t g = 0; g < m_groups.size(); ++g) {
    if (!m_groups[g].members.empty()) {
      order.push_back(g);
    }
  }
  std::stable_sort(order.begin(), order.end(), [this](std::size_t x, std::size_t y) {
    const auto& a = m_groups[x];
    const auto& b = m_groups[y];
    if (a.members.size() != b.members.size()) {
      return a.members.size() > b.members.size();
    }
    return a.error_nodes < b.error_nodes;
  });

  bool core_drift = false;
  if (!order.empty()) {
    const auto majority_fingerprint = m_groups[order.front()].fingerprint;
    nlohmann::json majority_document;
    std::size_t detailed = 0;
    for (std::size_t rank = 0; rank < order.size(); ++rank) {
      auto group = std::move(m_groups[order[rank]]);
      group.majority = rank == 0;
      if (rank > 0) {
        for (std::size_t f = 0; f < group.fingerprint.size() && f < majority_fingerprint.size(); ++f) {
          const auto& ours = group.fingerprint[f];
          const auto& theirs = majority_fingerprint[f];
          if (ours.value != theirs.value) {
            group.differs.push_back({ours.name, theirs.value, ours.value, ours.core});
            core_drift = core_drift || ours.core;
          }
        }
        if (detailed < options.detailed_groups) {
          // The representatives' whole reports, parsed again (bounded, like every outside input).
          const bounded_json::Limits limits{diff::k_max_report_depth, diff::k_max_input_bytes};
          if (majority_document.is_null()) {
            if (auto parsed = bounded_json::parse(m_group_text[order.front()], limits);
                std::holds_alternative<nlohmann::json>(parsed)) {
              majority_document = std::move(std::get<nlohmann::json>(parsed));
            }
          }
          auto parsed = bounded_json::parse(m_group_text[order[rank]], limits);
          if (!majority_document.is_null() && std::holds_alternative<nlohmann::json>(parsed)) {
            group.details =
                diff::diff_reports(majority_document, std::get<nlohmann::json>(parsed), {tolerance})
                    .differences;
            group.detailed = true;
            ++detailed;
          }
        }
      }
      summary.groups.push_back(std::move(group));
    }
  }

  summary.nodes = std::move(m_nodes);
  summary.older = std::move(m_older);
  summary.problems = std::move(m_problems);
  summary.figures = spread_figures(summary.nodes, tolerance);
  summary.node_order.resize(summary.nodes.size());
  std::iota(summary.node_order.begin(), summary.node_order.end(), 0);
  std::stable_sort(summary.node_order.begin(), summary.node_order.end(),
                   [&summary](std::size_t x, std::size_t y) {
                     return status_rank(summary.nodes[x].status) < status_rank(summary.nodes[y].status);
                   });
  for (const auto& node : summary.nodes) {
    summary.error_nodes += node.status == report::SummaryStatus::error ? 1U : 0U;
    summary.warning_nodes += node.status == report::SummaryStatus::warning ? 1U : 0U;
  }
  for (const auto repair : findings::k_repairs) {
    summary.repair_nodes[repair] = 0;
  }
  for (const auto& node : summary.nodes) {
    ++summary.repair_nodes[node.repair];
  }
  summary.uniform = summary.groups.size() <= 1;

  if (summary.error_nodes > 0) {
    summary.reasons.push_back(counted(summary.error_nodes, "node has", "nodes have") + " error findings");
  }
  if (core_drift) {
    std::size_t drifting = 0;
    for (const auto& group : summary.groups) {
      if (std::any_of(group.differs.begin(), group.differs.end(), [](const auto& d) { return d.core; })) {
        drifting += group.members.size();
      }
    }
    summary.reasons.push_back(counted(drifting, "node differs", "nodes differ") +
                              " from the majority in the driver, a core component or its error findings");
  }
  if (!summary.problems.empty()) {
    summary.reasons.push_back(counted(summary.problems.size(), "input is", "inputs are") +
                              " not a readable node report");
  }
  summary.exit_code = summary.reasons.empty() ? 0 : 1;
  return summary;
}

} // namespace cudadiag::fleet
