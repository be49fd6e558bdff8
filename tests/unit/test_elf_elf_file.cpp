#include "elf/elf_file.hpp"
#include "skip.hpp"
#include "synthetic_elf.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <sys/stat.h>
#include <vector>

using cudadiag::elf::ElfClass;
using cudadiag::elf::ElfInfo;
using cudadiag::elf::incompatibility_with_host;
using cudadiag::elf::parse_elf_info;
using cudadiag::elf::read_elf_info;
using cudadiag::testing::TempTree;

namespace {

constexpr const char* k_nvrtc = "/usr/local/cuda/lib64/libnvrtc.so.13";
constexpr const char* k_cudart = "/usr/local/cuda/lib64/libcudart.so.13";
constexpr const char* k_cuda_stub = "/usr/local/cuda/lib64/stubs/libcuda.so";
constexpr const char* k_libc = "/lib/x86_64-linux-gnu/libc.so.6";

bool present(const char* path) {
  return ::access(path, R_OK) == 0;
}

// What a crafted image should contain.
struct ImageSpec {
  bool elf64 = true;
  bool little_endian = true;
  std::uint16_t machine = cudadiag::elf::k_machine_x86_64;
  std::uint16_t type = cudadiag::elf::k_type_dyn;
  std::string soname = "libcrafted.so.1";
  std::vector<std::string> needed = {"libc.so.6", "libm.so.6"};
  std::string runpath = "$ORIGIN/../lib";
  bool with_sections = false; // also write .dynstr / .dynamic section headers
};

// A minimal ELF image: header, PT_LOAD (whole file at k_base) and PT_DYNAMIC, the dynamic
// section, the string table last (so truncating the image cuts strings), optional section headers.
struct CraftedElf {
  std::vector<std::byte> bytes;
  std::size_t phoff = 0;
  std::size_t dynamic_offset = 0;
  std::size_t dynamic_size = 0;
  std::size_t strtab_offset = 0;
  std::size_t soname_index = 0; // offset of the SONAME in the string table
  bool elf64 = true;
  bool little_endian = true;

  [[nodiscard]] std::size_t word() const { return elf64 ? 8 : 4; }
  void put(std::size_t at, std::uint64_t value, std::size_t width) {
    for (std::size_t i = 0; i < width; ++i) {
      const std::size_t shift = 8 * (little_endian ? i : width - 1 - i);
      bytes[at + i] = static_cast<std::byte>((value >> shift) & 0xffU);
    }
  }
  // The dynamic entry index whose value to overwrite.
  void set_dynamic_value(std::size_t index, std::uint64_t value) {
    put(dynamic_offset + index * 2 * word() + word(), value, word());
  }
  [[nodiscard]] std::string as_string() const {
    std::string text(bytes.size(), '\0');
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      text[i] = static_cast<char>(bytes[i]);
    }
    return text;
  }
};

constexpr std::uint64_t k_base = 0x400000;

