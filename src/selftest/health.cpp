#include "selftest/health.hpp"

#include "cuda_api/nvml.hpp"

#include <sched.h>

#include <algorithm>
#include <array>
#include <cstdio>

namespace cudadiag::selftest {

double pcie_raw_gbps(unsigned gen, unsigned width) {
  struct Generation {
    unsigned gen;
    double gigatransfers; // per lane
    double payload;       // share of the bits that carry data
  };
  // clang-format off
  static constexpr std::array<Generation, 6> k_generations{{
      {1,  2.5, 8.0 / 10.0},    // 8b/10b
      {2,  5.0, 8.0 / 10.0},    // 8b/10b
      {3,  8.0, 128.0 / 130.0}, // 128b/130b
      {4, 16.0, 128.0 / 130.0}, // 128b/130b
      {5, 32.0, 128.0 / 130.0}, // 128b/130b
      {6, 64.0, 242.0 / 256.0}, // PAM4, 256-byte FLITs with 242 bytes of payload
  }};
  // clang-format on
  for (const auto& row : k_generations) {
    if (row.gen == gen) {
      return row.gigatransfers * width * row.payload / 8.0;
    }
  }
  return 0;
}

namespace {
std::string link_text(std::optional<unsigned> gen, std::optional<unsigned> width) {
  return "gen" + (gen ? std::to_string(*gen) : std::string("?")) + " x" +
         (width ? std::to_string(*width) : std::string("?"));
}
std::string figure(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", value);
  return text;
}
} // namespace

PcieVerdict judge_pcie(const PcieLink& link, double h2d_gbps, double d2h_gbps) {
  PcieVerdict verdict;
  if (link.gen_current && link.width_current) {
    verdict.expected_current_gbps = pcie_raw_gbps(*link.gen_current, *link.width_current) * k_pcie_efficiency;
  }
  if (link.gen_max && link.width_max) {
    verdict.expected_max_gbps = pcie_raw_gbps(*link.gen_max, *link.width_max) * k_pcie_efficiency;
  }
  const bool gen_low = link.gen_current && link.gen_max && *link.gen_current < *link.gen_max;
  const bool width_low = link.width_current && link.width_max && *link.width_current < *link.width_max;
  verdict.link_below_max = gen_low || width_low;
  const std::string where = link.bus_id.empty() ? std::string() : " at " + link.bus_id;
  std::vector<std::string> problems;
  if (verdict.link_below_max) {
    problems.push_back("the PCIe link" + where + " runs at " +
                       link_text(link.gen_current, link.width_current) + ", below its max " +
                       link_text(link.gen_max, link.width_max));
  }
  if (verdict.expected_current_gbps > 0) {
    const double floor = k_pcie_slow_fraction * verdict.expected_current_gbps;
    for (const auto& [name, value] : {std::pair{"H2D", h2d_gbps}, std::pair{"D2H", d2h_gbps}}) {
      if (value < floor) {
        verdict.slow = true;
        problems.push_back(std::string("pinned ") + name + " " + figure(value) +
                           " GB/s is under 70% of the " + figure(verdict.expected_current_gbps) +
                           " GB/s expected of " + link_text(link.gen_current, link.width_current) + where);
      }
    }
  }
  for (std::size_t i = 0; i < problems.size(); ++i) {
    verdict.problem += (i == 0 ? "" : "; ") + problems[i];
  }
  return verdict;
}

int fma_per_clock_per_sm(int cc_major, int cc_minor) {
  struct Architecture {
    int major, minor; // minor -1: every minor of that major not listed before it
    int fma;
  };
  // clang-format off
  static constexpr std::array<Architecture, 9> k_architectures{{
      {6,  0,  64}, // P100
      {6, -1, 128}, // GP10x
      {7, -1,  64}, // Volta, Turing
      {8,  0,  64}, // A100
      {8, -1, 128}, // GA10x, Orin, Ada (8.9)
      {9, -1, 128}, // Hopper
      {10, -1, 128}, // Blackwell datacenter
      {11, -1, 128}, // Thor
      {12, -1, 128}, // Blackwell consumer
  }};
  // clang-format on
  for (const auto& row : k_architectures) {
    if (row.major == cc_major && (row.minor == cc_minor || row.minor == -1)) {
      return row.fma;
    }
  }
  return 0;
}

std::vector<std::string> slowdown_reason_names(std::uint64_t bits) {
  std::vector<std::string> names;
  for (const auto& reason : cuda_api::nvml::k_clocks_event_reasons) {
    if ((bits & reason.bit & k_slowdown_reasons) != 0) {
      names.emplace_back(reason.name);
    }
  }
  return names;
}

namespace {
std::optional<Spread> spread(std::vector<unsigned> values) {
  if (values.empty()) {
    return std::nullopt;
  }
  std::sort(values.begin(), values.end());
  return Spread{values.front(), values[values.size() / 2], values.back()};
}
} // namespace

ClockSummary summarize_samples(const std::vector<ClockSample>& samples) {
  ClockSummary summary;
  if (samples.empty()) {
    return summary;
  }
  std::vector<unsigned> sm;
  std::vector<unsigned> mem;
  std::optional<unsigned> power;
  std::optional<unsigned> temperature;
  std::uint64_t seen = 0;
  bool any_reasons = false;
  for (const auto& sample : samples) {
    if (sample.sm_mhz) {
      sm.push_back(*sample.sm_mhz);
    }
    if (sample.mem_mhz) {
      mem.push_back(*sample.mem_mhz);
    }
    if (sample.power_mw) {
      power = std::max(power.value_or(0), *sample.power_mw);
    }
    if (sample.temperature_c) {
      temperature = std::max(temperature.value_or(0), *sample.temperature_c);
    }
    if (sample.reasons) {
      seen |= *sample.reasons;
      any_reasons = true;
    }
  }
  summary.samples = samples.size();
  summary.sm_mhz = spread(sm);
  summary.mem_mhz = spread(mem);
  if (power) {
    summary.power_w_max = *power / 1000.0;
  }
  summary.temperature_c_max = temperature;
  if (any_reasons) {
    std::vector<std::string> reasons;
    for (const auto& reason : cuda_api::nvml::k_clocks_event_reasons) {
      if ((seen & reason.bit) != 0) {
        reasons.emplace_back(reason.name);
      }
    }
    summary.reasons_seen = std::move(reasons);
    summary.slowdown_reasons = slowdown_reason_names(seen);
  }
  return summary;
}

unsigned worker_limit(std::optional<unsigned> configured, unsigned cpus) {
  if (configured) {
    return std::max(1U, *configured);
  }
  return std::max(1U, cpus / 2);
}

unsigned usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    return static_cast<unsigned>(std::max(1, CPU_COUNT(&set)));
  }
  return 1;
}

} // namespace cudadiag::selftest
