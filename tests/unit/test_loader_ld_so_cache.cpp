#include "loader/ld_so_cache.hpp"
#include "skip.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

using cudadiag::loader::build_ld_so_cache;
using cudadiag::loader::LdCacheEntry;
using cudadiag::loader::LdCacheFormat;
using cudadiag::loader::LdSoCache;
using cudadiag::loader::parse_ld_so_cache;
using cudadiag::loader::read_ld_so_cache;
using cudadiag::testing::TempTree;

namespace {

#if defined(__x86_64__)
constexpr std::int32_t k_host_flags = 0x0303;
constexpr const char* k_ldconfig_abi = "libc6,x86-64";
#elif defined(__aarch64__)
constexpr std::int32_t k_host_flags = 0x0a03;
constexpr const char* k_ldconfig_abi = "libc6,AArch64";
#else
constexpr std::int32_t k_host_flags = 0x0003;
constexpr const char* k_ldconfig_abi = "libc6";
#endif
constexpr std::int32_t k_i386_flags = 0x0003;

std::span<const std::byte> as_bytes(const std::string& text) {
  return std::as_bytes(std::span(text));
}

std::string error_of(const cudadiag::Expected<LdSoCache>& result) {
  return result ? std::string("(no error)") : result.error().message;
}

std::vector<LdCacheEntry> sample_entries() {
  return {
      {"libcuda.so.1", "/usr/lib/i386-linux-gnu/libcuda.so.1", k_i386_flags, 0},
      {"libcuda.so.1", "/usr/lib/x86_64-linux-gnu/libcuda.so.1", k_host_flags, 0},
      {"libcuda.so.1", "/usr/local/cuda/compat/libcuda.so.1", k_host_flags, 0},
      {"libcudart.so.13", "/usr/local/cuda/lib64/libcudart.so.13", k_host_flags, 0},
      {"libz.so.1", "/lib/x86_64-linux-gnu/libz.so.1", k_host_flags, 0},
  };
}

void put32(std::string& bytes, std::size_t at, std::uint32_t value) {
  std::memcpy(bytes.data() + at, &value, 4);
}

void append32(std::string& bytes, std::uint32_t value) {
  bytes.append(4, '\0');
  put32(bytes, bytes.size() - 4, value);
}

// An old-format ("ld.so-1.7.0") cache: header, 12-byte entries, then strings counted from there.
std::string build_old_cache(const std::vector<LdCacheEntry>& entries) {
  std::string strings;
  std::string out("ld.so-1.7.0", 11);
  out.push_back('\0');
  append32(out, static_cast<std::uint32_t>(entries.size()));
  for (const auto& entry : entries) {
    append32(out, static_cast<std::uint32_t>(entry.flags));
    append32(out, static_cast<std::uint32_t>(strings.size()));
    strings.append(entry.soname).push_back('\0');
    append32(out, static_cast<std::uint32_t>(strings.size()));
    strings.append(entry.path).push_back('\0');
  }
  return out + strings;
}

// The (soname, path) pairs `ldconfig -p` prints for this machine's ABI, in its order, or nullopt.
std::optional<std::vector<std::pair<std::string, std::string>>> ldconfig_listing() {
  const char* ldconfig =
      ::access("/sbin/ldconfig", X_OK) == 0 ? "/sbin/ldconfig -p 2>/dev/null" : "ldconfig -p 2>/dev/null";
  struct PipeCloser {
    void operator()(FILE* stream) const { ::pclose(stream); }
  };
  std::unique_ptr<FILE, PipeCloser> pipe(::popen(ldconfig, "r"));
  if (!pipe) {
    return std::nullopt;
  }
  std::string output;
  std::array<char, 4096> buffer{};
  while (const auto got = std::fread(buffer.data(), 1, buffer.size(), pipe.get())) {
    output.append(buffer.data(), got);
  }
  std::vector<std::pair<std::string, std::string>> listing;
  std::size_t start = 0;
  while (start < output.size()) {
    auto end = output.find('\n', start);
    if (end == std::string::npos) {
      end = output.size();
    }
    const std::string line = output.substr(start, end - start);
    start = end + 1;
    // "\tlibfoo.so.1 (libc6,x86-64) => /path" (possibly "(libc6,x86-64, hwcap: ...)")
    const auto open = line.find(" (");
    const auto arrow = line.find(") => ");
    if (line.empty() || line[0] != '\t' || open == std::string::npos || arrow == std::string::npos) {
      continue;
    }
    const std::string abi = line.substr(open + 2, arrow - open - 2);
    const std::string wanted(k_ldconfig_abi);
    if (abi != wanted && abi.rfind(wanted + ",", 0) != 0) {
      continue;
    }
    listing.emplace_back(line.substr(1, open - 1), line.substr(arrow + 5));
  }
  if (listing.empty()) {
    return std::nullopt;
  }
  return listing;
}

} // namespace