CraftedElf build_elf(const ImageSpec& spec) {
  CraftedElf elf;
  elf.elf64 = spec.elf64;
  elf.little_endian = spec.little_endian;
  const std::size_t word = elf.word();
  const std::size_t ehdr_size = spec.elf64 ? 64 : 52;
  const std::size_t phdr_size = spec.elf64 ? 56 : 32;
  const std::size_t shdr_size = spec.elf64 ? 64 : 40;

  std::string strtab(1, '\0');
  const auto add_string = [&](const std::string& text) {
    const std::size_t at = strtab.size();
    strtab += text;
    strtab.push_back('\0');
    return at;
  };
  std::vector<std::pair<std::uint64_t, std::uint64_t>> dynamic;
  for (const auto& name : spec.needed) {
    dynamic.emplace_back(1, add_string(name)); // DT_NEEDED
  }
  elf.soname_index = add_string(spec.soname);
  dynamic.emplace_back(14, elf.soname_index);         // DT_SONAME
  dynamic.emplace_back(29, add_string(spec.runpath)); // DT_RUNPATH

  elf.phoff = ehdr_size;
  elf.dynamic_offset = elf.phoff + 2 * phdr_size;
  const std::size_t dynamic_count = dynamic.size() + 3; // + DT_STRTAB, DT_STRSZ, DT_NULL
  elf.dynamic_size = dynamic_count * 2 * word;
  const std::size_t shoff = elf.dynamic_offset + elf.dynamic_size;
  const std::size_t shnum = spec.with_sections ? 3 : 0;
  elf.strtab_offset = shoff + shnum * shdr_size;
  dynamic.emplace_back(5, k_base + elf.strtab_offset); // DT_STRTAB
  dynamic.emplace_back(10, strtab.size());             // DT_STRSZ
  dynamic.emplace_back(0, 0);                          // DT_NULL
  const std::size_t total = elf.strtab_offset + strtab.size();
  elf.bytes.assign(total, std::byte{0});

  // Identification and header.
  const std::string ident = "\x7f"
                            "ELF";
  for (std::size_t i = 0; i < ident.size(); ++i) {
    elf.bytes[i] = static_cast<std::byte>(ident[i]);
  }
  elf.bytes[4] = std::byte{static_cast<unsigned char>(spec.elf64 ? 2 : 1)};
  elf.bytes[5] = std::byte{static_cast<unsigned char>(spec.little_endian ? 1 : 2)};
  elf.bytes[6] = std::byte{1};
  elf.put(16, spec.type, 2);
  elf.put(18, spec.machine, 2);
  elf.put(20, 1, 4);
  const std::size_t phoff_at = spec.elf64 ? 32 : 28;
  const std::size_t entsize_at = spec.elf64 ? 54 : 42;
  elf.put(phoff_at, elf.phoff, word);
  elf.put(phoff_at + word, spec.with_sections ? shoff : 0, word); // e_shoff
  elf.put(entsize_at - 2, ehdr_size, 2);
  elf.put(entsize_at, phdr_size, 2);
  elf.put(entsize_at + 2, 2, 2);
  elf.put(entsize_at + 4, shdr_size, 2);
  elf.put(entsize_at + 6, shnum, 2);

  // Program headers: PT_LOAD then PT_DYNAMIC.
  const auto put_phdr = [&](std::size_t index, std::uint32_t type, std::uint64_t offset, std::uint64_t size) {
    const std::size_t at = elf.phoff + index * phdr_size;
    elf.put(at, type, 4);
    if (spec.elf64) {
      elf.put(at + 8, offset, 8);
      elf.put(at + 16, k_base + offset, 8);
      elf.put(at + 32, size, 8);
      elf.put(at + 40, size, 8);
    } else {
      elf.put(at + 4, offset, 4);
      elf.put(at + 8, k_base + offset, 4);
      elf.put(at + 16, size, 4);
      elf.put(at + 20, size, 4);
    }
  };
  put_phdr(0, 1, 0, total);
  put_phdr(1, 2, elf.dynamic_offset, elf.dynamic_size);

  for (std::size_t i = 0; i < dynamic.size(); ++i) {
    elf.put(elf.dynamic_offset + i * 2 * word, dynamic[i].first, word);
    elf.put(elf.dynamic_offset + i * 2 * word + word, dynamic[i].second, word);
  }

  if (spec.with_sections) {
    const auto put_shdr = [&](std::size_t index, std::uint32_t type, std::uint64_t offset, std::uint64_t size,
                              std::uint32_t link) {
      const std::size_t at = shoff + index * shdr_size;
      elf.put(at + 4, type, 4);
      elf.put(at + (spec.elf64 ? 24 : 16), offset, word);
      elf.put(at + (spec.elf64 ? 32 : 20), size, word);
      elf.put(at + (spec.elf64 ? 40 : 24), link, 4);
    };
    put_shdr(1, 3, elf.strtab_offset, strtab.size(), 0);     // .dynstr
    put_shdr(2, 6, elf.dynamic_offset, elf.dynamic_size, 1); // .dynamic
  }

  for (std::size_t i = 0; i < strtab.size(); ++i) {
    elf.bytes[elf.strtab_offset + i] = static_cast<std::byte>(strtab[i]);
  }
  return elf;
}

