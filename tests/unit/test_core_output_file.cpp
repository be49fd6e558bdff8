// Output files (core/output_file.hpp): regular files replaced atomically with their mode kept,
// links followed and kept, devices and FIFOs written through and never replaced, block devices,
// sockets, directories and link loops refused with nothing written or left behind.
#include "core/filesystem.hpp"
#include "core/output_file.hpp"
#include "skip.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <future>
#include <string>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>

using cudadiag::output::OutputFileOptions;
using cudadiag::output::write_output_file;
using namespace std::chrono_literals;
namespace fs = cudadiag::fs;

namespace {

struct stat lstat_of(const std::string& path) {
  struct stat info {};
  REQUIRE(::lstat(path.c_str(), &info) == 0);
  return info;
}

unsigned mode_of(const std::string& path) {
  return lstat_of(path).st_mode & 07777U;
}

// A device node in the test's own directory (CAP_MKNOD: root); false where it may not be made.
bool make_node(const std::string& path, mode_t type, unsigned major_number, unsigned minor_number) {
  return ::mknod(path.c_str(), type | 0666, makedev(major_number, minor_number)) == 0 &&
         ::chmod(path.c_str(), 0666) == 0; // past the umask
}

OutputFileOptions with_mode(unsigned mode, bool private_content = false) {
  OutputFileOptions options;
  options.mode = mode;
  options.private_content = private_content;
  return options;
}

OutputFileOptions with_fifo_wait(std::chrono::milliseconds wait) {
  OutputFileOptions options;
  options.fifo_reader_wait = wait;
  return options;
}

} // namespace

TEST_CASE("output file: a new file is written with the requested mode, a replaced one keeps its own") {
  cudadiag::testing::TempTree tree;
  const auto path = tree.path("out.xml");
  REQUIRE(write_output_file(path, "first", with_mode(0600)));
  CHECK(fs::read_file_prefix(path, 100).value() == "first");
  CHECK(mode_of(path) == 0600U);
  const auto first_inode = lstat_of(path).st_ino;
  REQUIRE(write_output_file(path, "second")); // default 0644 asked: the file's 0600 is kept
  CHECK(fs::read_file_prefix(path, 100).value() == "second");
  CHECK(mode_of(path) == 0600U);
  CHECK(lstat_of(path).st_ino != first_inode); // replaced, not rewritten in place
  REQUIRE(::chmod(path.c_str(), 0664) == 0);
  REQUIRE(write_output_file(path, "third"));
  CHECK(mode_of(path) == 0664U);
  CHECK(fs::list_directory(tree.root()).value() == std::vector<std::string>{"out.xml"});
}

TEST_CASE("output file: private content narrows a replaced file's mode and never widens it") {
  cudadiag::testing::TempTree tree;
  const auto path = tree.write("bundle.tar.gz", "old", 0644);
  REQUIRE(write_output_file(path, "new", with_mode(0600, true)));
  CHECK(mode_of(path) == 0600U);
  REQUIRE(::chmod(path.c_str(), 0400) == 0);
  REQUIRE(write_output_file(path, "newer", with_mode(0600, true)));
  CHECK(mode_of(path) == 0400U);
  CHECK(fs::read_file_prefix(path, 100).value() == "newer");
}

TEST_CASE("output file: an unwritable target is an error naming it, and nothing is left behind") {
  cudadiag::testing::TempTree tree;
  const auto missing_dir = tree.path("no/such/dir/out.tar.gz");
  const auto error = write_output_file(missing_dir, "data");
  REQUIRE_FALSE(error);
  CHECK(error.error().message == "cannot write " + missing_dir + ": No such file or directory");

  const auto dir = tree.mkdir("a-directory");
  const auto on_dir = write_output_file(dir, "data");
  REQUIRE_FALSE(on_dir);
  CHECK(on_dir.error().message.find("Is a directory") != std::string::npos);
  CHECK(fs::list_directory(tree.root()).value() == std::vector<std::string>{"a-directory"});
  CHECK(fs::list_directory(dir).value().empty());
  CHECK_FALSE(write_output_file("", "data"));
}

TEST_CASE("output file: links are followed and stay links, the file is written where they lead") {
  cudadiag::testing::TempTree tree;
  const auto real = tree.write("real/out.html", "old", 0640);
  const auto link = tree.symlink("artifacts/out.html", "../real/out.html");
  const auto chain = tree.symlink("chain.html", link);
  REQUIRE(write_output_file(chain, "new"));
  CHECK(S_ISLNK(lstat_of(link).st_mode));
  CHECK(S_ISLNK(lstat_of(chain).st_mode));
  CHECK(fs::read_file_prefix(real, 100).value() == "new");
  CHECK(mode_of(real) == 0640U);
  CHECK(fs::list_directory(tree.path("real")).value() == std::vector<std::string>{"out.html"});

  // A dangling link: the file is created where it points, and the link still points there.
  const auto dangling = tree.symlink("dangling.md", "real/report.md");
  REQUIRE(write_output_file(dangling, "made"));
  CHECK(S_ISLNK(lstat_of(dangling).st_mode));
  CHECK(fs::read_file_prefix(tree.path("real/report.md"), 100).value() == "made");
}

