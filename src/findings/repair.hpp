#pragma once
// Repair classes: the one action automation takes to clear a finding, least to most invasive.
// Every finding instance carries one (the JSON report's `findings[].repair`, the Prometheus
// textfile's `repair` label, `cudadiag fleet`'s per-node and per-class counts); the findings table
// holds each id's default and a rule may choose another for one instance (an Xid by its code, a
// file reached through a variable or a package by its route). Header-only so that the fleet
// reader, which links no rules, names and orders the classes the same way.
//
//   none                 nothing to repair (information, or a site's own gate)
//   fix_environment      change a variable, a search path, a configuration file; restart the job
//   reinstall_package    install, upgrade or remove a package (driver, toolkit, wheel, conda)
//   restart_process      the process (application or service) must start again
//   reset_gpu            `nvidia-smi -r` (or the GPU's unbind/rebind) with no process on it
//   reboot               the node must reboot (driver reload where no reset helps)
//   hardware_inspection  drain the node; a person inspects the GPU, its board, slot, power, cooling

#include <array>
#include <optional>
#include <string_view>

namespace cudadiag::findings {

enum class Repair {
  none,
  fix_environment,
  reinstall_package,
  restart_process,
  reset_gpu,
  reboot,
  hardware_inspection
};

// Every class, least invasive first: the order of the enum and of every list rendered from it.
inline constexpr std::array<Repair, 7> k_repairs = {
    Repair::none,      Repair::fix_environment, Repair::reinstall_package,  Repair::restart_process,
    Repair::reset_gpu, Repair::reboot,          Repair::hardware_inspection};

inline constexpr std::string_view to_string(Repair repair) {
  switch (repair) {
  case Repair::none: return "none";
  case Repair::fix_environment: return "fix_environment";
  case Repair::reinstall_package: return "reinstall_package";
  case Repair::restart_process: return "restart_process";
  case Repair::reset_gpu: return "reset_gpu";
  case Repair::reboot: return "reboot";
  case Repair::hardware_inspection: return "hardware_inspection";
  }
  return "none";
}

// The class a `repair` string names; nullopt for any other text (a report of a later release).
inline constexpr std::optional<Repair> parse_repair(std::string_view text) {
  for (const auto repair : k_repairs) {
    if (to_string(repair) == text) {
      return repair;
    }
  }
  return std::nullopt;
}

} // namespace cudadiag::findings
