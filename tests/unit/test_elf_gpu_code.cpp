// The GPU code in a library's fatbinaries: nvcc's own output for a known gencode list (the oracle),
// which architectures run on which GPU, and hostile sections (truncated, garbage, huge counts).
#include "elf/gpu_code.hpp"
#include "skip.hpp"
#include "synthetic_elf.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

using cudadiag::elf::GpuCode;
using cudadiag::elf::GpuCodeKind;
using cudadiag::elf::parse_gpu_code;
using cudadiag::elf::read_gpu_code;

namespace {

std::vector<std::string> names(const std::vector<GpuCode>& codes) {
  std::vector<std::string> out;
  for (const auto& code : codes) {
    out.push_back(code.name());
  }
  return out;
}

template <class T> void put(std::string& out, std::size_t at, const T& value) {
  if (out.size() < at + sizeof(T)) {
    out.resize(at + sizeof(T));
  }
  std::memcpy(out.data() + at, &value, sizeof(T));
}

// One fatbinary entry: kind 1 (PTX) or 2 (SASS), `arch`, `flags`, `payload` bytes after it.
std::string fatbin_entry(std::uint16_t kind, std::uint32_t arch, std::uint64_t flags, std::size_t payload,
                         std::uint16_t isa_major = 9) {
  std::string entry(64, '\0');
  put<std::uint16_t>(entry, 0, kind);
  put<std::uint16_t>(entry, 2, 0x101);
  put<std::uint32_t>(entry, 4, 64);
  put<std::uint64_t>(entry, 8, payload);
  put<std::uint16_t>(entry, 24, 0);
  put<std::uint16_t>(entry, 26, kind == 1 ? isa_major : 1);
  put<std::uint32_t>(entry, 28, arch);
  put<std::uint64_t>(entry, 40, flags);
  return entry + std::string(payload, 'x');
}

std::string fatbinary(const std::vector<std::string>& entries) {
  std::string body;
  for (const auto& entry : entries) {
    body += entry;
  }
  std::string header(16, '\0');
  put<std::uint32_t>(header, 0, 0xBA55ED50U);
  put<std::uint16_t>(header, 4, 1);
  put<std::uint16_t>(header, 6, 16);
  put<std::uint64_t>(header, 8, body.size());
  return header + body;
}

std::string elf_with_section(const std::string& content, const std::string& section_name = ".nv_fatbin",
                             std::optional<std::uint64_t> claimed_size = std::nullopt) {
  return cudadiag::testing::synthetic_object_with_section(section_name, content, claimed_size);
}

cudadiag::Expected<cudadiag::elf::GpuCodeList> parse(const std::string& file) {
  return parse_gpu_code(std::as_bytes(std::span(file.data(), file.size())));
}

} // namespace

TEST_CASE("gpu code: nvcc's fatbinaries list exactly the gencode targets they were built with") {
  const std::filesystem::path fixtures = CUDADIAG_GPU_CODE_FIXTURES;
  if (!std::filesystem::exists(fixtures / "mixed.so")) {
    CUDADIAG_SKIP("no " << (fixtures / "mixed.so").string()
                        << ": nvcc was not found when this tree was configured");
    return;
  }
  // -gencode sm_80, sm_90a, compute_90, sm_100f, sm_121 (from compute_120), compute_120a.
  const auto mixed = read_gpu_code((fixtures / "mixed.so").string());
  REQUIRE(mixed.has_value());
  CHECK_FALSE(mixed->problem.has_value());
  CHECK(names(mixed->codes) ==
        std::vector<std::string>{"sm_80", "sm_90a", "sm_100f", "sm_121", "compute_90", "compute_120a"});
  CHECK(mixed->entries >= 6);
  for (const auto& code : mixed->codes) {
    CHECK(code.ptx_isa == (code.kind == GpuCodeKind::ptx ? 90 : 0)); // CUDA 13.0's nvcc writes PTX ISA 9.0
  }
  CHECK(names(mixed->for_gpu(8, 0)) == std::vector<std::string>{"sm_80"});
  CHECK(names(mixed->for_gpu(8, 6)) == std::vector<std::string>{"sm_80"});
  CHECK(names(mixed->for_gpu(9, 0)) == std::vector<std::string>{"sm_90a", "compute_90"});
  CHECK(names(mixed->for_gpu(10, 3)) == std::vector<std::string>{"sm_100f", "compute_90"});
  CHECK(names(mixed->for_gpu(12, 0)) == std::vector<std::string>{"compute_90", "compute_120a"});
  CHECK(names(mixed->for_gpu(12, 1)) == std::vector<std::string>{"sm_121", "compute_90"});
  CHECK(names(mixed->for_gpu(7, 5)).empty());

  const auto sm80 = read_gpu_code((fixtures / "sm80.so").string());
  REQUIRE(sm80.has_value());
  CHECK(names(sm80->codes) == std::vector<std::string>{"sm_80"});
  CHECK(sm80->for_gpu(9, 0).empty());
}

