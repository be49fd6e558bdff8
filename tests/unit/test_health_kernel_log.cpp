// The kernel log's Xid/SXid lines (health/kernel_log) on lines public reports posted
// (tests/fixtures/kernel-log/, each block citing its report), and the findings they become
// (findings/kernel_log_rules): one per code and GPU, severity and repair class by code.
#include "checks.hpp"
#include "findings/kernel_log_rules.hpp"
#include "health/kernel_log.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <sys/stat.h>

namespace {

using cudadiag::findings::Finding;
using cudadiag::findings::Repair;
using cudadiag::findings::Severity;
using cudadiag::health::EventKind;
using cudadiag::health::KernelLogStatus;

const std::string k_public = CUDADIAG_SOURCE_DIR "/tests/fixtures/kernel-log/public-reports.log";
const std::string k_kmsg = CUDADIAG_SOURCE_DIR "/tests/fixtures/kernel-log/kmsg-format.log";

const Finding* with_code(const std::vector<Finding>& found, int code) {
  for (const auto& finding : found) {
    if (finding.evidence.at("code") == code) {
      return &finding;
    }
  }
  return nullptr;
}

} // namespace

TEST_CASE("kernel log: an Xid line with PCI id, pid and name, in dmesg, journal and kmsg form") {
  using cudadiag::health::parse_kernel_line;
  const auto dmesg = parse_kernel_line(
      "Dec  2 11:38:47 worker4 kernel: [  219.470994] NVRM: Xid (PCI:0000:07:00): 48, pid='<unknown>', "
      "name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU");
  REQUIRE(dmesg);
  CHECK(dmesg->kind == EventKind::xid);
  CHECK(dmesg->code == 48);
  CHECK(dmesg->pci == "0000:07:00");
  REQUIRE(dmesg->seconds);
  CHECK(*dmesg->seconds == doctest::Approx(219.470994));
  CHECK_FALSE(dmesg->pid);
  CHECK_FALSE(dmesg->name);
  CHECK(dmesg->text == "An uncorrectable double bit error (DBE) has been detected on GPU");

  const auto named = parse_kernel_line(
      "[Fri Aug 30 11:43:14 2024] NVRM: Xid (PCI:0000:cb:00): 109, pid=1797828, name=pt_main_thread, Ch "
      "00000008, errorString CTX SWITCH TIMEOUT, Info 0x58005");
  REQUIRE(named);
  CHECK(named->code == 109);
  CHECK(named->pid == 1797828);
  CHECK(named->name == "pt_main_thread");
  CHECK_FALSE(named->seconds); // dmesg --ctime: a date, not seconds since boot
  CHECK(named->text == "Ch 00000008, errorString CTX SWITCH TIMEOUT, Info 0x58005");

  const auto record =
      parse_kernel_line("3,1002,219470994,-;NVRM: Xid (PCI:0000:07:00): 79, GPU has fallen off "
                        "the bus.\n SUBSYSTEM=pci\n");
  REQUIRE(record);
  CHECK(record->code == 79);
  CHECK(*record->seconds == doctest::Approx(219.470994));
  CHECK(record->text == "GPU has fallen off the bus.");

  const auto sxid =
      parse_kernel_line("[   38.178720] nvidia-nvswitch3: SXid (PCI:0000:04:00.0): 22013, Non-fatal, "
                        "Link 44 Minion Link DLREQ interrupt");
  REQUIRE(sxid);
  CHECK(sxid->kind == EventKind::sxid);
  CHECK(sxid->code == 22013);
  CHECK(sxid->pci == "0000:04:00.0");
  CHECK(sxid->text == "Non-fatal, Link 44 Minion Link DLREQ interrupt");

  CHECK_FALSE(parse_kernel_line("NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus."));
  CHECK_FALSE(parse_kernel_line("NVRM: Xid (PCI:0000:2b:00): seventy-nine"));
  CHECK_FALSE(parse_kernel_line(""));
}

TEST_CASE("kernel log: PCI ids match whatever their spelling") {
  using cudadiag::health::parse_pci_address;
  CHECK(parse_pci_address("0000:3b:00") == parse_pci_address("00000000:3B:00.0"));
  CHECK(parse_pci_address("PCI:0000:3b:00") == parse_pci_address("0000:3b:00.0"));
  CHECK(parse_pci_address("0000:3b:00") != parse_pci_address("0000:3c:00"));
  CHECK(parse_pci_address("0001:3b:00") != parse_pci_address("0000:3b:00"));
  CHECK_FALSE(parse_pci_address("GPU-0b11d014"));
}

