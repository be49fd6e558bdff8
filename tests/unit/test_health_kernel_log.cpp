// The kernel log's Xid/SXid lines (health/kernel_log) on lines public reports posted
// (tests/fixtures/kernel-log/, each block citing its report), and the findings they become
// (findings/kernel_log_rules): one per code and GPU, severity and repair class by code.
#include "findings/kernel_log_rules.hpp"
#include "health/kernel_log.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

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
  CHECK(log.events.size() == 12);
  CHECK_FALSE(log.truncated);
  const auto found = cudadiag::findings::evaluate_kernel_log(log, {});
  CHECK(found.size() == 8); // 48, 64, 13, 109, 79, 45, 31 and SXid 22013

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