TEST_CASE("output file: a link loop is refused and nothing is created") {
  cudadiag::testing::TempTree tree;
  const auto a = tree.symlink("a", "b");
  tree.symlink("b", "a");
  const auto written = write_output_file(a, "data");
  REQUIRE_FALSE(written);
  CHECK(written.error().message == "cannot write " + a + ": Too many levels of symbolic links");
  CHECK(fs::list_directory(tree.root()).value() == std::vector<std::string>{"a", "b"});
}

TEST_CASE("output file: a FIFO is written through to its reader and stays a FIFO") {
  cudadiag::testing::TempTree tree;
  const auto fifo = tree.path("pipe");
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  auto reader = std::async(std::launch::async, [&fifo] {
    const int fd = ::open(fifo.c_str(), O_RDONLY | O_CLOEXEC);
    std::string got;
    char buffer[256];
    ssize_t count = 0;
    while (fd >= 0 && (count = ::read(fd, buffer, sizeof buffer)) > 0) {
      got.append(buffer, static_cast<std::size_t>(count));
    }
    ::close(fd);
    return got;
  });
  REQUIRE(write_output_file(tree.symlink("link-to-pipe", fifo), "through the pipe"));
  CHECK(reader.get() == "through the pipe");
  CHECK(S_ISFIFO(lstat_of(fifo).st_mode));

  // No reader: an error after the wait, the FIFO untouched.
  const auto lonely = write_output_file(fifo, "nobody listens", with_fifo_wait(100ms));
  REQUIRE_FALSE(lonely);
  CHECK(lonely.error().message.find("no process opened it for reading within 100 ms") != std::string::npos);
  CHECK(S_ISFIFO(lstat_of(fifo).st_mode));
  CHECK(fs::list_directory(tree.root()).value() == std::vector<std::string>{"link-to-pipe", "pipe"});
}

TEST_CASE("output file: a socket is refused, and stays a socket") {
  cudadiag::testing::TempTree tree;
  const auto path = tree.path("sock");
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  REQUIRE(fd >= 0);
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  REQUIRE(path.size() < sizeof(address.sun_path));
  path.copy(address.sun_path, path.size());
  REQUIRE(::bind(fd, reinterpret_cast<const sockaddr*>(&address), sizeof address) == 0);
  const auto written = write_output_file(path, "data");
  ::close(fd);
  REQUIRE_FALSE(written);
  CHECK(written.error().message.find("it is a socket") != std::string::npos);
  CHECK(S_ISSOCK(lstat_of(path).st_mode));
}

TEST_CASE("output file: a file reached through a descriptor link is appended to, not replaced") {
  cudadiag::testing::TempTree tree;
  const auto log = tree.write("log.txt", "before\n");
  const int fd = ::open(log.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  REQUIRE(fd >= 0);
  const auto inode = lstat_of(log).st_ino;
  const auto by_descriptor = tree.symlink("mystdout", "/proc/self/fd/" + std::to_string(fd));
  REQUIRE(write_output_file(by_descriptor, "after\n"));
  ::close(fd);
  CHECK(fs::read_file_prefix(log, 100).value() == "before\nafter\n");
  CHECK(lstat_of(log).st_ino == inode);
  CHECK(S_ISLNK(lstat_of(by_descriptor).st_mode));
}

TEST_CASE("output file: device nodes (made in the test's own directory, as root)") {
  cudadiag::testing::TempTree tree;
  const auto null_node = tree.path("null");
  const auto full_node = tree.path("full");
  const auto block_node = tree.path("loop0");
  if (!make_node(null_node, S_IFCHR, 1, 3) || !make_node(full_node, S_IFCHR, 1, 7) ||
      !make_node(block_node, S_IFBLK, 7, 0)) {
    // Without CAP_MKNOD no node can be made here (the CLI tests write into root-made nodes as
    // another user).
    CUDADIAG_SKIP("mknod is not permitted here (" << std::strerror(errno) << ")");
  }
  SUBCASE("a character device is written through and stays one") {
    REQUIRE(write_output_file(null_node, "discarded", with_mode(0600, true)));
    const auto info = lstat_of(null_node);
    CHECK(S_ISCHR(info.st_mode));
    CHECK(major(info.st_rdev) == 1U);
    CHECK((info.st_mode & 0777U) == 0666U);
  }
  SUBCASE("a full device's error is reported, the node untouched") {
    const auto written = write_output_file(full_node, "no room");
    REQUIRE_FALSE(written);
    CHECK(written.error().message == "cannot write " + full_node + ": No space left on device");
    CHECK(S_ISCHR(lstat_of(full_node).st_mode));
  }
  SUBCASE("a block device is refused without being opened") {
    const auto written = write_output_file(block_node, "would destroy a disk");
    REQUIRE_FALSE(written);
    CHECK(written.error().message.find("block device") != std::string::npos);
    CHECK(S_ISBLK(lstat_of(block_node).st_mode));
  }
  CHECK(fs::list_directory(tree.root()).value() == std::vector<std::string>{"full", "loop0", "null"});
}