TEST_CASE("kernel log: the public reports' lines become one finding per code and GPU") {
  const auto log = cudadiag::health::read_kernel_log(k_public);
  REQUIRE(log.status == KernelLogStatus::read);
  CHECK(log.events.size() == 13);
  CHECK_FALSE(log.truncated);
  const auto found = cudadiag::findings::evaluate_kernel_log(log, {});
  CHECK(found.size() == 9); // 48, 64, 13, 109, 79, 45, 31 and SXid 22013, 12028

  const auto* dbe = with_code(found, 48);
  REQUIRE(dbe != nullptr);
  CHECK(dbe->id == "gpu.xid");
  CHECK(dbe->severity == Severity::error);
  CHECK(dbe->repair == Repair::reset_gpu);
  CHECK(dbe->message.find("the GPU at PCI 0000:07:00") != std::string::npos);
  CHECK(dbe->message.find("at 219.5 s since boot") != std::string::npos);

  const auto* exception = with_code(found, 13);
  REQUIRE(exception != nullptr);
  CHECK(exception->severity == Severity::warning);
  CHECK(exception->repair == Repair::restart_process);
  CHECK(exception->evidence.at("count") == 3);
  CHECK(exception->message.find("3 lines, first at 93297.0 s, last at 93297.0 s") != std::string::npos);

  const auto* bus = with_code(found, 79);
  REQUIRE(bus != nullptr);
  CHECK(bus->severity == Severity::error);
  CHECK(bus->repair == Repair::reboot);

  CHECK(with_code(found, 64)->repair == Repair::hardware_inspection);
  CHECK(with_code(found, 45)->severity == Severity::info);
  CHECK(with_code(found, 45)->repair == Repair::none);
  CHECK(with_code(found, 109)->evidence.at("process") == "pt_main_thread");

  const auto* sxid = with_code(found, 22013);
  REQUIRE(sxid != nullptr);
  CHECK(sxid->id == "nvswitch.sxid");
  CHECK(sxid->severity == Severity::info); // the driver said Non-fatal
  CHECK(sxid->evidence.at("count") == 1);  // three lines, one event
  CHECK(sxid->message.find("Link 44") != std::string::npos);
  CHECK(sxid->repair == Repair::none);
  CHECK(sxid->evidence.at("sxid_class") == "non_fatal");

  // The catalogue's class where the driver's lines state none (only the Data line was posted).
  const auto* stalled = with_code(found, 12028);
  REQUIRE(stalled != nullptr);
  CHECK(stalled->id == "nvswitch.sxid");
  CHECK(stalled->severity == Severity::warning);
  CHECK(stalled->repair == Repair::reset_gpu);
  CHECK(stalled->evidence.at("known_code") == true);
  CHECK(stalled->evidence.at("pci") == "0000:84:00.0");
  CHECK(stalled->message.find("egress non-posted PRIV error") != std::string::npos);
  CHECK(stalled->message.find("FM D.4") != std::string::npos);
  CHECK(stalled->remedy.find("nvidia-smi -r") != std::string::npos);
}

TEST_CASE("kernel log: NVIDIA's SXid catalogue - one cited row per code, its class deciding severity and "
          "repair") {
  using cudadiag::findings::SxidClass;
  const auto& table = cudadiag::findings::sxid_codes();
  std::map<SxidClass, int> per_class;
  int previous = 0;
  for (const auto& row : table) {
    CAPTURE(row.code);
    CHECK(row.code > previous); // ascending, one row per code
    previous = row.code;
    CHECK_FALSE(row.meaning.empty());
    CHECK(row.source.rfind("FM D.", 0) == 0); // the Fabric Manager user guide's section
    ++per_class[row.listed];
    switch (row.listed) {
    case SxidClass::fatal:
      CHECK(row.source.find("D.5") != std::string_view::npos);
      CHECK(row.severity == Severity::error);
      CHECK(row.repair == Repair::reset_gpu); // the GPUs behind the port, reset
      break;
    case SxidClass::always_fatal:
      CHECK(row.source == "FM D.6");
      CHECK(row.severity == Severity::error);
      CHECK(row.repair == Repair::reboot); // the whole fabric: the host restarts
      break;
    case SxidClass::non_fatal:
      CHECK(row.source.rfind("FM D.4", 0) == 0);
      CHECK(row.repair != Repair::reboot);
      break;
    case SxidClass::notable: CHECK(row.source == "FM D.7"); break;
    }
    CHECK(cudadiag::findings::find_sxid_code(row.code) == &row);
  }
  CHECK(per_class[SxidClass::non_fatal] == 26);
  CHECK(per_class[SxidClass::fatal] == 41);
  CHECK(per_class[SxidClass::always_fatal] == 20);
  CHECK(per_class[SxidClass::notable] == 5);
  CHECK(cudadiag::findings::find_sxid_code(12029) == nullptr);
  CHECK(cudadiag::findings::find_sxid_code(0) == nullptr);
  // Corrected single-bit ECC errors need nothing; a wrong partition is configuration.
  CHECK(cudadiag::findings::find_sxid_code(11012)->repair == Repair::none);
  CHECK(cudadiag::findings::find_sxid_code(19071)->severity == Severity::info);
  CHECK(cudadiag::findings::find_sxid_code(11004)->repair == Repair::fix_environment);
  CHECK(cudadiag::findings::find_sxid_code(10004)->repair == Repair::hardware_inspection);
  CHECK(cudadiag::findings::find_sxid_code(20034)->listed == SxidClass::fatal);
  CHECK(cudadiag::findings::find_sxid_code(23001)->listed == SxidClass::always_fatal);
}