std::string error_of(const cudadiag::Expected<ElfInfo>& result) {
  return result ? std::string("(no error)") : result.error().message;
}

std::string head_of_file(const char* path, std::size_t length) {
  std::ifstream in(path, std::ios::binary);
  std::string content(length, '\0');
  in.read(content.data(), static_cast<std::streamsize>(length));
  content.resize(static_cast<std::size_t>(in.gcount()));
  return content;
}

} // namespace

TEST_CASE("elf: real CUDA libraries") {
  if (!present(k_nvrtc)) {
    CUDADIAG_SKIP(k_nvrtc << " not present");
  }
  const auto nvrtc = read_elf_info(k_nvrtc);
  REQUIRE_MESSAGE(nvrtc.has_value(), error_of(nvrtc));
  CHECK(nvrtc->soname == std::optional<std::string>("libnvrtc.so.13"));
  CHECK(nvrtc->elf_class == ElfClass::elf64);
  CHECK(nvrtc->class_name() == "ELF64");
  CHECK(nvrtc->machine_name() == "x86_64");
  CHECK(nvrtc->type == cudadiag::elf::k_type_dyn);
  CHECK(nvrtc->has_dynamic_section);
  CHECK_FALSE(nvrtc->needed.empty());
  CHECK_FALSE(incompatibility_with_host(*nvrtc).has_value());

  if (present(k_cudart)) {
    const auto cudart = read_elf_info(k_cudart);
    REQUIRE_MESSAGE(cudart.has_value(), error_of(cudart));
    CHECK(cudart->soname == std::optional<std::string>("libcudart.so.13"));
  }
}

TEST_CASE("elf: the toolkit's stub libcuda") {
  if (!present(k_cuda_stub)) {
    CUDADIAG_SKIP(k_cuda_stub << " not present");
  }
  const auto stub = read_elf_info(k_cuda_stub);
  REQUIRE_MESSAGE(stub.has_value(), error_of(stub));
  CHECK(stub->soname == std::optional<std::string>("libcuda.so.1"));
}

TEST_CASE("elf: system libc") {
  if (!present(k_libc)) {
    CUDADIAG_SKIP(k_libc << " not present");
  }
  const auto libc = read_elf_info(k_libc);
  REQUIRE_MESSAGE(libc.has_value(), error_of(libc));
  CHECK(libc->soname == std::optional<std::string>("libc.so.6"));
  CHECK(libc->machine == cudadiag::elf::k_machine_x86_64);
  CHECK_FALSE(incompatibility_with_host(*libc).has_value());
}

TEST_CASE("elf: host description") {
#if defined(__x86_64__)
  CHECK(cudadiag::elf::host_machine() == cudadiag::elf::k_machine_x86_64);
#elif defined(__aarch64__)
  CHECK(cudadiag::elf::host_machine() == cudadiag::elf::k_machine_aarch64);
#endif
  CHECK(cudadiag::elf::host_class() == (sizeof(void*) == 8 ? ElfClass::elf64 : ElfClass::elf32));
}

