#pragma once
// The arithmetic behind the health tests (pcie, compute, memory) and the clock sampling, kept free
// of any driver or NVML call so that it is tested on CPU: the PCIe link's expected rate, the FP32
// FMA rate per SM by architecture, which clock event reasons slow a GPU down, the summary of NVML
// samples taken while a test ran, and how many self-test workers may run at once.

#include "selftest/result_facts.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::selftest {

// --- PCIe ---------------------------------------------------------------------------------------

// The raw one-direction data rate of a link in GB/s: GT/s per lane (gen1 2.5, gen2 5, gen3 8, gen4 16,
// gen5 32, gen6 64) x lanes x the encoding's payload share (8b/10b for gen1-2, 128b/130b for gen3-5,
// 242/256 FLIT for gen6) / 8. 0 for an unknown generation or width 0. Gen5 x16: 63.0 GB/s.
double pcie_raw_gbps(unsigned gen, unsigned width);

// Pinned host<->device copies reach this share of the raw rate on a healthy link (measured on the
// H200 host: 55.5 GB/s H2D and 55.3 GB/s D2H of gen5 x16's 63.0).
inline constexpr double k_pcie_efficiency = 0.88;
// A copy below this share of the expected rate is a degraded link (gpu.pcie_degraded).
inline constexpr double k_pcie_slow_fraction = 0.70;

// Judges the pinned H2D and D2H figures (GB/s) against the link.
PcieVerdict judge_pcie(const PcieLink& link, double h2d_gbps, double d2h_gbps);

// --- compute ------------------------------------------------------------------------------------

// FP32 FMA instructions per clock per SM for a compute capability (Volta/Turing/A100: 64; GA10x,
// Ada, Hopper, Blackwell: 128); 0 when the architecture is not in the table.
int fma_per_clock_per_sm(int cc_major, int cc_minor);

// --- clocks and throttling ----------------------------------------------------------------------

// One NVML reading while a test runs; nullopt for what NVML did not give.
struct ClockSample {
  double at_ms = 0; // since the test started
  std::optional<unsigned> sm_mhz, mem_mhz, power_mw, temperature_c;
  std::optional<std::uint64_t> reasons; // clocks event reason bits
};

// The reason bits that lower clocks below what the workload asks for (sw_power_cap, hw_slowdown,
// sw_thermal_slowdown, hw_thermal_slowdown, hw_power_brake_slowdown); idle, application-clock and
// sync-boost bits are not slowdowns.
inline constexpr std::uint64_t k_slowdown_reasons = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;
// The names of the slowdown bits set in `bits` (NVML's order).
std::vector<std::string> slowdown_reason_names(std::uint64_t bits);

// What NVML reported while a test ran (result_facts.hpp); no samples: samples 0 and nothing else.
ClockSummary summarize_samples(const std::vector<ClockSample>& samples);

// --- bounded concurrency ------------------------------------------------------------------------

// How many self-test workers run at once: `configured` when given (at least 1), else one per two
// CPUs this process may run on (at least 1): each worker keeps a CPU busy feeding its GPU and its
// jit test compiles on another.
unsigned worker_limit(std::optional<unsigned> configured, unsigned cpus);
// The CPUs this process may run on (sched_getaffinity), at least 1.
unsigned usable_cpus();

} // namespace cudadiag::selftest