TEST_CASE("kernel log: an SXid event's finding takes its code's class, and the driver's Fatal outranks it") {
  cudadiag::testing::TempTree tree;
  // Lines in the driver's format (nvswitch's SXid report: the Data line, the line stating the
  // fatality, the Severity line), one event per switch.
  const auto path = tree.write(
      "kmsg.log",
      "[ 10.000001] nvidia-nvswitch0: SXid (PCI:0000:86:00.0): 20034, Data {0x00000020, 0x00000000}\n"
      "[ 10.000002] nvidia-nvswitch0: SXid (PCI:0000:86:00.0): 20034, Fatal, Link 32 LTSSM Fault Up\n"
      "[ 10.000003] nvidia-nvswitch0: SXid (PCI:0000:86:00.0): 20034, Severity 1 Engine instance 32\n"
      "[ 11.000000] nvidia-nvswitch1: SXid (PCI:0000:87:00.0): 23001, Fatal, Link 02 ingress SRC-VC buffer "
      "overflow\n"
      "[ 12.000000] nvidia-nvswitch2: SXid (PCI:0000:88:00.0): 22012, Fatal, Link 05 Minion Link NA "
      "interrupt\n"
      "[ 13.000000] nvidia-nvswitch3: SXid (PCI:0000:89:00.0): 11004, Fatal, Link 07 ingress invalid ACL\n"
      "[ 14.000000] nvidia-nvswitch3: SXid (PCI:0000:89:00.0): 11012, Non-fatal, Link 07 single bit ECC "
      "error\n"
      "[ 15.000000] nvidia-nvswitch3: SXid (PCI:0000:89:00.0): 29999, Fatal, Link 07 a code of a later "
      "driver\n"
      "[ 16.000000] nvidia-nvswitch3: SXid (PCI:0000:89:00.0): 29998, Non-fatal, Link 07 another one\n");
  const auto found = cudadiag::findings::evaluate_kernel_log(cudadiag::health::read_kernel_log(path), {});
  REQUIRE(found.size() == 7);

  const auto* lost_link = with_code(found, 20034);
  REQUIRE(lost_link != nullptr);
  CHECK(lost_link->severity == Severity::error);
  CHECK(lost_link->repair == Repair::reset_gpu);
  CHECK(lost_link->evidence.at("sxid_class") == "fatal");
  CHECK(lost_link->evidence.at("count") == 1); // three lines, one event
  CHECK(lost_link->message.find("LTSSM fault up") != std::string::npos);
  CHECK(lost_link->message.find("FM D.5") != std::string::npos);

  CHECK(with_code(found, 23001)->repair == Repair::reboot); // always fatal: the host restarts
  CHECK(with_code(found, 23001)->remedy.find("reboot") != std::string::npos);
  // A non-fatal code the driver calls Fatal: an error, its class at least a reset.
  CHECK(with_code(found, 22012)->severity == Severity::error);
  CHECK(with_code(found, 22012)->repair == Repair::hardware_inspection);
  CHECK(with_code(found, 11004)->severity == Severity::error);
  CHECK(with_code(found, 11004)->repair == Repair::reset_gpu);
  CHECK(with_code(found, 11012)->severity == Severity::info);
  CHECK(with_code(found, 11012)->repair == Repair::none);
  // Codes the catalogue does not list: the driver's word.
  CHECK(with_code(found, 29999)->severity == Severity::error);
  CHECK(with_code(found, 29999)->repair == Repair::reboot);
  CHECK(with_code(found, 29999)->evidence.at("known_code") == false);
  CHECK(with_code(found, 29999)->evidence.at("sxid_class") == nullptr);
  CHECK(with_code(found, 29998)->severity == Severity::info);
}

