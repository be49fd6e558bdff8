// Atomic output files: complete or absent, never half-written, no temporary left behind.
#include "bundle/atomic_file.hpp"
#include "core/filesystem.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <sys/stat.h>

using cudadiag::bundle::write_file_atomically;
namespace fs = cudadiag::fs;

TEST_CASE("atomic file: writes, replaces, and sets the requested mode") {
  cudadiag::testing::TempTree tree;
  const auto path = tree.path("out.tar.gz");
  REQUIRE_FALSE(write_file_atomically(path, "first", 0600));
  CHECK(fs::read_file_prefix(path, 100).value() == "first");
  REQUIRE_FALSE(write_file_atomically(path, "second"));
  CHECK(fs::read_file_prefix(path, 100).value() == "second");
  struct stat info {};
  REQUIRE(::stat(path.c_str(), &info) == 0);
  CHECK((info.st_mode & 0777U) == 0644U);
  CHECK(fs::list_directory(tree.root()).value() == std::vector<std::string>{"out.tar.gz"});
}

TEST_CASE("atomic file: an unwritable target is an error naming it, and nothing is left behind") {
  cudadiag::testing::TempTree tree;
  const auto missing_dir = tree.path("no/such/dir/out.tar.gz");
  const auto error = write_file_atomically(missing_dir, "data");
  REQUIRE(error);
  CHECK(error->message.find(missing_dir) != std::string::npos);

  const auto dir = tree.mkdir("a-directory");
  const auto on_dir = write_file_atomically(dir, "data");
  REQUIRE(on_dir);
  CHECK(on_dir->message.find("Is a directory") != std::string::npos);
  CHECK(fs::list_directory(tree.root()).value() == std::vector<std::string>{"a-directory"});
  CHECK(fs::list_directory(dir).value().empty());
}
