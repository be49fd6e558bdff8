#include "core/filesystem.hpp"
#include "core/system_root.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace fs = cudadiag::fs;

TEST_CASE("filesystem: path helpers") {
  CHECK(fs::join("/a/", "/b") == "/a/b");
  CHECK(fs::join("", "b") == "b");
  CHECK(fs::parent("/a/b/c") == "/a/b");
  CHECK(fs::parent("/a") == "/");
  CHECK(fs::parent("c") == ".");
  CHECK(fs::basename("/a/b/") == "b");
  CHECK(fs::lexically_normal("/a/./b//../c/") == "/a/c");
  CHECK(fs::lexically_normal("/../x") == "/x");
  CHECK(fs::lexically_normal("a/../..") == "..");
}

TEST_CASE("filesystem: queries survive loops, broken links and unreadable files") {
  cudadiag::testing::TempTree tree;
  tree.symlink("loop-a", "loop-b");
  tree.symlink("loop-b", "loop-a");
  tree.symlink("broken", "nowhere");
  const auto file = tree.write("file", "0123456789");
  CHECK_FALSE(fs::exists(tree.path("loop-a")));
  CHECK(fs::is_symlink(tree.path("loop-a")));
  CHECK_FALSE(fs::real_path(tree.path("loop-a")).has_value());
  CHECK_FALSE(fs::real_path(tree.path("broken")).has_value());
  CHECK(fs::read_file_prefix(file, 4).value() == "0123");
  CHECK_FALSE(fs::read_file_prefix(tree.path("broken"), 4).has_value());
  CHECK_FALSE(fs::read_file_prefix(tree.root(), 4).has_value()); // a directory
  CHECK(fs::list_directory(tree.root()).value().size() == 4);
  CHECK_FALSE(fs::list_directory(file).has_value());
  CHECK(fs::file_size(file) == std::optional<std::uint64_t>(10));
  CHECK(fs::file_id(file) == fs::file_id(tree.path("file")));
}

