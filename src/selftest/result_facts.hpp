#pragma once
// The typed facts of a self-test result that the findings' rules read (findings/selftest_rules.cpp):
// the PCIe link and its verdict, the memory test's wrong words and NVML's error counters, the
// clocks NVML reported while a test ran, and the other processes that used the GPU meanwhile. Each renders as
// evidence into the result's details (details.pcie, details.memory, details.clocks and details.busy:
// docs/schema/report.schema.json), where the rest of the test-specific evidence lives.

#include "core/evidence.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace cudadiag::selftest {

// --- PCIe ---------------------------------------------------------------------------------------

// A GPU's PCIe link as NVML reports it; a field NVML did not give is nullopt.
struct PcieLink {
  std::string bus_id; // "00000000:19:00.0"
  std::optional<unsigned> gen_current, gen_max, width_current, width_max;
  friend bool operator==(const PcieLink&, const PcieLink&) = default;
};

struct PcieVerdict {
  double expected_current_gbps = 0; // from the current gen x width (0: NVML did not say)
  double expected_max_gbps = 0;     // from the max gen x width: what this slot should give
  bool link_below_max = false;      // trained below its max gen or width
  bool slow = false;                // a pinned copy under k_pcie_slow_fraction x expected_current
  std::string problem;              // "" when neither; else what and where, for the finding
  friend bool operator==(const PcieVerdict&, const PcieVerdict&) = default;
};

// The pcie test's judgement of the link (selftest/health.hpp judge_pcie); absent without NVML.
struct PcieFacts {
  PcieLink link;
  PcieVerdict verdict;
  friend bool operator==(const PcieFacts&, const PcieFacts&) = default;
};

// --- memory -------------------------------------------------------------------------------------

// Memory error counters; nullopt where NVML does not say (no ECC, no row remapping).
struct MemoryCounters {
  std::optional<std::uint64_t> ecc_corrected;   // volatile: since the driver loaded
  std::optional<std::uint64_t> ecc_uncorrected; // volatile
  std::optional<unsigned> remapped_correctable, remapped_uncorrectable;
  std::optional<bool> remap_pending, remap_failure;
  friend bool operator==(const MemoryCounters&, const MemoryCounters&) = default;
};

// A word the memory test read back wrong (hex strings, "0x...").
struct WrongWord {
  std::string address, expected, found;
  friend bool operator==(const WrongWord&, const WrongWord&) = default;
};

struct MemoryFacts {
  std::uint64_t wrong_words = 0;
  std::vector<WrongWord> first_wrong_words;  // the first few, in chunk order
  std::optional<MemoryCounters> nvml_before; // nullopt: NVML could not say
  std::optional<MemoryCounters> nvml_after;
  std::vector<std::string> new_errors; // selftest/nvml_health.hpp new_memory_errors
  std::uint64_t injected_words = 0;    // of wrong_words, flipped on purpose (inject_memory_errors)
  friend bool operator==(const MemoryFacts&, const MemoryFacts&) = default;
};

// --- clocks -------------------------------------------------------------------------------------

struct Spread {
  unsigned min = 0, median = 0, max = 0;
  friend bool operator==(const Spread&, const Spread&) = default;
};

// NVML's readings while a test ran (selftest/health.hpp summarize_samples); a field without data
// is nullopt. `reasons_seen` and `slowdown_reasons` are nullopt when NVML gave no reasons at all
// (unknown, not "none").
struct ClockSummary {
  std::size_t samples = 0;
  std::optional<Spread> sm_mhz, mem_mhz;
  std::optional<double> power_w_max;
  std::optional<unsigned> temperature_c_max;
  std::optional<std::vector<std::string>> reasons_seen;     // names of every bit seen
  std::optional<std::vector<std::string>> slowdown_reasons; // names of the slowdown bits seen
  friend bool operator==(const ClockSummary&, const ClockSummary&) = default;
};

// --- other processes on the GPU -----------------------------------------------------------------

// A process NVML listed on the GPU that is not one of this run's own (selftest/gpu_busy.hpp).
struct GpuProcess {
  unsigned pid = 0;
  std::string name;                               // /proc/PID/comm; "" where unreadable
  std::optional<std::uint64_t> used_memory_bytes; // nullopt: NVML did not say
  bool compute = false;                           // listed by the compute query
  bool graphics = false;                          // listed by the graphics query
  friend bool operator==(const GpuProcess&, const GpuProcess&) = default;
};