TEST_CASE("kernel log: kmsg records, the GPU named from the report's devices, repeats counted") {
  const auto log = cudadiag::health::read_kernel_log(k_kmsg);
  REQUIRE(log.status == KernelLogStatus::read);
  REQUIRE(log.events.size() == 2);
  cudadiag::verify::Device device;
  device.nvml.emplace();
  device.nvml->index = 3;
  device.nvml->name = "NVIDIA H100 80GB HBM3";
  device.nvml->pci_bus_id = "00000000:07:00.0";
  device.nvml->uuid = "GPU-0b11d014";
  const auto found = cudadiag::findings::evaluate_kernel_log(log, {device});
  REQUIRE(found.size() == 1);
  CHECK(found[0].message.find("GPU 3 (NVIDIA H100 80GB HBM3, 00000000:07:00.0)") != std::string::npos);
  CHECK(found[0].evidence.at("device") == 3);
  CHECK(found[0].evidence.at("uuid") == "GPU-0b11d014");
  CHECK(found[0].evidence.at("count") == 2);
  CHECK(found[0].evidence.at("pid") == 4242); // the last line's
}

TEST_CASE("kernel log: bounded to the last bytes - a missing or unreadable log is a status, not an error") {
  cudadiag::testing::TempTree tree;
  std::string text;
  for (int i = 0; i < 200; ++i) {
    text += "[ " + std::to_string(i) + ".000000] NVRM: Xid (PCI:0000:07:00): 13, Graphics Exception: line " +
            std::to_string(i) + "\n";
  }
  const auto path = tree.write("kmsg.log", text);
  const auto bounded = cudadiag::health::read_kernel_log(path, 1000);
  CHECK(bounded.truncated);
  CHECK(bounded.bytes <= 1000);
  REQUIRE_FALSE(bounded.events.empty());
  CHECK(bounded.events.size() < 200);
  CHECK(bounded.events.back().text == "Graphics Exception: line 199");

  const auto missing = cudadiag::health::read_kernel_log(tree.path("absent"));
  CHECK(missing.status == KernelLogStatus::unreadable);
  CHECK(missing.reason == "No such file or directory");
  CHECK(cudadiag::findings::evaluate_kernel_log(missing, {}).empty());

  const auto directory = cudadiag::health::read_kernel_log(tree.mkdir("dir"));
  CHECK(directory.status == KernelLogStatus::unreadable);

  const auto none = cudadiag::health::read_kernel_log("");
  CHECK(none.status == KernelLogStatus::not_read);
}

TEST_CASE("kernel log: Xid 154 takes the repair the driver names - every listed code is documented") {
  using cudadiag::findings::xid154_repair;
  CHECK(xid154_repair("GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)") ==
        Repair::reset_gpu);
  CHECK(xid154_repair(
            "GPU recovery action changed from 0x1 (GPU Reset Required) to 0x2 (Node Reboot Required)") ==
        Repair::reboot);
  CHECK(xid154_repair("GPU recovery action changed from 0x2 (Node Reboot Required) to 0x0 (None)") ==
        Repair::none);
  CHECK_FALSE(xid154_repair("something else"));
  int previous = 0;
  for (const auto& row : cudadiag::findings::xid_codes()) {
    CAPTURE(row.code);
    CHECK(row.code > previous); // ascending, one row per code
    previous = row.code;
    CHECK_FALSE(row.meaning.empty());
  }
  for (const int code : {13, 31, 43, 45, 48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120, 154}) {
    CAPTURE(code);
    CHECK(cudadiag::findings::find_xid_code(code) != nullptr);
  }
}

TEST_CASE("kernel log: docs/findings.md's SXid table is the code's table") {
  using cudadiag::findings::parse_repair;
  std::ifstream doc(CUDADIAG_SOURCE_DIR "/docs/findings.md");
  REQUIRE(doc.good());
  // Rows "| 11012, 11021 | D.4 | meaning | info | `none` |" of the section "## `nvswitch.sxid`".
  std::set<int> documented;
  bool in_section = false;
  for (std::string line; std::getline(doc, line);) {
    if (line.rfind("## ", 0) == 0) {
      in_section = line == "## `nvswitch.sxid`";
      continue;
    }
    if (!in_section || (line.rfind("| 1", 0) != 0 && line.rfind("| 2", 0) != 0)) {
      continue;
    }
    const auto cells = cudadiag::testing::markdown_cells(line);
    REQUIRE(cells.size() == 5);
    std::stringstream codes(cells[0]);
    for (std::string code; std::getline(codes, code, ',');) {
      CAPTURE(code);
      const auto* known = cudadiag::findings::find_sxid_code(std::stoi(code));
      REQUIRE(known != nullptr);
      CHECK(documented.insert(known->code).second);
      CHECK(cells[1].rfind(std::string(known->source.substr(3, 3)), 0) == 0); // "D.4"
      CHECK(cells[3] == cudadiag::findings::to_string(known->severity));
      CHECK(parse_repair(cells[4]) == known->repair);
    }
  }
  CHECK(documented.size() == cudadiag::findings::sxid_codes().size());
}