TEST_CASE(
    "filesystem: read_at reads what lies at an offset, fewer bytes only at the end, and names a failure") {
  cudadiag::testing::TempTree tree;
  const auto file = tree.write("file", "0123456789");
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  REQUIRE(fd >= 0);
  std::string out(4, '\0');
  CHECK(fs::read_at(fd, 3, out.data(), out.size()).value() == 4);
  CHECK(out == "3456");
  CHECK(fs::read_at(fd, 8, out.data(), out.size()).value() == 2); // the end of the file
  CHECK(out.substr(0, 2) == "89");
  CHECK(fs::read_at(fd, 10, out.data(), out.size()).value() == 0);
  CHECK(fs::read_at(fd, 0, out.data(), 0).value() == 0);
  ::close(fd);
  const auto closed = fs::read_at(fd, 0, out.data(), out.size());
  REQUIRE_FALSE(closed.has_value());
  CHECK(closed.error().message == "Bad file descriptor");
  const int directory = ::open(tree.root().c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(directory >= 0);
  CHECK(fs::read_at(directory, 0, out.data(), out.size()).error().message == "Is a directory");
  ::close(directory);
}

TEST_CASE("filesystem: directory names are in byte order whatever their length and shared prefixes") {
  // Sorted by their first eight bytes, then the rest: names shorter than, equal to and longer than
  // eight bytes, prefixes of each other, high bytes, against a plain sort of the same names.
  cudadiag::testing::TempTree tree;
  std::vector<std::string> names = {"l",
                                    "li",
                                    "lib",
                                    "libcuda",
                                    "libcudar",
                                    "libcudart",
                                    "libcudart.so",
                                    "libcudart.so.12",
                                    "libcudart.so.13",
                                    "libcudart_static.a",
                                    "libcudar0",
                                    "libcudaZ",
                                    "libcud",
                                    "LIBCUDART",
                                    "libc\xc3\xa9",
                                    "libc\xff",
                                    "~",
                                    "0",
                                    "00000000",
                                    "000000000",
                                    "0000000",
                                    "zzzzzzzzzzzz",
                                    "zzzzzzzz",
                                    "zzzzzzz"};
  std::mt19937 random(7);
  for (int i = 0; i < 300; ++i) {
    std::string name = "lib";
    const auto length = random() % 14;
    for (std::size_t j = 0; j < length; ++j) {
      name += "abc._0123"[random() % 9];
    }
    names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  for (const auto& name : names) {
    tree.write("dir/" + name, "x");
  }
  const auto listed = fs::list_directory_names(tree.path("dir"));
  REQUIRE(listed);
  REQUIRE(listed->names.size() == names.size());
  for (std::size_t i = 0; i < names.size(); ++i) {
    CAPTURE(i);
    CHECK(listed->names[i] == names[i]);
  }
  // Lookups through the prefixes answer as a binary search of the names: every name, every proper
  // prefix of one (the stems "similar names" start with), and each with a byte changed or added.
  std::vector<std::string> probes = {"", "l", "li", "lia", "libz", "m", "\xff", "lib\xff", "libzzzzzzzzzzzz"};
  for (const auto& name : names) {
    for (std::size_t length = 0; length <= name.size(); ++length) {
      probes.push_back(name.substr(0, length));
    }
    probes.push_back(name + ".");
    probes.push_back(name + "\x01");
    auto changed = name;
    changed.back() = static_cast<char>(changed.back() + 1);
    probes.push_back(changed);
  }
  for (const auto& probe : probes) {
    CAPTURE(probe);
    const auto expected =
        std::lower_bound(listed->names.begin(), listed->names.end(), std::string_view(probe));
    CHECK(listed->lower_bound(probe) == static_cast<std::size_t>(expected - listed->names.begin()));
    CHECK(listed->contains(probe) == std::binary_search(names.begin(), names.end(), probe));
  }
}

TEST_CASE("filesystem: a directory larger than one getdents64 buffer is listed whole") {
  // 2,500 names of 40+ bytes: some 150 KB of records, several reads of the 32 KiB buffer.
  cudadiag::testing::TempTree tree;
  std::vector<std::string> names;
  for (int i = 0; i < 2500; ++i) {
    names.push_back("libsomething_rather_long_" + std::to_string(i) + ".so.13.0.88");
    tree.write("big/" + names.back(), "");
  }
  std::sort(names.begin(), names.end());
  const auto listed = fs::list_directory_names(tree.path("big"));
  REQUIRE(listed);
  CHECK(listed->complete);
  CHECK(std::equal(listed->names.begin(), listed->names.end(), names.begin(), names.end()));
  CHECK(fs::list_directory_names(tree.write("file", "x")).error().message == "Not a directory");
}

TEST_CASE(
    "filesystem: directory names are sorted views that survive a move, and a limit marks them incomplete") {
  cudadiag::testing::TempTree tree;
  for (const auto* name : {"libz.so.1", "a", "libcudart.so.13", "libcudart.so.12", "b"}) {
    tree.write(std::string("dir/") + name, "x");
  }
  auto listed = fs::list_directory_names(tree.path("dir"));
  REQUIRE(listed);
  const std::vector<std::string_view> expected = {"a", "b", "libcudart.so.12", "libcudart.so.13",
                                                  "libz.so.1"};
  fs::DirectoryNames moved = std::move(*listed); // short names included: no small-string buffer
  CHECK(moved.complete);
  CHECK(moved.names == expected);
  const auto strings = fs::list_directory(tree.path("dir"));
  REQUIRE(strings);
  CHECK(std::equal(moved.names.begin(), moved.names.end(), strings->begin(), strings->end()));
  CHECK_FALSE(fs::list_directory_names(tree.path("missing")));
  CHECK(fs::list_directory_names(tree.mkdir("empty"))->names.empty());

  const int handle = ::open(tree.path("dir").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  REQUIRE(handle >= 0);
  const auto limited = fs::read_directory_names(handle, 4);
  ::close(handle);
  CHECK_FALSE(limited.complete);
  CHECK(limited.names.empty());
}

TEST_CASE("filesystem: under a root, links and dot-dot resolve inside it and nothing outside is read") {
  cudadiag::testing::TempTree tree;
  const auto root = fs::real_path(tree.path("root")).value_or(tree.path("root"));
  tree.write("root/usr/local/cuda-12.8/lib64/libcudart.so.12", "inside");
  tree.write("outside/usr/local/cuda-12.8/lib64/libcudart.so.12", "outside");
  tree.symlink("root/usr/local/cuda", "/usr/local/cuda-12.8");       // absolute: the root's
  tree.symlink("root/opt/up", "../../../../../../usr/local/cuda");   // climbs past the root
  tree.symlink("root/etc/alternatives", "/etc/alternatives");        // a link to itself: a loop
  tree.symlink("root/usr/lib/host", tree.path("outside/usr/local")); // a host path, taken as the root's
  using fs::FollowLast;
  CHECK(fs::resolve_in_root(root, "/usr/local/cuda/lib64/libcudart.so.12", FollowLast::yes) ==
        root + "/usr/local/cuda-12.8/lib64/libcudart.so.12");
  CHECK(fs::resolve_in_root(root, "/opt/up/lib64", FollowLast::yes) == root + "/usr/local/cuda-12.8/lib64");
  CHECK(fs::resolve_in_root(root, "/../../..", FollowLast::yes) == root);
  CHECK(fs::resolve_in_root(root, "/usr/local/cuda", FollowLast::no) == root + "/usr/local/cuda");
  CHECK(fs::resolve_in_root(root, "/etc/alternatives/x", FollowLast::yes).empty());
  CHECK(fs::resolve_in_root(root, "/usr/lib/host/cuda-12.8", FollowLast::yes).rfind(root + "/", 0) == 0);

  {
    const fs::RootScope scope(root);
    CHECK(fs::under_root());
    CHECK(fs::read_file_prefix("/opt/up/lib64/libcudart.so.12", 64).value() == "inside");
    CHECK(fs::real_path("/usr/local/cuda/lib64/libcudart.so.12").value() ==
          "/usr/local/cuda-12.8/lib64/libcudart.so.12");
    CHECK(fs::is_symlink("/usr/local/cuda"));
    CHECK(fs::is_directory("/usr/local/cuda"));
    CHECK_FALSE(fs::exists("/usr/lib/host/cuda-12.8/lib64/libcudart.so.12")); // not the outside tree's
    CHECK_FALSE(fs::exists(tree.path("outside/usr/local/cuda-12.8/lib64/libcudart.so.12")));
    CHECK(fs::system_path(root + "/usr/lib") == "/usr/lib");
  }
  CHECK_FALSE(fs::under_root());
  CHECK(fs::exists(tree.path("outside/usr/local/cuda-12.8/lib64/libcudart.so.12")));
}
