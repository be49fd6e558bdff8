#include "elf/elf_symbols.hpp"
#include "skip.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

using cudadiag::elf::parse_dynamic_symbols;
using cudadiag::elf::parse_elf_info;
using cudadiag::elf::read_dynamic_symbols;
using cudadiag::elf::read_elf_info;
using cudadiag::elf::SymbolReference;

namespace {

// A 5.5 KB library built with a version script (the elf fuzz target's seed): dep_old@@DEP_1,
// dep_new@@DEP_2, needs needed_elsewhere, weakly needs maybe; SONAME libseed.so.1.
const std::string k_seed = std::string(CUDADIAG_SOURCE_DIR) + "/fuzz/corpus/elf/versioned-symbols";

std::vector<std::byte> bytes_of(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(chars.size());
  std::transform(chars.begin(), chars.end(), out.begin(), [](char c) { return static_cast<std::byte>(c); });
  return out;
}

// References to names that outlive them (string literals).
SymbolReference ref(std::string_view name, std::string_view version = "") {
  return SymbolReference{name, version, "", false};
}

} // namespace

TEST_CASE("dynamic symbols: definitions, references and versions, glibc's matching rules") {
  const auto info = read_elf_info(k_seed);
  REQUIRE(info);
  const auto symbols = read_dynamic_symbols(k_seed, *info);
  REQUIRE(symbols);
  CHECK(symbols->uses_gnu_hash());
  CHECK(symbols->has_version_definitions());
  CHECK(symbols->defines_version("DEP_1"));
  CHECK(symbols->defines_version("DEP_2"));
  CHECK(symbols->defines_version("libseed.so.1")); // the base entry
  CHECK_FALSE(symbols->defines_version("DEP_3"));

  CHECK(symbols->defines(ref("dep_new", "DEP_2")));
  CHECK(symbols->defines(ref("dep_old", "DEP_1")));
  CHECK_FALSE(symbols->defines(ref("dep_new", "DEP_1"))); // another named version: no match
  CHECK(symbols->defines(ref("dep_old")));                // unversioned: the only version is taken
  CHECK(symbols->defines(ref("dep_new")));
  CHECK_FALSE(symbols->defines(ref("needed_elsewhere"))); // undefined here
  CHECK_FALSE(symbols->defines(ref("absent")));

  std::vector<std::string> strong, weak;
  for (const auto& reference : symbols->references()) {
    (reference.weak ? weak : strong).emplace_back(reference.name);
  }
  CHECK(strong == std::vector<std::string>{"needed_elsewhere"});
  CHECK(weak == std::vector<std::string>{"maybe"});
}

TEST_CASE("dynamic symbols: a truncated or corrupted image is an error or a table not used, never a crash") {
  const auto image = bytes_of(k_seed);
  REQUIRE(image.size() > 1000);
  const auto info = parse_elf_info(image);
  REQUIRE(info);
  for (std::size_t keep = 0; keep < image.size(); keep += 97) {
    const std::vector<std::byte> cut(image.begin(), image.begin() + static_cast<std::ptrdiff_t>(keep));
    const auto symbols = parse_dynamic_symbols(cut, *info);
    if (symbols) {
      static_cast<void>(symbols->defines(ref("dep_new", "DEP_2")));
    }
  }
  // Every byte of the tables flipped to 0xff in turn: counts, bucket indexes, chains, version links.
  for (std::size_t at = 0; at < std::min<std::size_t>(image.size(), 2048); ++at) {
    auto bad = image;
    bad[at] = std::byte{0xff};
    const auto symbols = parse_dynamic_symbols(bad, *info);
    if (symbols) {
      static_cast<void>(symbols->defines(ref("dep_new", "DEP_2")));
      static_cast<void>(symbols->defines(ref("dep_old")));
    }
  }
}

TEST_CASE("dynamic symbols: the toolkit's libcusparse needs nvJitLink's versioned entry points") {
  const std::string path = "/usr/local/cuda/lib64/libcusparse.so.12";
  const auto info = read_elf_info(path);
  if (!info) {
    CUDADIAG_SKIP("no toolkit cuSPARSE at " + path);
  }
  const auto symbols = read_dynamic_symbols(path, *info);
  REQUIRE(symbols);
  bool needs_nvjitlink = false;
  for (const auto& reference : symbols->references()) {
    needs_nvjitlink = needs_nvjitlink || (reference.name.rfind("__nvJitLink", 0) == 0 &&
                                          reference.version_file.rfind("libnvJitLink.so.", 0) == 0);
  }
  CHECK(needs_nvjitlink);
}