TEST_CASE("elf: crafted images parse in every class and byte order") {
  SUBCASE("ELF64 little-endian for this machine") {
    ImageSpec spec;
    spec.machine = cudadiag::elf::host_machine();
    const auto elf = build_elf(spec);
    const auto info = parse_elf_info(elf.bytes);
    REQUIRE_MESSAGE(info.has_value(), error_of(info));
    CHECK(info->soname == std::optional<std::string>("libcrafted.so.1"));
    CHECK(info->needed == std::vector<std::string>{"libc.so.6", "libm.so.6"});
    CHECK(info->runpath == std::optional<std::string>("$ORIGIN/../lib"));
    CHECK_FALSE(info->rpath.has_value());
    CHECK_FALSE(incompatibility_with_host(*info).has_value());
  }
  SUBCASE("ELF32 i386 is 32-bit") {
    ImageSpec spec;
    spec.elf64 = false;
    spec.machine = cudadiag::elf::k_machine_386;
    TempTree tree;
    const auto path = tree.write("lib32.so", build_elf(spec).as_string());
    const auto info = read_elf_info(path);
    REQUIRE_MESSAGE(info.has_value(), error_of(info));
    CHECK(info->elf_class == ElfClass::elf32);
    CHECK(info->class_name() == "ELF32");
    CHECK(info->machine_name() == "i386");
    CHECK(info->soname == std::optional<std::string>("libcrafted.so.1"));
    const auto why = incompatibility_with_host(*info);
    REQUIRE(why.has_value());
    CHECK(why->find("32-bit") != std::string::npos);
  }
  SUBCASE("ELF64 aarch64 is another machine") {
    ImageSpec spec;
    spec.machine = cudadiag::elf::k_machine_aarch64;
    TempTree tree;
    const auto info = read_elf_info(tree.write("libarm.so", build_elf(spec).as_string()));
    REQUIRE_MESSAGE(info.has_value(), error_of(info));
    CHECK(info->machine_name() == "aarch64");
#if defined(__x86_64__)
    const auto why = incompatibility_with_host(*info);
    REQUIRE(why.has_value());
    CHECK(*why == "built for aarch64, this machine is x86_64");
#endif
  }
  SUBCASE("big-endian ELF64 is byte-swapped") {
    ImageSpec spec;
    spec.little_endian = false;
    spec.machine = cudadiag::elf::k_machine_ppc64;
    const auto info = parse_elf_info(build_elf(spec).bytes);
    REQUIRE_MESSAGE(info.has_value(), error_of(info));
    CHECK_FALSE(info->little_endian);
    CHECK(info->machine_name() == "ppc64");
    CHECK(info->soname == std::optional<std::string>("libcrafted.so.1"));
    CHECK(info->needed.size() == 2);
    const auto why = incompatibility_with_host(*info);
    REQUIRE(why.has_value());
    CHECK(why->find("big-endian") != std::string::npos);
  }
  SUBCASE("big-endian ELF32") {
    ImageSpec spec;
    spec.elf64 = false;
    spec.little_endian = false;
    spec.machine = cudadiag::elf::k_machine_ppc;
    const auto info = parse_elf_info(build_elf(spec).bytes);
    REQUIRE_MESSAGE(info.has_value(), error_of(info));
    CHECK(info->soname == std::optional<std::string>("libcrafted.so.1"));
  }
  SUBCASE("ET_EXEC is not a shared object") {
    ImageSpec spec;
    spec.machine = cudadiag::elf::host_machine();
    spec.type = cudadiag::elf::k_type_exec;
    const auto info = parse_elf_info(build_elf(spec).bytes);
    REQUIRE_MESSAGE(info.has_value(), error_of(info));
    CHECK(incompatibility_with_host(*info) == std::optional<std::string>("not a shared object (ET_EXEC)"));
  }
}

TEST_CASE("elf: machine names") {
  ElfInfo info;
  info.machine = cudadiag::elf::k_machine_ppc64;
  CHECK(info.machine_name() == "ppc64le");
  info.machine = cudadiag::elf::k_machine_arm;
  CHECK(info.machine_name() == "arm");
  info.machine = cudadiag::elf::k_machine_riscv;
  CHECK(info.machine_name() == "riscv");
  info.machine = 9999;
  CHECK(info.machine_name() == "machine 9999");
}

