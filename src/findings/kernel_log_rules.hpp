#pragma once
// Findings from the NVIDIA driver's events in the kernel log (health/kernel_log.hpp): gpu.xid, one
// per cause (an Xid code on one GPU, its repeats counted, with the first and last time), and
// nvswitch.sxid likewise for NVSwitch SXid events. The severity and repair class of an Xid come
// from its code (the table below, from NVIDIA's Xid catalogue); Xid 154 names the action itself.
// Those of an SXid come from its code too (NVIDIA's NVSwitch SXid catalogue); the driver's own
// "Fatal" on a line makes that instance an error needing at least a GPU reset.

#include "findings/findings.hpp"
#include "health/kernel_log.hpp"
#include "verify/facts.hpp"

#include <string_view>
#include <vector>

namespace cudadiag::findings {

// One documented Xid code: what it means, how serious it is, what clears it.
struct XidCode {
  int code;
  Severity severity;
  Repair repair;
  std::string_view meaning;
};

// Every code cudadiag explains, ascending; a code not listed is a warning needing a hardware
// inspection (NVIDIA's catalogue sends codes it does not resolve otherwise to support).
const std::vector<XidCode>& xid_codes();
const XidCode* find_xid_code(int code);

// The section of NVIDIA's NVSwitch SXid catalogue that lists a code: non-fatal (corrected, or
// confined to the traffic of some GPUs), fatal (the GPUs on that switch port, or the partitions
// across a trunk port, lose NVLink until reset), always fatal (the whole fabric, until the host
// restarts), or one of the other notable errors (host PRIV errors, thermal events).
enum class SxidClass { non_fatal, fatal, always_fatal, notable };
std::string_view to_string(SxidClass listed); // "non_fatal", "fatal", "always_fatal", "notable"

// One documented SXid code: its catalogue section, how serious it is, what clears it, and the
// section of the catalogue that says so.
struct SxidCode {
  int code;
  SxidClass listed;
  Severity severity;
  Repair repair;
  std::string_view source; // "FM D.4": the Fabric Manager user guide's section (kernel_log_rules.cpp)
  std::string_view meaning;
};

// Every SXid code cudadiag explains, ascending. A code not listed takes the driver's word: "Fatal"
// is an error needing a reboot, anything else is information.
const std::vector<SxidCode>& sxid_codes();
const SxidCode* find_sxid_code(int code);

// The repair Xid 154's message asks for ("... to 0x2 (Node Reboot Required)"); nullopt when the
// text names no action this release knows.
std::optional<Repair> xid154_repair(std::string_view text);

// The findings of a kernel log; `devices` (the report's, from the driver and NVML) name the GPU
// each event's PCI id belongs to.
std::vector<Finding> evaluate_kernel_log(const health::KernelLog& log,
                                         const std::vector<verify::Device>& devices);

} // namespace cudadiag::findings