TEST_CASE("ld.so.cache: this machine's cache agrees with ldconfig -p") {
  const std::string path(cudadiag::loader::k_default_ld_so_cache_path);
  if (::access(path.c_str(), R_OK) != 0) {
    CUDADIAG_SKIP(path << " not present");
  }
  const auto cache = read_ld_so_cache(path);
  REQUIRE_MESSAGE(cache.has_value(), error_of(cache));
  CHECK_FALSE(cache->entries().empty());
  const auto expected = ldconfig_listing();
  if (!expected) {
    CUDADIAG_SKIP("ldconfig -p is unavailable: the cache is not compared with it");
  }
  std::vector<std::pair<std::string, std::string>> parsed;
  for (const auto& entry : cache->entries()) {
    if (entry.matches_host()) {
      parsed.emplace_back(entry.soname, entry.path);
    }
  }
  CHECK(parsed.size() == expected->size());
  CHECK(parsed == *expected);
  // Whatever glibc would load for libc.so.6 must be one of the listed paths.
  if (const auto* libc = cache->resolve("libc.so.6")) {
    CHECK(libc->matches_host());
    CHECK(libc->path.find("libc.so.6") != std::string::npos);
  }
  // Lookups by name (an index sorted by name) give what a scan of the file's entries gives, in file
  // order, for every name the cache holds.
  for (const auto& named : cache->entries()) {
    std::vector<const cudadiag::loader::LdCacheEntry*> scanned;
    const cudadiag::loader::LdCacheEntry* first_usable = nullptr;
    const cudadiag::loader::LdCacheEntry* first_hwcap = nullptr;
    for (const auto& entry : cache->entries()) {
      if (entry.soname != named.soname) {
        continue;
      }
      scanned.push_back(&entry);
      if (entry.matches_host() && entry.hwcap == 0 && first_usable == nullptr) {
        first_usable = &entry;
      }
      if (entry.matches_host() && entry.hwcap != 0 && first_hwcap == nullptr) {
        first_hwcap = &entry;
      }
    }
    CAPTURE(named.soname);
    CHECK(cache->find_all(named.soname) == scanned);
    CHECK(cache->resolve(named.soname) == (first_usable != nullptr ? first_usable : first_hwcap));
  }
}

TEST_CASE("ld.so.cache: build and parse round-trip") {
  auto entries = sample_entries();
  entries.push_back({"libhw.so.1", "/usr/lib/glibc-hwcaps/x86-64-v3/libhw.so.1", k_host_flags,
                     cudadiag::loader::k_hwcap_extension | 1U});
  const auto image = build_ld_so_cache(entries);
  const auto cache = parse_ld_so_cache(as_bytes(image));
  REQUIRE_MESSAGE(cache.has_value(), error_of(cache));
  CHECK(cache->format() == LdCacheFormat::new_format);
  REQUIRE(cache->entries().size() == entries.size());
  for (std::size_t i = 0; i < entries.size(); ++i) {
    CHECK(cache->entries()[i].soname == entries[i].soname);
    CHECK(cache->entries()[i].path == entries[i].path);
    CHECK(cache->entries()[i].flags == entries[i].flags);
    CHECK(cache->entries()[i].hwcap == entries[i].hwcap);
  }

  TempTree tree;
  const auto from_file = read_ld_so_cache(tree.write("ld.so.cache", image));
  REQUIRE_MESSAGE(from_file.has_value(), error_of(from_file));
  CHECK(from_file->entries().size() == entries.size());

  const auto empty = parse_ld_so_cache(as_bytes(build_ld_so_cache({})));
  REQUIRE(empty.has_value());
  CHECK(empty->entries().empty());
}

