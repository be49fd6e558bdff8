// Read-only file mappings (dpkg's status file and package lists): the bytes, the size limit, and
// the files that must not be mapped or waited on.
#include "core/mapped_file.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <string>
#include <sys/stat.h>
#include <utility>

using cudadiag::fs::map_file;
using cudadiag::fs::MappedFile;
using cudadiag::testing::TempTree;

TEST_CASE("mapped file: a file's bytes, up to the limit it is mapped with") {
  const TempTree tree;
  const std::string text = "Package: cuda-nvcc-13-0\nVersion: 13.0.88-1\n";
  const auto path = tree.write("status", text);
  auto mapped = map_file(path, 1024);
  REQUIRE(mapped.has_value());
  CHECK(mapped->text() == text);
  CHECK(mapped->complete());
  CHECK(mapped->file_size() == text.size());

  auto too_large = map_file(path, text.size() - 1);
  REQUIRE(too_large.has_value());
  CHECK_FALSE(too_large->complete());
  CHECK(too_large->text().empty());
  CHECK(too_large->file_size() == text.size());

  MappedFile moved = std::move(*mapped); // the mapping moves with its owner
  CHECK(moved.text() == text);
  CHECK(mapped->text().empty());
}

TEST_CASE("mapped file: an empty file is empty text, and a missing file, a directory or a FIFO is an error") {
  const TempTree tree;
  auto empty = map_file(tree.write("empty", ""), 1024);
  REQUIRE(empty.has_value());
  CHECK(empty->text().empty());
  CHECK(empty->complete());

  CHECK_FALSE(map_file(tree.path("missing"), 1024).has_value());
  const auto directory = map_file(tree.mkdir("dir"), 1024);
  REQUIRE_FALSE(directory.has_value());
  CHECK(directory.error().message == "not a regular file");
  const auto fifo_path = tree.path("fifo");
  REQUIRE(::mkfifo(fifo_path.c_str(), 0644) == 0);
  const auto fifo = map_file(fifo_path, 1024); // opened without blocking, never read
  REQUIRE_FALSE(fifo.has_value());
  CHECK(fifo.error().message == "not a regular file");
}

TEST_CASE("mapped file: small files are read and large ones mapped, with the same bytes either way") {
  const TempTree tree;
  for (const std::size_t size :
       {std::size_t{1}, std::size_t{cudadiag::fs::k_read_max_bytes},
        std::size_t{cudadiag::fs::k_read_max_bytes + 1}, std::size_t{3 * 65536 + 7}}) {
    CAPTURE(size);
    std::string text(size, '\0');
    for (std::size_t i = 0; i < size; ++i) {
      text[i] = static_cast<char>('a' + i % 26);
    }
    auto file = map_file(tree.write("list" + std::to_string(size), text), 1 << 20);
    REQUIRE(file.has_value());
    CHECK(file->complete());
    CHECK(file->file_size() == size);
    CHECK(file->text() == text);
    MappedFile moved;
    moved = std::move(*file); // owned bytes (heap or mapping) move with their owner and are freed once
    CHECK(moved.text() == text);
    CHECK(file->text().empty());
  }
}
