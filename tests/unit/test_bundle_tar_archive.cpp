// The ustar writer and reader: round trips, the name-field split, and damaged archives.
#include "bundle/tar_archive.hpp"

#include <doctest/doctest.h>

using cudadiag::bundle::read_tar;
using cudadiag::bundle::TarWriter;

TEST_CASE("tar archive: files and directories round-trip with their names and contents") {
  TarWriter writer(1700000000);
  REQUIRE(writer.add_directory("bundle"));
  REQUIRE(writer.add_file("bundle/report.json", "{\"a\": 1}\n"));
  REQUIRE(writer.add_file("bundle/empty.txt", ""));
  const std::string binary("\0\x01\xff\n", 4);
  REQUIRE(writer.add_file("bundle/evidence/bytes.bin", binary));
  const auto archive = writer.finish();
  CHECK(archive.size() % 512 == 0);

  const auto entries = read_tar(archive);
  REQUIRE(entries);
  REQUIRE(entries->size() == 4);
  CHECK((*entries)[0].name == "bundle/");
  CHECK((*entries)[0].directory);
  CHECK((*entries)[1].name == "bundle/report.json");
  CHECK((*entries)[1].content == "{\"a\": 1}\n");
  CHECK((*entries)[2].content.empty());
  CHECK((*entries)[3].content == binary);
}

TEST_CASE("tar archive: a long name is split into ustar's prefix and name fields") {
  const std::string dir(120, 'd');
  const std::string name = dir + "/" + std::string(90, 'f') + ".txt";
  TarWriter writer(0);
  REQUIRE(writer.add_file(name, "x"));
  const auto entries = read_tar(writer.finish());
  REQUIRE(entries);
  REQUIRE(entries->size() == 1);
  CHECK((*entries)[0].name == name);
}

TEST_CASE("tar archive: unsafe or oversized names are refused and nothing is appended") {
  TarWriter writer(0);
  CHECK_FALSE(writer.add_file("/etc/passwd", "x"));
  CHECK_FALSE(writer.add_file("a/../b", "x"));
  CHECK_FALSE(writer.add_file("", "x"));
  CHECK_FALSE(writer.add_file(std::string(300, 'x'), "x"));
  CHECK(writer.finish() == std::string(1024, '\0'));
}

TEST_CASE("tar archive: damaged archives are errors that say what is wrong") {
  TarWriter writer(0);
  REQUIRE(writer.add_file("report.json", std::string(2000, 'r')));
  const auto archive = writer.finish();

  auto corrupt = archive;
  corrupt[10] = static_cast<char>(corrupt[10] ^ 0x20);
  const auto bad_checksum = read_tar(corrupt);
  REQUIRE_FALSE(bad_checksum);
  CHECK(bad_checksum.error().message.find("checksum") != std::string::npos);

  const auto truncated = read_tar(archive.substr(0, 512 + 1024));
  REQUIRE_FALSE(truncated);
  CHECK(truncated.error().message.find("truncated") != std::string::npos);
  CHECK(truncated.error().message.find("report.json") != std::string::npos);

  CHECK_FALSE(read_tar("short"));
  CHECK_FALSE(read_tar(std::string(512, 'x')));
}

// Found by the tar_gzip fuzz target: a short name has an empty ustar prefix (once a memcpy
// from a null pointer: undefined behaviour, caught by UBSan), and a name with a NUL byte would
// read back as another name, so the writer refuses it.
TEST_CASE("tar archive: short names and names with a NUL byte") {
  TarWriter writer(0);
  REQUIRE(writer.add_file("a", ""));
  CHECK_FALSE(writer.add_file(std::string_view("b\0c", 3), "x"));
  const auto entries = read_tar(writer.finish());
  REQUIRE(entries);
  REQUIRE(entries->size() == 1);
  CHECK((*entries)[0].name == "a");
}
