#pragma once
// Findings from the NVIDIA driver's events in the kernel log (health/kernel_log.hpp): gpu.xid, one
// per cause (an Xid code on one GPU, its repeats counted, with the first and last time), and
// nvswitch.sxid likewise for NVSwitch SXid events. The severity and repair class of an Xid come
// from its code (the table below, from NVIDIA's Xid catalogue); Xid 154 names the action itself.

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

// The repair Xid 154's message asks for ("... to 0x2 (Node Reboot Required)"); nullopt when the
// text names no action this release knows.
std::optional<Repair> xid154_repair(std::string_view text);

// The findings of a kernel log; `devices` (the report's, from the driver and NVML) name the GPU
// each event's PCI id belongs to.
std::vector<Finding> evaluate_kernel_log(const health::KernelLog& log,
                                         const std::vector<verify::Device>& devices);

} // namespace cudadiag::findings