TEST_CASE("elf: section headers are the fallback") {
  ImageSpec spec;
  spec.with_sections = true;
  auto elf = build_elf(spec);
  SUBCASE("no program headers") {
    elf.put(spec.elf64 ? 56 : 44, 0, 2); // e_phnum = 0
  }
  SUBCASE("program headers past the end of the file") {
    elf.put(32, 0x7fffffffffffULL, 8); // e_phoff
  }
  SUBCASE("DT_STRTAB not in any PT_LOAD") {
    elf.set_dynamic_value(spec.needed.size() + 2, 0xdead0000); // DT_STRTAB
  }
  const auto info = parse_elf_info(elf.bytes);
  REQUIRE_MESSAGE(info.has_value(), error_of(info));
  CHECK(info->soname == std::optional<std::string>("libcrafted.so.1"));
  CHECK(info->needed.size() == 2);
}

TEST_CASE("elf: hostile and broken files are errors, not crashes") {
  TempTree tree;
  SUBCASE("missing") {
    CHECK(error_of(read_elf_info(tree.path("absent.so"))) == "cannot open: No such file or directory");
  }
  SUBCASE("empty") {
    CHECK(error_of(read_elf_info(tree.write("empty.so", ""))) == "empty file");
  }
  SUBCASE("three bytes") {
    CHECK(error_of(read_elf_info(tree.write("three.so", "abc"))) == "not an ELF file (bad magic)");
    CHECK(error_of(read_elf_info(tree.write("three-elf.so", "\x7f"
                                                            "EL"))) == "truncated ELF header");
  }
  SUBCASE("text") {
    CHECK(error_of(read_elf_info(tree.write("text.so", "not an elf\n"))) == "not an ELF file (bad magic)");
  }
  SUBCASE("valid magic, truncated header") {
    CHECK(error_of(read_elf_info(tree.write("short.so", std::string("\x7f"
                                                                    "ELF\x02\x01\x01",
                                                                    7) +
                                                            "0123456789"))) == "truncated ELF header");
  }
  SUBCASE("unknown class and encoding") {
    CHECK(error_of(read_elf_info(tree.write("class.so", std::string("\x7f"
                                                                    "ELF\x07\x01",
                                                                    6) +
                                                            std::string(60, '\0')))) ==
          "unsupported ELF class 7");
    CHECK(error_of(read_elf_info(tree.write("data.so", std::string("\x7f"
                                                                   "ELF\x02\x09",
                                                                   6) +
                                                           std::string(60, '\0')))) ==
          "unsupported ELF data encoding 9");
  }
  SUBCASE("directory") {
    CHECK(error_of(read_elf_info(tree.mkdir("dir.so"))) == "not a regular file");
  }
  SUBCASE("fifo") {
    const auto path = tree.path("fifo.so");
    REQUIRE(::mkfifo(path.c_str(), 0644) == 0);
    CHECK(error_of(read_elf_info(path)) == "not a regular file");
  }
  SUBCASE("symlink loop") {
    tree.symlink("a.so", "b.so");
    tree.symlink("b.so", "a.so");
    const auto message = error_of(read_elf_info(tree.path("a.so")));
    CHECK(message.rfind("cannot open: ", 0) == 0);
  }
  SUBCASE("unreadable file") {
    // Tests may run as root, where mode 000 still reads: only require a sane answer.
    ImageSpec spec;
    const auto path = tree.write("locked.so", build_elf(spec).as_string(), 0000);
    const auto info = read_elf_info(path);
    CHECK((info.has_value() || error_of(info).rfind("cannot open: ", 0) == 0));
  }
}