TEST_CASE("ld.so.cache: resolve follows glibc's choice") {
  const auto image = build_ld_so_cache(sample_entries());
  const auto cache = parse_ld_so_cache(as_bytes(image));
  REQUIRE(cache.has_value());

  const auto all = cache->find_all("libcuda.so.1");
  REQUIRE(all.size() == 3);
  CHECK(all[0]->path == "/usr/lib/i386-linux-gnu/libcuda.so.1");
  CHECK(cache->find_all("libnothere.so").empty());

#if defined(__x86_64__)
  CHECK_FALSE(all[0]->matches_host()); // the 32-bit entry listed first is skipped
  CHECK(all[0]->arch_label() == "i386");
  CHECK(all[1]->arch_label() == "x86-64");
#endif
  const auto* chosen = cache->resolve("libcuda.so.1");
  REQUIRE(chosen != nullptr);
  CHECK(chosen->path == "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
  CHECK(cache->resolve("libnothere.so") == nullptr);

  SUBCASE("hwcap entries rank after plain ones, and are the fallback") {
    const std::vector<LdCacheEntry> entries{
        {"libhw.so.1", "/usr/lib/glibc-hwcaps/x86-64-v3/libhw.so.1", k_host_flags,
         cudadiag::loader::k_hwcap_extension},
        {"libhw.so.1", "/usr/lib/libhw.so.1", k_host_flags, 0},
        {"libonly.so.1", "/usr/lib/glibc-hwcaps/x86-64-v2/libonly.so.1", k_host_flags,
         cudadiag::loader::k_hwcap_extension | 1U},
    };
    const auto hw = parse_ld_so_cache(as_bytes(build_ld_so_cache(entries)));
    REQUIRE(hw.has_value());
    REQUIRE(hw->resolve("libhw.so.1") != nullptr);
    CHECK(hw->resolve("libhw.so.1")->path == "/usr/lib/libhw.so.1");
    REQUIRE(hw->resolve("libonly.so.1") != nullptr);
    CHECK(hw->resolve("libonly.so.1")->path == "/usr/lib/glibc-hwcaps/x86-64-v2/libonly.so.1");
  }
}

TEST_CASE("ld.so.cache: arch labels") {
  CHECK(LdCacheEntry{"a", "b", 0x0a03, 0}.arch_label() == "aarch64");
  CHECK(LdCacheEntry{"a", "b", 0x0803, 0}.arch_label() == "x32");
  CHECK(LdCacheEntry{"a", "b", 0x0001, 0}.arch_label() == "ELF");
  CHECK(LdCacheEntry{"a", "b", 0x7703, 0}.arch_label() == "flags 0x7703");
}

TEST_CASE("ld.so.cache: old and compat layouts") {
  const auto entries = sample_entries();
  SUBCASE("old format alone is parsed") {
    const auto cache = parse_ld_so_cache(as_bytes(build_old_cache(entries)));
    REQUIRE_MESSAGE(cache.has_value(), error_of(cache));
    CHECK(cache->format() == LdCacheFormat::old_format);
    REQUIRE(cache->entries().size() == entries.size());
    CHECK(cache->entries()[1].path == entries[1].path);
    CHECK(cache->entries()[1].hwcap == 0);
    REQUIRE(cache->resolve("libcuda.so.1") != nullptr);
    CHECK(cache->resolve("libcuda.so.1")->path == "/usr/lib/x86_64-linux-gnu/libcuda.so.1");
  }
  SUBCASE("new table after the old one wins") {
    const std::vector<LdCacheEntry> old_entries{{"libold.so.1", "/old/libold.so.1", k_host_flags, 0}};
    std::string image = build_old_cache(old_entries);
    // The new table starts at the aligned end of the old entries; old strings live inside it,
    // as in ldconfig's compat layout, so write the new table there and the old strings after it.
    const std::size_t old_end = 16 + 12;
    const std::size_t new_at = (old_end + 7) & ~std::size_t{7};
    const std::string new_table = build_ld_so_cache(entries);
    std::string compat = image.substr(0, old_end) + std::string(new_at - old_end, '\0') + new_table;
    const auto strings_at = static_cast<std::uint32_t>(compat.size() - old_end);
    compat += "libold.so.1";
    compat.push_back('\0');
    compat += "/old/libold.so.1";
    compat.push_back('\0');
    put32(compat, 16 + 4, strings_at);
    put32(compat, 16 + 8, strings_at + 12);
    const auto cache = parse_ld_so_cache(as_bytes(compat));
    REQUIRE_MESSAGE(cache.has_value(), error_of(cache));
    CHECK(cache->format() == LdCacheFormat::compat);
    REQUIRE(cache->entries().size() == entries.size());
    CHECK(cache->entries()[2].path == entries[2].path);
  }
  SUBCASE("old format with too many entries") {
    std::string image = build_old_cache(entries);
    put32(image, 12, 1000);
    CHECK(error_of(parse_ld_so_cache(as_bytes(image))) ==
          "truncated: header says 1000 entries but file holds " + std::to_string((image.size() - 16) / 12));
  }
}

TEST_CASE("ld.so.cache: corrupt caches are errors") {
  const std::string valid = build_ld_so_cache(sample_entries());
  SUBCASE("empty") {
    CHECK(error_of(parse_ld_so_cache({})) == "empty file");
  }
  SUBCASE("bad magic") {
    CHECK(error_of(parse_ld_so_cache(as_bytes(std::string("hello, world, this is not a cache")))) ==
          "not an ld.so.cache (bad magic)");
  }
  SUBCASE("truncated header") {
    CHECK(error_of(parse_ld_so_cache(as_bytes(valid.substr(0, 30)))) == "truncated header");
    CHECK(error_of(parse_ld_so_cache(as_bytes(valid.substr(0, 10)))) == "truncated header");
    CHECK(error_of(parse_ld_so_cache(as_bytes(std::string("ld.so-1.7")))) == "truncated header");
  }
  SUBCASE("unsupported version") {
    std::string image = valid;
    image[19] = '9';
    CHECK(error_of(parse_ld_so_cache(as_bytes(image))) == "unsupported ld.so.cache version \"1.9\"");
  }
  SUBCASE("nlibs larger than the file") {
    std::string image = valid;
    put32(image, 20, 0x10000000);
    const auto message = error_of(parse_ld_so_cache(as_bytes(image)));
    CHECK(message.rfind("truncated: header says 268435456 entries but file holds ", 0) == 0);
  }
  SUBCASE("string offset past the end") {
    std::string image = valid;
    put32(image, 48 + 8, static_cast<std::uint32_t>(image.size() + 100)); // entry 0 value
    CHECK(error_of(parse_ld_so_cache(as_bytes(image))) ==
          "entry 0: string offset " + std::to_string(image.size() + 100) + " out of range (file holds " +
              std::to_string(image.size()) + " bytes)");
  }
  SUBCASE("string without NUL") {
    const std::string image = valid.substr(0, valid.size() - 1); // last path loses its terminator
    CHECK(error_of(parse_ld_so_cache(as_bytes(image))) == "entry 4: string is not NUL-terminated");
  }
  SUBCASE("other endianness") {
    std::string image = valid;
    image[28] = static_cast<char>(image[28] == 2 ? 3 : 2);
    CHECK(error_of(parse_ld_so_cache(as_bytes(image))).find("-endian machine") != std::string::npos);
    image[28] = 1;
    CHECK(error_of(parse_ld_so_cache(as_bytes(image))) == "ld.so.cache endianness flag is invalid");
    image[28] = 0; // unknown endianness is accepted, as glibc does
    CHECK(parse_ld_so_cache(as_bytes(image)).has_value());
  }
}

TEST_CASE("ld.so.cache: files that cannot be read") {
  TempTree tree;
  CHECK(error_of(read_ld_so_cache(tree.path("ld.so.cache"))) ==
        "cannot open " + tree.path("ld.so.cache") + ": No such file or directory");
  CHECK(error_of(read_ld_so_cache(tree.mkdir("dir"))) == tree.path("dir") + " is not a regular file");
  CHECK(error_of(read_ld_so_cache(tree.write("empty", ""))) == "empty file");
}

TEST_CASE("ld.so.cache: random mutations never crash") {
  std::mt19937 random(1234567U);
  const std::string valid = build_ld_so_cache(sample_entries());
  const std::string old_format = build_old_cache(sample_entries());
  int parsed = 0;
  for (int round = 0; round < 400; ++round) {
    std::string image = (round % 2 == 0) ? valid : old_format;
    const int flips = 1 + static_cast<int>(random() % 6U);
    for (int i = 0; i < flips; ++i) {
      image[random() % image.size()] = static_cast<char>(random() & 0xffU);
    }
    if (random() % 5U == 0) {
      image.resize(random() % image.size());
    }
    const auto cache = parse_ld_so_cache(as_bytes(image));
    if (cache) {
      ++parsed;
      for (const auto& entry : cache->entries()) {
        (void)entry.arch_label();
      }
      (void)cache->resolve("libcuda.so.1");
    } else {
      CHECK_FALSE(cache.error().message.empty());
    }
  }
  MESSAGE(parsed << " of 400 mutated caches still parsed");
}
