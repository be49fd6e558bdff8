#include "findings/kernel_log_rules.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

namespace cudadiag::findings {

const std::vector<XidCode>& xid_codes() {
  // From NVIDIA's Xid catalogue ("Xid Errors", docs.nvidia.com/deploy/xid-errors/, the catalogue of
  // Ampere and newer GPUs: analyzing-xid-catalog.html, and its resolution buckets RESTART_APP →
  // restart_process, RESET_GPU → reset_gpu, RESTART_BM → reboot, CONTACT_SUPPORT / CHECK_MECHANICALS →
  // hardware_inspection, IGNORE → none) and NVIDIA's dynamic page retirement and row remapping
  // guides (Xid 48, 63, 64, 92, 94, 95). One row per code, ascending.
  // clang-format off
  static const std::vector<XidCode> table = {
    {8,   Severity::warning, Repair::restart_process,     "GPU stopped processing: a channel's idle timeout, usually the application's own hang"},
    {13,  Severity::warning, Repair::restart_process,     "Graphics Engine Exception: usually the application (an illegal address or instruction, an out-of-range access); a driver or hardware fault when it repeats across applications"},
    {31,  Severity::warning, Repair::restart_process,     "GPU memory page fault (MMU fault): usually the application's illegal memory access; a driver or hardware fault when it repeats across applications"},
    {43,  Severity::warning, Repair::restart_process,     "GPU stopped processing: the driver reset a channel after the application's own fault"},
    {45,  Severity::info,    Repair::none,                "Preemptive cleanup: an application's channels were torn down after it was stopped (a signal, or an earlier Xid)"},
    {48,  Severity::error,   Repair::reset_gpu,           "Double-bit ECC error (DBE) in GPU memory: uncorrectable, the application using it was stopped; a GPU reset retires the page or remaps the row"},
    {61,  Severity::error,   Repair::reset_gpu,           "Internal micro-controller breakpoint or warning (PMU)"},
    {62,  Severity::error,   Repair::reset_gpu,           "Internal micro-controller halt"},
    {63,  Severity::warning, Repair::reset_gpu,           "ECC page retirement or row remapping recorded: it takes effect at the next GPU reset"},
    {64,  Severity::error,   Repair::hardware_inspection, "ECC page retirement or row remapping failed: the memory cannot be repaired in the field"},
    {68,  Severity::warning, Repair::restart_process,     "Video decoder (NVDEC) exception"},
    {69,  Severity::warning, Repair::restart_process,     "Graphics engine class error"},
    {74,  Severity::error,   Repair::reset_gpu,           "NVLink error: a link reported a fatal or uncorrectable error (its details name the link); persistent ones point at the link's hardware"},
    {79,  Severity::error,   Repair::reboot,              "GPU has fallen off the bus: it no longer answers on PCIe (power, temperature, a riser or slot, or a failing GPU); check the mechanics if it recurs"},
    {92,  Severity::warning, Repair::hardware_inspection, "High single-bit ECC error rate: corrected, but the memory is degrading"},
    {94,  Severity::error,   Repair::restart_process,     "Contained ECC error: an uncorrectable memory error confined to the application using it (that application was stopped, the others go on); a GPU reset activates the row remapping"},
    {95,  Severity::error,   Repair::reset_gpu,           "Uncontained ECC error: an uncorrectable memory error that could not be confined; every application on the GPU is affected"},
    {109, Severity::warning, Repair::restart_process,     "Context switch timeout"},
    {119, Severity::error,   Repair::reset_gpu,           "GSP RPC timeout: the GPU System Processor's firmware did not answer the driver"},
    {120, Severity::error,   Repair::reset_gpu,           "GSP error: the GPU System Processor's firmware reported an error"},
    {140, Severity::error,   Repair::reset_gpu,           "Unrecovered ECC error"},
    {154, Severity::error,   Repair::reset_gpu,           "GPU recovery action changed: the driver states the action the GPU needs (GPU Reset Required, Node Reboot Required, Drain P2P, Drain and Reset)"},
  };
  // clang-format on
  return table;
}

const XidCode* find_xid_code(int code) {
  for (const auto& row : xid_codes()) {
    if (row.code == code) {
      return &row;
    }
  }
  return nullptr;
}

const std::vector<SxidCode>& sxid_codes() {
  // From NVIDIA's NVSwitch SXid catalogue: the Fabric Manager User Guide (DU-09883-001 v1.3, October
  // 2023; docs.nvidia.com/datacenter/tesla/pdf/fabric-manager-user-guide.pdf), appendix D "NVSwitch
  // SXid errors": D.4 non-fatal, D.5 fatal, D.6 always fatal, D.7 other notable SXid errors, and the
  // recovery each names ("not applicable" -> none; "restart the guest VM", which resets the GPUs it
  // holds, and "reset the GPUs and NVSwitches" (D.9) -> reset_gpu; "restart the host to reset the
  // entire fabric" -> reboot; "check the link's mechanical connections", "ensure the cooling" ->
  // hardware_inspection; "validate the partition's routing" -> fix_environment). Each row's source
  // is its section ("FM D.4"). The rows were taken from the guide's tables as GPUd transcribes them
  // (leptonai/gpud, components/accelerator/nvidia/query/sxid) and checked against Konduktor's list
  // of the D.4 codes (Trainy-ai/konduktor, konduktor/controller/constants.py). One row per code,
  // ascending.
  // clang-format off
  static const std::vector<SxidCode> table = {
    {10001, SxidClass::notable,      Severity::warning, Repair::none,                "FM D.7", "host PRIV error: not fatal itself, but other fatal SXids may follow"},
    {10002, SxidClass::notable,      Severity::warning, Repair::none,                "FM D.7", "host PRIV timeout: not fatal itself, but other fatal SXids may follow"},
    {10003, SxidClass::notable,      Severity::error,   Repair::reset_gpu,           "FM D.7", "host unhandled interrupt: never expected; fatal to the fabric until every GPU and NVSwitch is reset"},
    {10004, SxidClass::notable,      Severity::warning, Repair::hardware_inspection, "FM D.7", "thermal event start: the switch's links may drop to single-lane mode (less NVLink throughput); the cooling may not suffice"},
    {10005, SxidClass::notable,      Severity::info,    Repair::none,                "FM D.7", "thermal event end (its start is its own finding)"},
    {11001, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "ingress invalid command"},
    {11004, SxidClass::non_fatal,    Severity::warning, Repair::fix_environment,     "FM D.4", "ingress invalid ACL: a fabric partition's routing is wrong (check it with nvswitch-audit); the GPUs' NVLink traffic stalls and their CUDA jobs are aborted (Xid 45)"},
    {11009, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "ingress invalid VCSet"},
    {11012, SxidClass::non_fatal,    Severity::info,    Repair::none,                "FM D.4", "single-bit ECC error, corrected by the NVSwitch: no impact"},
    {11013, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "ingress header double-bit ECC error"},
    {11018, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "ingress RID double-bit ECC error"},
    {11019, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "ingress RLAN double-bit ECC error"},
    {11020, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "ingress control parity error"},
    {11021, SxidClass::non_fatal,    Severity::info,    Repair::none,                "FM D.4", "single-bit ECC error, corrected by the NVSwitch: no impact"},
    {11022, SxidClass::non_fatal,    Severity::info,    Repair::none,                "FM D.4", "single-bit ECC error, corrected by the NVSwitch: no impact"},
    {11023, SxidClass::non_fatal,    Severity::info,    Repair::none,                "FM D.4", "single-bit ECC error, corrected by the NVSwitch: no impact"},
    {12001, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "egress crossbar overflow"},
    {12002, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "egress packet route error"},
    {12020, SxidClass::always_fatal, Severity::error,   Repair::reboot,              "FM D.6", "egress sequence ID error"},
    {12021, SxidClass::non_fatal,    Severity::info,    Repair::none,                "FM D.4", "single-bit ECC error, corrected by the NVSwitch: no impact"},
    {12022, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "egress input double-bit ECC error"},
    {12023, SxidClass::non_fatal,    Severity::info,    Repair::none,                "FM D.4", "single-bit ECC error, corrected by the NVSwitch: no impact"},
    {12024, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "egress output double-bit ECC error"},
    {12025, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "egress credit overflow"},
    {12026, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "egress destination request ID error"},
    {12027, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "egress destination response ID error"},
    {12028, SxidClass::non_fatal,    Severity::warning, Repair::reset_gpu,           "FM D.4", "egress non-posted PRIV error: the GPUs' NVLink traffic stalls and their CUDA jobs are aborted (Xid 45)"},
    {12030, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "egress control parity error"},
    {12031, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "egress credit parity error"},
    {12032, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "egress flit type mismatch"},
    {14017, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "TS ATO timeout"},
    {15001, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "route buffer over- or underflow"},
    {15006, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "route transdone over- or underflow"},
    {15008, SxidClass::non_fatal,    Severity::info,    Repair::none,                "FM D.4", "single-bit ECC error, corrected by the NVSwitch: no impact"},
    {15009, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "route GLT double-bit ECC error"},
    {15010, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "route parity error"},
    {15011, SxidClass::non_fatal,    Severity::info,    Repair::none,                "FM D.4", "single-bit ECC error, corrected by the NVSwitch: no impact"},
    {15012, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "route incoming double-bit ECC error"},
    {15013, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "route credit parity error"},
    {19047, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "NCISOC header double-bit ECC error"},
    {19048, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "NCISOC data double-bit ECC error"},
    {19049, SxidClass::non_fatal,    Severity::info,    Repair::none,                "FM D.4", "single-bit ECC error, corrected by the NVSwitch: no impact"},
    {19054, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "HDR RAM double-bit ECC error"},
    {19055, SxidClass::non_fatal,    Severity::info,    Repair::none,                "FM D.4", "single-bit ECC error, corrected by the NVSwitch: no impact"},
    {19056, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "DAT0 RAM double-bit ECC error"},
    {19057, SxidClass::non_fatal,    Severity::info,    Repair::none,                "FM D.4", "single-bit ECC error, corrected by the NVSwitch: no impact"},
    {19058, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "DAT1 RAM double-bit ECC error"},
    {19059, SxidClass::non_fatal,    Severity::info,    Repair::none,                "FM D.4", "single-bit ECC error, corrected by the NVSwitch: no impact"},
    {19060, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "CREQ RAM header double-bit ECC error"},
    {19061, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "CREQ RAM data double-bit ECC error"},
    {19062, SxidClass::non_fatal,    Severity::info,    Repair::none,                "FM D.4", "single-bit ECC error, corrected by the NVSwitch: no impact"},
    {19063, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "response RAM header double-bit ECC error"},
    {19064, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "response RAM data double-bit ECC error"},
    {19065, SxidClass::non_fatal,    Severity::info,    Repair::none,                "FM D.4", "single-bit ECC error, corrected by the NVSwitch: no impact"},
    {19066, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "COM RAM header double-bit ECC error"},
    {19067, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "COM RAM data double-bit ECC error"},
    {19068, SxidClass::non_fatal,    Severity::info,    Repair::none,                "FM D.4", "single-bit ECC error, corrected by the NVSwitch: no impact"},
    {19069, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "RSP1 RAM header double-bit ECC error"},
    {19070, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "RSP1 RAM data double-bit ECC error"},
    {19071, SxidClass::non_fatal,    Severity::info,    Repair::none,                "FM D.4", "single-bit ECC error, corrected by the NVSwitch: no impact"},
    {19084, SxidClass::non_fatal,    Severity::error,   Repair::reset_gpu,           "FM D.4", "AN1 heartbeat timeout: it usually comes with a fatal SXid; every GPU and NVSwitch needs a reset"},
    {20001, SxidClass::non_fatal,    Severity::info,    Repair::none,                "FM D.4", "TX replay error: an NVLink packet was sent again (the port's throughput may drop)"},
    {20012, SxidClass::non_fatal,    Severity::warning, Repair::hardware_inspection, "FM D.4", "broken or inconsistent NVLink connection: check the link's mechanics unless a shutdown was uncoordinated"},
    {20034, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "LTSSM fault up: the link went down from active (with other NVLink errors, usually); a GPU reset on H100, report the GPU if it persists"},
    {22003, SxidClass::always_fatal, Severity::error,   Repair::reboot,              "FM D.6", "Minion halt"},
    {22011, SxidClass::always_fatal, Severity::error,   Repair::reboot,              "FM D.6", "Minion external error"},
    {22012, SxidClass::non_fatal,    Severity::warning, Repair::hardware_inspection, "FM D.4, D.5", "Minion link NA interrupt: a broken or inconsistent NVLink connection; check the link's mechanics unless a shutdown was uncoordinated"},
    {22013, SxidClass::non_fatal,    Severity::info,    Repair::none,                "FM D.4", "Minion link DLREQ interrupt: safe to ignore"},
    {23001, SxidClass::always_fatal, Severity::error,   Repair::reboot,              "FM D.6", "ingress SRC-VC buffer overflow"},
    {23002, SxidClass::always_fatal, Severity::error,   Repair::reboot,              "FM D.6", "ingress SRC-VC buffer underflow"},
    {23003, SxidClass::always_fatal, Severity::error,   Repair::reboot,              "FM D.6", "egress DST-VC credit overflow"},
    {23004, SxidClass::always_fatal, Severity::error,   Repair::reboot,              "FM D.6", "egress DST-VC credit underflow"},
    {23005, SxidClass::always_fatal, Severity::error,   Repair::reboot,              "FM D.6", "ingress packet burst error"},
    {23006, SxidClass::always_fatal, Severity::error,   Repair::reboot,              "FM D.6", "ingress packet sticky error"},
    {23007, SxidClass::always_fatal, Severity::error,   Repair::reboot,              "FM D.6", "possible bubbles at ingress"},
    {23008, SxidClass::always_fatal, Severity::error,   Repair::reboot,              "FM D.6", "ingress packet invalid destination"},
    {23009, SxidClass::always_fatal, Severity::error,   Repair::reboot,              "FM D.6", "ingress packet parity error"},
    {23010, SxidClass::always_fatal, Severity::error,   Repair::reboot,              "FM D.6", "ingress SRC-VC buffer overflow"},
    {23011, SxidClass::always_fatal, Severity::error,   Repair::reboot,              "FM D.6", "ingress SRC-VC buffer underflow"},
    {23012, SxidClass::always_fatal, Severity::error,   Repair::reboot,              "FM D.6", "egress DST-VC credit overflow"},
    {23013, SxidClass::always_fatal, Severity::error,   Repair::reboot,              "FM D.6", "egress DST-VC credit underflow"},
    {23014, SxidClass::always_fatal, Severity::error,   Repair::reboot,              "FM D.6", "ingress packet burst error"},
    {23015, SxidClass::always_fatal, Severity::error,   Repair::reboot,              "FM D.6", "ingress packet sticky error"},
    {23016, SxidClass::always_fatal, Severity::error,   Repair::reboot,              "FM D.6", "possible bubbles at ingress"},
    {23017, SxidClass::always_fatal, Severity::error,   Repair::reboot,              "FM D.6", "ingress credit parity error"},
    {24001, SxidClass::non_fatal,    Severity::info,    Repair::none,                "FM D.4", "single-bit ECC error, corrected by the NVSwitch: no impact"},
    {24002, SxidClass::non_fatal,    Severity::info,    Repair::none,                "FM D.4", "single-bit ECC error, corrected by the NVSwitch: no impact"},
    {24003, SxidClass::non_fatal,    Severity::info,    Repair::none,                "FM D.4", "single-bit ECC error, corrected by the NVSwitch: no impact"},
    {24004, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "sourcetrack TCEN0 crumbstore double-bit ECC error"},
    {24005, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "sourcetrack TCEN0 TD crumbstore double-bit ECC error"},
    {24006, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "sourcetrack TCEN1 crumbstore double-bit ECC error"},
    {24007, SxidClass::fatal,        Severity::error,   Repair::reset_gpu,           "FM D.5", "sourcetrack timeout"},
  };
  // clang-format on
  return table;
}

const SxidCode* find_sxid_code(int code) {
  const auto& table = sxid_codes();
  const auto at = std::lower_bound(table.begin(), table.end(), code,
                                   [](const SxidCode& row, int wanted) { return row.code < wanted; });
  return at != table.end() && at->code == code ? &*at : nullptr;
}

std::string_view to_string(SxidClass listed) {
  switch (listed) {
  case SxidClass::non_fatal: return "non_fatal";
  case SxidClass::fatal: return "fatal";
  case SxidClass::always_fatal: return "always_fatal";
  case SxidClass::notable: return "notable";
  }
  return "notable";
}

std::optional<Repair> xid154_repair(std::string_view text) {
  // "GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)": the part after "to".
  const auto to = text.rfind(" to ");
  const auto action = to == std::string_view::npos ? text : text.substr(to);
  if (action.find("Reboot") != std::string_view::npos) {
    return Repair::reboot;
  }
  if (action.find("Reset") != std::string_view::npos || action.find("Drain") != std::string_view::npos) {
    return Repair::reset_gpu;
  }
  if (action.find("None") != std::string_view::npos) {
    return Repair::none;
  }
  return std::nullopt;
}

namespace {

// The device a PCI id names: "GPU 0 (NVIDIA H100 80GB HBM3, 00000000:3B:00.0)"; the ordinal
// (CUDA's, else NVML's index) for the evidence, nullopt when no device matches.
struct DeviceName {
  std::string text;
  std::optional<int> ordinal;
  std::optional<std::string> uuid;
};

DeviceName device_for(const std::string& pci, const std::vector<verify::Device>& devices) {
  const auto wanted = health::parse_pci_address(pci);
  for (const auto& device : devices) {
    const auto* bus_id = device.nvml && device.nvml->pci_bus_id       ? &*device.nvml->pci_bus_id
                         : device.driver && device.driver->pci_bus_id ? &*device.driver->pci_bus_id
                                                                      : nullptr;
    if (bus_id == nullptr || !wanted || health::parse_pci_address(*bus_id) != wanted) {
      continue;
    }
    DeviceName out;
    out.ordinal = device.driver ? std::optional<int>(device.driver->ordinal)
                  : device.nvml ? std::optional<int>(static_cast<int>(device.nvml->index))
                                : std::nullopt;
    const auto name = device.nvml && device.nvml->name       ? *device.nvml->name
                      : device.driver && device.driver->name ? *device.driver->name
                                                             : std::string("GPU");
    out.uuid = device.nvml && device.nvml->uuid ? device.nvml->uuid
               : device.driver                  ? device.driver->uuid
                                                : std::nullopt;
    out.text = "GPU " + (out.ordinal ? std::to_string(*out.ordinal) + " " : std::string()) + "(" + name +
               ", " + *bus_id + ")";
    return out;
  }
  return {"the GPU at PCI " + pci, std::nullopt, std::nullopt};
}

std::string seconds_text(const std::optional<double>& seconds) {
  if (!seconds) {
    return "?";
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f s", *seconds);
  return buffer;
}

struct Group {
  const health::KernelEvent* first = nullptr;
  const health::KernelEvent* last = nullptr; // for an SXid, the last line that states its fatality
  std::size_t count = 0;                     // lines (an SXid: lines that state its fatality)
  bool fatal = false;                        // an SXid line said "Fatal"
};

// An SXid event is several lines ("Data {...}", "Non-fatal, Link 44 ...", "Severity 0 Engine ...");
// the one that states the fatality describes it.
bool states_fatality(const health::KernelEvent& event) {
  return event.text.rfind("Non-fatal", 0) == 0 || event.text.rfind("Fatal", 0) == 0;
}

std::string remedy_for(Repair repair, health::EventKind kind) {
  if (kind == health::EventKind::sxid) {
    const std::string catalogue = " NVIDIA's Fabric Manager user guide (docs.nvidia.com/datacenter/tesla/"
                                  "fabric-manager-user-guide, \"NVSwitch SXid errors\") explains the code.";
    switch (repair) {
    case Repair::none:
      return "Nothing to repair; a code that keeps coming back on one link points at that link." + catalogue;
    case Repair::fix_environment:
      return "Check the fabric partition's routing (`nvswitch-audit`) and the Fabric Manager's "
             "configuration, "
             "then start the partition's jobs again." +
             catalogue;
    case Repair::reset_gpu:
      return "Drain the GPUs behind this NVSwitch, stop their processes and reset the GPUs and NVSwitches "
             "(`nvidia-smi -r`; the Fabric Manager must run); reboot where the reset fails." +
             catalogue;
    case Repair::reboot:
      return "Drain the node and reboot it: the whole NVLink fabric is down until the host restarts." +
             catalogue;
    case Repair::hardware_inspection:
      return "Have the NVLink connection or the cooling the code names inspected (`nvidia-bug-report.sh` "
             "collects what support asks for)." +
             catalogue;
    case Repair::restart_process:
    case Repair::reinstall_package: break;
    }
    return "See the event's code." + catalogue;
  }
  const std::string catalogue =
      " NVIDIA's Xid catalogue (docs.nvidia.com/deploy/xid-errors) explains the code.";
  switch (repair) {
  case Repair::none:
    return "Nothing to repair: it follows another event or an application's end." + catalogue;
  case Repair::restart_process:
    return "Restart the application that was running (the message names its pid and name); if the same code "
           "comes back with other applications, drain the node and check the GPU (`nvidia-smi -q`)." +
           catalogue;
  case Repair::reset_gpu:
    return "Drain the GPU, stop its processes and reset it (`nvidia-smi -r -i BUS_ID`); reboot where the "
           "reset fails. If it comes back after the reset, have the GPU inspected." +
           catalogue;
  case Repair::reboot:
    return "Drain the node and reboot it; if the event recurs, have the GPU, its slot or riser, power and "
           "cooling inspected (`nvidia-bug-report.sh` collects what support asks for)." +
           catalogue;
  case Repair::hardware_inspection:
    return "Take the GPU out of service and have it inspected (`nvidia-smi -q -d "
           "ECC,ROW_REMAPPER,PAGE_RETIREMENT`; `nvidia-bug-report.sh` for support)." +
           catalogue;
  case Repair::fix_environment:
  case Repair::reinstall_package: break;
  }
  return "See the event's code." + catalogue;
}

// What an SXid's catalogue section means for the fabric.
std::string_view sxid_class_text(SxidClass listed) {
  switch (listed) {
  case SxidClass::non_fatal: return "non-fatal";
  case SxidClass::fatal: return "fatal to the GPUs on that switch port until they are reset";
  case SxidClass::always_fatal: return "always fatal: the whole fabric, until the host restarts";
  case SxidClass::notable: return "a notable error";
  }
  return "a notable error";
}

} // namespace

std::vector<Finding> evaluate_kernel_log(const health::KernelLog& log,
                                         const std::vector<verify::Device>& devices) {
  std::vector<Finding> out;
  if (log.status != health::KernelLogStatus::read) {
    return out;
  }
  // One cause per (kind, code, GPU), in the order each first appeared; Xid 154 also by its text
  // (each recovery-action change is its own state).
  std::map<std::tuple<health::EventKind, int, std::string, std::string>, std::size_t> index;
  std::vector<Group> groups;
  for (const auto& event : log.events) {
    const auto address = health::parse_pci_address(event.pci);
    const auto gpu = address ? std::to_string(address->domain) + ":" + std::to_string(address->bus) + ":" +
                                   std::to_string(address->device)
                             : event.pci;
    const auto key =
        std::make_tuple(event.kind, event.code, gpu, event.code == 154 ? event.text : std::string());
    const auto [at, inserted] = index.try_emplace(key, groups.size());
    if (inserted) {
      groups.push_back({&event, &event, 0, false});
    }
    auto& group = groups[at->second];
    if (event.kind == health::EventKind::xid) {
      group.last = &event;
      ++group.count;
    } else if (states_fatality(event)) {
      ++group.count;
      group.last = &event;
      group.fatal = group.fatal || event.text.rfind("Fatal", 0) == 0;
    }
  }
  for (const auto& group : groups) {
    const auto& event = *group.last;
    const auto device = device_for(event.pci, devices);
    const bool xid = event.kind == health::EventKind::xid;
    const auto* row = xid ? find_xid_code(event.code) : nullptr;
    const auto* sxid_row = xid ? nullptr : find_sxid_code(event.code);
    Severity severity = Severity::warning;
    Repair repair = Repair::hardware_inspection;
    std::string meaning = "not in cudadiag's table of Xid codes";
    if (row != nullptr) {
      severity = row->severity;
      repair = row->repair;
      meaning = std::string(row->meaning);
      if (event.code == 154) {
        repair = xid154_repair(event.text).value_or(row->repair);
        if (repair == Repair::none) {
          severity = Severity::info;
        }
      }
    } else if (sxid_row != nullptr) {
      severity = sxid_row->severity;
      repair = sxid_row->repair;
      meaning = std::string(sxid_row->meaning) + " (NVIDIA's SXid catalogue, " +
                std::string(sxid_row->source) + ": " + std::string(sxid_class_text(sxid_row->listed)) + ")";
      if (group.fatal) { // the driver's word for this instance outranks the catalogue's class
        severity = Severity::error;
        repair = std::max(repair, Repair::reset_gpu);
      }
    } else if (!xid) {
      // SXid: the driver says whether it was fatal ("22013, Non-fatal, Link 44 ...", "..., Fatal, ...").
      const bool fatal = group.fatal;
      severity = fatal ? Severity::error : Severity::info;
      repair = fatal ? Repair::reboot : Repair::none;
      meaning = fatal ? "a fatal NVSwitch error: the fabric's GPUs lose their NVLink peers until it is reset"
                      : "a non-fatal NVSwitch error (corrected)";
    }
    std::string message = std::string(health::to_string(event.kind)) + " " + std::to_string(event.code) +
                          " on " + (xid ? device.text : "NVSwitch " + event.pci) + ": " + meaning;
    if (!event.text.empty()) {
      message += " — the driver: \"" + event.text + "\"";
    }
    const auto count = std::max<std::size_t>(group.count, 1);
    if (count == 1) {
      message += event.seconds ? " (at " + seconds_text(event.seconds) + " since boot)" : std::string();
    } else if (group.first->seconds && event.seconds) {
      message += " (" + std::to_string(count) + " lines, first at " + seconds_text(group.first->seconds) +
                 ", last at " + seconds_text(event.seconds) + " since boot)";
    } else {
      message += " (" + std::to_string(count) + " lines)";
    }
    Evidence evidence{{"code", event.code},
                      {"kind", std::string(health::to_string(event.kind))},
                      {"pci", event.pci},
                      {"device", device.ordinal},
                      {"uuid", device.uuid},
                      {"count", count},
                      {"first_seconds", group.first->seconds},
                      {"last_seconds", event.seconds},
                      {"pid", event.pid},
                      {"process", event.name},
                      {"text", event.text},
                      {"known_code", row != nullptr || sxid_row != nullptr},
                      {"source", log.source}};
    if (!xid) {
      evidence["sxid_class"] =
          sxid_row != nullptr ? EvidenceValue(std::string(to_string(sxid_row->listed))) : EvidenceValue();
    }
    auto finding = make_finding(xid ? "gpu.xid" : "nvswitch.sxid", std::move(message), {},
                                std::move(evidence), severity);
    finding.repair = repair;
    finding.remedy = remedy_for(repair, event.kind);
    out.push_back(std::move(finding));
  }
  return out;
}

} // namespace cudadiag::findings