TEST_CASE("elf: corrupt headers and dynamic sections") {
  ImageSpec spec;
  auto elf = build_elf(spec);
  SUBCASE("program header count and offset garbage") {
    elf.put(56, 0xfff0, 2);            // e_phnum
    elf.put(32, 0x123456789abcULL, 8); // e_phoff
    CHECK(error_of(parse_elf_info(elf.bytes)) == "truncated program headers");
  }
  SUBCASE("program header entry size garbage") {
    elf.put(54, 7, 2);
    CHECK(error_of(parse_elf_info(elf.bytes)) == "unexpected program header entry size 7 (expected 56)");
  }
  SUBCASE("PN_XNUM without section 0") {
    elf.put(56, 0xffff, 2);
    CHECK_FALSE(parse_elf_info(elf.bytes).has_value());
  }
  SUBCASE("dynamic section beyond EOF") {
    elf.put(elf.phoff + 56 + 8, elf.bytes.size() + 4096, 8); // PT_DYNAMIC p_offset
    CHECK(error_of(parse_elf_info(elf.bytes)) == "dynamic section outside the file");
  }
  SUBCASE("dynamic section size runs past EOF") {
    elf.put(elf.phoff + 56 + 32, 0xffffffffffffffffULL, 8); // PT_DYNAMIC p_filesz
    CHECK(error_of(parse_elf_info(elf.bytes)) == "dynamic section outside the file");
  }
  SUBCASE("string table offset out of range") {
    elf.set_dynamic_value(spec.needed.size(), 100000); // DT_SONAME
    const auto message = error_of(parse_elf_info(elf.bytes));
    CHECK(message.rfind("DT_SONAME string offset 100000 out of range", 0) == 0);
  }
  SUBCASE("string table size larger than the file") {
    elf.set_dynamic_value(spec.needed.size() + 3, 0xffffffffffffULL); // DT_STRSZ
    elf.set_dynamic_value(spec.needed.size(), 0xffffffffffULL);       // DT_SONAME
    CHECK(error_of(parse_elf_info(elf.bytes)) == "DT_SONAME string lies outside the file");
  }
  SUBCASE("SONAME without NUL before EOF") {
    elf.bytes.resize(elf.strtab_offset + elf.soname_index + 5); // cuts "libcrafted.so.1"
    CHECK(error_of(parse_elf_info(elf.bytes)) == "DT_SONAME string is not NUL-terminated");
  }
  SUBCASE("string longer than the limit") {
    spec.soname = std::string(5000, 'x');
    CHECK(error_of(parse_elf_info(build_elf(spec).bytes)) == "DT_SONAME string is longer than 4096 bytes");
  }
  SUBCASE("no DT_STRTAB") {
    elf.put(elf.dynamic_offset + (spec.needed.size() + 2) * 16, 0x7000, 8); // DT_STRTAB -> unknown tag
    CHECK(error_of(parse_elf_info(elf.bytes)) == "dynamic section has no DT_STRTAB");
  }
  SUBCASE("DT_STRTAB outside every segment, no sections") {
    elf.set_dynamic_value(spec.needed.size() + 2, 0x10);
    CHECK(error_of(parse_elf_info(elf.bytes)) == "DT_STRTAB address 0x10 is not in any loadable segment");
  }
  SUBCASE("no PT_DYNAMIC and no sections: a static object") {
    elf.put(elf.phoff + 56, 4, 4); // PT_DYNAMIC -> PT_NOTE
    const auto info = parse_elf_info(elf.bytes);
    REQUIRE(info.has_value());
    CHECK_FALSE(info->has_dynamic_section);
    CHECK_FALSE(info->soname.has_value());
  }
}

TEST_CASE("elf: truncated copies of a real library") {
  if (!present(k_nvrtc)) {
    CUDADIAG_SKIP(k_nvrtc << " not present");
  }
  TempTree tree;
  CHECK(error_of(read_elf_info(tree.write("head100.so", head_of_file(k_nvrtc, 100)))) ==
        "truncated program headers");
  CHECK(error_of(read_elf_info(tree.write("head10000.so", head_of_file(k_nvrtc, 10000)))) ==
        "dynamic section outside the file");
}