// Who else used the GPU while a test ran: NVML's running compute and graphics processes, sampled
// before, during and after the test, other than cudadiag's own (the main process and every process
// it started: workers, the ipc peer, a checkpoint target). `known` is false when NVML could not say
// (NOT_SUPPORTED, no entry point, a PID namespace whose pids NVML's do not match): unknown, not idle.
struct BusyFacts {
  bool known = false;
  std::string unknown_reason;                     // when !known
  std::vector<GpuProcess> others;                 // in pid order; empty and known: nobody else
  std::optional<unsigned> utilization_before_pct; // NVML's GPU utilisation before the worker's first test
  [[nodiscard]] bool busy() const { return known && !others.empty(); }
  friend bool operator==(const BusyFacts&, const BusyFacts&) = default;
};

// `more` folded into `into`: the others' union (by pid, the larger memory figure); known when any
// listing was (a process seen once is seen).
void merge_busy(BusyFacts& into, const BusyFacts& more);

// --- checkpoint and restore ---------------------------------------------------------------------

// How the checkpoint test's cycle ended (selftest/checkpoint_test.cpp).
enum class CheckpointOutcome {
  restored,    // every step succeeded and the target's data and context were intact afterwards
  unsupported, // the driver cannot checkpoint here (too old, a symbol missing, CUDA_ERROR_NOT_SUPPORTED)
  failed,      // a step failed or did not finish (`step` names it)
  corrupt,     // restore succeeded but the data or the context was wrong afterwards
};
std::string_view checkpoint_outcome_name(CheckpointOutcome outcome);
// nullopt for any other text.
std::optional<CheckpointOutcome> checkpoint_outcome_from(std::string_view name);

struct CheckpointFacts {
  CheckpointOutcome outcome = CheckpointOutcome::failed;
  // The step that failed or reported lack of support: "gate", "target", "get_state", "lock",
  // "checkpoint", "release", "restore", "unlock", "verify"; "" when restored.
  std::string step;
  std::optional<int> code;                // the CUresult of that step, when a driver call gave one
  std::string driver_words;               // cuGetErrorString of that code ("" when none)
  std::string detail;                     // what happened, in one sentence
  std::optional<int> driver_version;      // cuDriverGetVersion (13000 = 13.0)
  std::optional<bool> persistence_mode;   // NVML's; nullopt where it does not say
  bool target_ended_checkpointed = false; // the target was locked and checkpointed before it ended
  friend bool operator==(const CheckpointFacts&, const CheckpointFacts&) = default;
};

// --- as evidence --------------------------------------------------------------------------------

// {"ecc_corrected_volatile", "ecc_uncorrected_volatile", "remapped_rows_correctable",
//  "remapped_rows_uncorrectable", "remap_pending", "remap_failure"}
EvidenceValue counters_evidence(const MemoryCounters& counters);
// {"link": {bus_id, gen_current, gen_max, width_current, width_max}, "expected_current_gbps",
//  "expected_max_gbps", "link_below_max", "slow", "problem" (null when none)}
Evidence pcie_evidence(const PcieFacts& facts);
// {"wrong_words", "first_wrong_words": [{address, expected, found}], "nvml_before", "nvml_after",
//  "new_errors", "injected_words" (0 unless the fault injection was asked for)}
Evidence memory_evidence(const MemoryFacts& facts);
// {"samples", "sm_mhz": {min, median, max}, "mem_mhz", "power_w_max", "temperature_c_max",
//  "reasons_seen", "slowdown_reasons"}; no samples: {"samples": 0}.
Evidence clocks_evidence(const ClockSummary& summary);
// {"known", "unknown_reason", "others": [{pid, name, used_memory_bytes, compute, graphics}],
//  "utilization_before_pct"}
Evidence busy_evidence(const BusyFacts& facts);
EvidenceValue process_evidence(const GpuProcess& process);
// {"outcome", "step", "code", "driver_words", "detail", "driver_version", "persistence_mode",
//  "target_ended_checkpointed"}; empty strings are null.
Evidence checkpoint_evidence(const CheckpointFacts& facts);

} // namespace cudadiag::selftest