TEST_CASE("gpu code: which GPUs each kind of code runs on") {
  const GpuCode sass{GpuCodeKind::sass, 80, 0, 0};
  CHECK(sass.runs_on(8, 0));
  CHECK(sass.runs_on(8, 9));
  CHECK_FALSE(sass.runs_on(9, 0)); // SASS never crosses a major
  CHECK_FALSE(sass.runs_on(7, 5));
  const GpuCode arch_specific{GpuCodeKind::sass, 90, 'a', 0};
  CHECK(arch_specific.runs_on(9, 0));
  CHECK_FALSE(arch_specific.runs_on(9, 1));
  const GpuCode family{GpuCodeKind::sass, 100, 'f', 0};
  CHECK(family.runs_on(10, 3));
  CHECK_FALSE(family.runs_on(12, 0));
  const GpuCode ptx{GpuCodeKind::ptx, 90, 0, 90};
  CHECK(ptx.runs_on(12, 1)); // the driver compiles PTX for any newer GPU
  CHECK_FALSE(ptx.runs_on(8, 9));
  const GpuCode ptx_family{GpuCodeKind::ptx, 100, 'f', 90};
  CHECK(ptx_family.runs_on(10, 3));
  CHECK_FALSE(ptx_family.runs_on(12, 0));
  CHECK(GpuCode{GpuCodeKind::ptx, 120, 'a', 90}.name() == "compute_120a");
}

TEST_CASE("gpu code: fatbinaries back to back, with padding between them and entries of every kind") {
  const auto first = fatbinary({fatbin_entry(2, 75, 0x11, 24), fatbin_entry(2, 90, 0x100011, 8)});
  const auto second = fatbinary({fatbin_entry(1, 120, 0x8011, 16, 8), fatbin_entry(1, 120, 0x8011, 16, 9),
                                 fatbin_entry(0x40, 90, 0, 8), fatbin_entry(2, 75, 0x11, 8)});
  const auto file = elf_with_section(first + std::string(8, '\0') + second);
  const auto list = parse(file);
  REQUIRE(list.has_value());
  CHECK_FALSE(list->problem.has_value());
  CHECK(list->fatbinaries == 2);
  CHECK(list->entries == 5); // the kind-0x40 entry is neither SASS nor PTX
  CHECK(names(list->codes) == std::vector<std::string>{"sm_75", "sm_90a", "compute_120"});
  CHECK(list->codes.back().ptx_isa == 90); // the newest of ISA 8.0 and 9.0
}

TEST_CASE("gpu code: libraries without GPU code, and files that are not libraries") {
  const auto plain = parse(elf_with_section("text", ".text"));
  REQUIRE(plain.has_value());
  CHECK(plain->codes.empty());
  CHECK(plain->fatbinaries == 0);
  CHECK_FALSE(parse(std::string("not an elf file")).has_value());
  CHECK_FALSE(parse(std::string()).has_value());
  cudadiag::testing::TempTree tree;
  CHECK(read_gpu_code(tree.path("missing.so")).error().message.starts_with("cannot open"));
  tree.mkdir("dir.so");
  CHECK(read_gpu_code(tree.path("dir.so")).error().message == "not a regular file");
}

TEST_CASE("gpu code: hostile sections end with what was read and say why") {
  const auto good = fatbinary({fatbin_entry(2, 80, 0x11, 16)});
  SUBCASE("the section claims more bytes than the file has") {
    CHECK_FALSE(parse(elf_with_section(good, ".nv_fatbin", std::uint64_t{1} << 40U)).has_value());
  }
  SUBCASE("a fatbinary claims more bytes than its section") {
    auto broken = fatbinary({fatbin_entry(2, 90, 0x11, 16)});
    put<std::uint64_t>(broken, 8, std::uint64_t{1} << 62U);
    const auto list = parse(elf_with_section(good + broken));
    REQUIRE(list.has_value());
    CHECK(names(list->codes) == std::vector<std::string>{"sm_80"});
    REQUIRE(list->problem.has_value());
    CHECK(list->problem->starts_with("truncated fatbinary"));
  }
  SUBCASE("an entry's sizes overflow") {
    auto broken = fatbinary({fatbin_entry(2, 90, 0x11, 16)});
    put<std::uint64_t>(broken, 16 + 8, ~std::uint64_t{0});
    const auto list = parse(elf_with_section(good + broken));
    REQUIRE(list.has_value());
    REQUIRE(list->problem.has_value());
    CHECK(list->problem->starts_with("malformed fatbinary entry"));
    CHECK(names(list->codes) == std::vector<std::string>{"sm_80"});
  }
  SUBCASE("an entry claims a header smaller than its fixed part") {
    auto broken = fatbinary({fatbin_entry(2, 90, 0x11, 16)});
    put<std::uint32_t>(broken, 16 + 4, 0);
    const auto list = parse(elf_with_section(broken));
    REQUIRE(list.has_value());
    CHECK(list->problem.has_value());
    CHECK(list->codes.empty());
  }
  SUBCASE("garbage after the last fatbinary") {
    const auto list = parse(elf_with_section(good + std::string(64 * 1024, 'g')));
    REQUIRE(list.has_value());
    CHECK(names(list->codes) == std::vector<std::string>{"sm_80"});
    REQUIRE(list->problem.has_value());
    CHECK(list->problem->starts_with("no fatbinary at section offset"));
  }
  SUBCASE("architectures out of range are ignored") {
    const auto list =
        parse(elf_with_section(fatbinary({fatbin_entry(2, 0, 0, 8), fatbin_entry(2, 100000, 0, 8)})));
    REQUIRE(list.has_value());
    CHECK(list->codes.empty());
    CHECK_FALSE(list->problem.has_value());
  }
}