TEST_CASE("elf: what dlopen does with a truncated copy of a real library (glibc 2.36, measured)") {
  if (!present(k_nvrtc)) {
    CUDADIAG_SKIP(k_nvrtc << " not present");
  }
  TempTree tree;
  // Shorter than an ELF header: "file too short", an empty file included.
  for (const std::size_t size : {std::size_t{0}, std::size_t{10}, std::size_t{63}}) {
    const auto cut = cudadiag::elf::truncated_load(
        tree.write("short" + std::to_string(size) + ".so", head_of_file(k_nvrtc, size)));
    REQUIRE(cut.has_value());
    CHECK(cut->reason == "file too short");
    CHECK_FALSE(cut->crashes);
  }
  // The program headers past the end: "cannot read file data".
  for (const std::size_t size : {std::size_t{64}, std::size_t{500}}) {
    const auto cut = cudadiag::elf::truncated_load(
        tree.write("phdr" + std::to_string(size) + ".so", head_of_file(k_nvrtc, size)));
    REQUIRE(cut.has_value());
    CHECK(cut->reason == "cannot read file data");
    CHECK_FALSE(cut->crashes);
  }
  // The segments past the end (head -c 100000): dlopen dies with SIGBUS.
  for (const std::size_t size : {std::size_t{1000}, std::size_t{100000}}) {
    const auto cut = cudadiag::elf::truncated_load(
        tree.write("seg" + std::to_string(size) + ".so", head_of_file(k_nvrtc, size)));
    REQUIRE(cut.has_value());
    CHECK(cut->crashes);
    CHECK(cut->reason.rfind("crashes (SIGBUS)", 0) == 0);
  }
  CHECK_FALSE(cudadiag::elf::truncated_load(k_nvrtc).has_value());
  // Not ELF: glibc reads an ELF header's 64 bytes first ("file too short" below that), then the
  // magic ("invalid ELF header"); measured with ctypes.CDLL on 63- and 64-byte text files.
  const auto text = cudadiag::elf::truncated_load(tree.write("text.so", std::string(200, 'x')));
  REQUIRE(text.has_value());
  CHECK_FALSE(text->crashes);
  CHECK(text->reason == "invalid ELF header");
  const auto header_long = cudadiag::elf::truncated_load(tree.write("text64.so", std::string(64, 'x')));
  REQUIRE(header_long.has_value());
  CHECK(header_long->reason == "invalid ELF header");
  const auto short_text = cudadiag::elf::truncated_load(tree.write("text63.so", std::string(63, 'x')));
  REQUIRE(short_text.has_value());
  CHECK(short_text->reason == "file too short");
}

TEST_CASE("elf: a PT_LOAD segment that reaches past the last page of the file crashes the load") {
  TempTree tree;
  auto bytes = cudadiag::testing::synthetic_shared_object({.soname = "libshort.so.1"});
  CHECK_FALSE(cudadiag::elf::truncated_load(tree.write("whole.so", bytes)).has_value());
  // The first program header is the PT_LOAD covering the file: claim two pages more.
  const std::size_t filesz_at = 64 + 32;
  std::uint64_t filesz = 0;
  for (std::size_t i = 0; i < 8; ++i) {
    filesz |= static_cast<std::uint64_t>(static_cast<unsigned char>(bytes[filesz_at + i])) << (8U * i);
  }
  REQUIRE(filesz == bytes.size());
  filesz += 2 * 4096;
  for (std::size_t i = 0; i < 8; ++i) {
    bytes[filesz_at + i] = static_cast<char>((filesz >> (8U * i)) & 0xffU);
  }
  const auto cut = cudadiag::elf::truncated_load(tree.write("claims.so", bytes));
  REQUIRE(cut.has_value());
  CHECK(cut->crashes);
}

TEST_CASE("elf: random mutations never crash") {
  std::mt19937 random(20240601U);
  for (const bool elf64 : {true, false}) {
    for (const bool with_sections : {false, true}) {
      ImageSpec spec;
      spec.elf64 = elf64;
      spec.with_sections = with_sections;
      const auto original = build_elf(spec).bytes;
      for (int round = 0; round < 300; ++round) {
        auto bytes = original;
        const int flips = 1 + static_cast<int>(random() % 8U);
        for (int i = 0; i < flips; ++i) {
          bytes[random() % bytes.size()] = static_cast<std::byte>(random() & 0xffU);
        }
        if (random() % 4U == 0) {
          bytes.resize(random() % bytes.size());
        }
        const auto info = parse_elf_info(bytes);
        CHECK((info.has_value() || !info.error().message.empty()));
      }
    }
  }
}
