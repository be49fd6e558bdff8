// Reading what a process has mapped: the /proc/PID/maps parser on crafted text, and the reader on
// this process, a missing PID, a process that dies while it is read and one we may not read.
#include "checks.hpp"
#include "inspect/process_maps.hpp"
#include "skip.hpp"

#include <doctest/doctest.h>

#include <grp.h>
#include <unistd.h>

#include <array>
#include <fstream>
#include <string>
#include <sys/wait.h>

using cudadiag::inspect::MappedFile;
using cudadiag::inspect::parse_proc_maps;
using cudadiag::inspect::read_process_maps;
using cudadiag::testing::contains;

namespace {

// A maps line with the kernel's padding before the path.
std::string maps_line(std::string_view range, std::string_view perms, std::string_view device,
                      std::uint64_t inode, std::string_view path) {
  std::string line = std::string(range) + " " + std::string(perms) + " 00000000 " + std::string(device) +
                     " " + std::to_string(inode);
  if (!path.empty()) {
    line.append(line.size() < 73 ? 73 - line.size() : 1, ' ');
    line += path;
  }
  return line + "\n";
}

} // namespace

TEST_CASE("inspect: parse_proc_maps keeps one entry per mapped file, in first-seen order") {
  std::string text;
  text += maps_line("55d0c0a00000-55d0c0a02000", "r--p", "08:01", 1234, "/usr/bin/cat");
  text += maps_line("55d0c0a02000-55d0c0a06000", "r-xp", "08:01", 1234, "/usr/bin/cat");
  text += maps_line("55d0c1a00000-55d0c1a21000", "rw-p", "00:00", 0, "[heap]");
  text += maps_line("7f0000000000-7f0000001000", "r--p", "08:01", 42, "/opt/my libs/libcudart.so.13.0.96");
  text += maps_line("7f0000002000-7f0000003000", "r-xp", "08:01", 43, "/tmp/old/libnvrtc.so.13 (deleted)");
  text += maps_line("7f0000004000-7f0000005000", "rw-p", "00:00", 0, "");
  text += maps_line("7f0000006000-7f0000007000", "r--p", "00:00", 0, "[vvar]");
  text += maps_line("7f0000008000-7f0000009000", "r-xp", "00:00", 0, "[vdso]");
  text += maps_line("7f000000a000-7f000000b000", "rw-p", "00:00", 0, "[anon:glibc malloc]");
  text += maps_line("7fff00000000-7fff00021000", "rw-p", "00:00", 0, "[stack]");
  text += maps_line("7f000000c000-7f000000d000", "r--s", "fd:02", 44, "/tmp/a\\012b/libx.so");
  // The same path again with another inode: the file was replaced and both are mapped.
  text += maps_line("7f000000e000-7f000000f000", "r--p", "08:01", 45, "/opt/my libs/libcudart.so.13.0.96");
  text += maps_line("ffffffffff600000-ffffffffff601000", "--xp", "00:00", 0, "[vsyscall]");

  const auto files = parse_proc_maps(text);
  REQUIRE(files.size() == 5);
  CHECK(files[0].path == "/usr/bin/cat");
  CHECK(files[0].inode == 1234);
  CHECK(files[0].device == "08:01");
  CHECK_FALSE(files[0].deleted);
  CHECK(files[1].path == "/opt/my libs/libcudart.so.13.0.96");
  CHECK(files[2].path == "/tmp/old/libnvrtc.so.13");
  CHECK(files[2].deleted);
  CHECK(files[3].path == "/tmp/a\nb/libx.so");
  CHECK(files[3].device == "fd:02");
  CHECK(files[4].path == "/opt/my libs/libcudart.so.13.0.96");
  CHECK(files[4].inode == 45);
}

TEST_CASE("inspect: parse_proc_maps skips garbage and an unterminated last line") {
  std::string text;
  text += "garbage line\n";
  text += "\n";
  text += "7f00-7f01 rwxz 00000000 08:01 5 /bad/perms.so\n";
  text += "7f00-7f01 r--p 00000000 08:01 5x /bad/inode.so\n";
  text += "7f00-7f01 r--p 0000000g 08:01 5 /bad/offset.so\n";
  text += "7f00 r--p 00000000 08:01 5 /bad/range.so\n";
  text += "7f00-7f01 r--p 00000000 0801 5 /bad/device.so\n";
  text += "7f00-7f01 r--p 00000000 08:01 5 relative/path.so\n";
  text += "7f00-7f01 r--p 00000000 08:01\n";
  text += std::string("\xff\xfe\0 binary\n", 11);
  text += maps_line("7f02-7f03", "r--p", "08:01", 6, "/good/libgood.so");
  text += "7f04-7f05 r--p 00000000 08:01 7                          /cut/libnvrtc.so.13.0.8";
  const auto files = parse_proc_maps(text);
  REQUIRE(files.size() == 1);
  CHECK(files[0].path == "/good/libgood.so");
  CHECK(parse_proc_maps("").empty());
  CHECK(parse_proc_maps("\n\n\n").empty());
}

TEST_CASE("inspect: parse_proc_maps handles 100k lines") {
  std::string text;
  constexpr std::uint64_t k_lines = 100000;
  for (std::uint64_t i = 0; i < k_lines; ++i) {
    // Every file is mapped twice, as the loader maps a library's segments.
    const auto file = i / 2;
    text +=
        maps_line("7f00-7f01", "r--p", "08:01", file + 1, "/lib/many/libfile" + std::to_string(file) + ".so");
  }
  const auto files = parse_proc_maps(text);
  REQUIRE(files.size() == k_lines / 2);
  CHECK(files.front().path == "/lib/many/libfile0.so");
  CHECK(files.back().path == "/lib/many/libfile" + std::to_string(k_lines / 2 - 1) + ".so");
}

TEST_CASE("inspect: read_process_maps of this process lists libc") {
  const auto files = read_process_maps(static_cast<int>(::getpid()));
  REQUIRE(files.has_value());
  bool libc = false;
  for (const auto& file : *files) {
    const auto base = file.path.substr(file.path.rfind('/') + 1);
    libc = libc || base.starts_with("libc.so") || base.starts_with("libc-");
  }
  CHECK(libc);
}

TEST_CASE("inspect: read_process_maps names a missing or invalid PID") {
  int pid_max = 4194304;
  std::ifstream("/proc/sys/kernel/pid_max") >> pid_max;
  const int missing = pid_max + 1; // above pid_max: never a live process
  const auto result = read_process_maps(missing);
  REQUIRE_FALSE(result.has_value());
  CHECK(result.error().message == "no process with PID " + std::to_string(missing));
  for (const int invalid : {0, -1}) {
    const auto bad = read_process_maps(invalid);
    REQUIRE_FALSE(bad.has_value());
    CHECK(contains(bad.error().message, "invalid PID"));
  }
}

TEST_CASE("inspect: read_process_maps of a process that exits while being read never fails hard") {
  for (int round = 0; round < 20; ++round) {
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      ::usleep(static_cast<useconds_t>(round * 100));
      ::_exit(0);
    }
    int reads = 0;
    int status = 0;
    bool reaped = false;
    while (!reaped || reads < 1000) {
      const auto result = read_process_maps(child);
      ++reads;
      if (!result) {
        const auto& message = result.error().message;
        const bool known = contains(message, "exited while being read") ||
                           contains(message, "has exited (a zombie") ||
                           message == "no process with PID " + std::to_string(child);
        CHECK_MESSAGE(known, message);
      }
      if (!reaped && reads >= 200) {
        reaped = ::waitpid(child, &status, 0) == child;
        REQUIRE(reaped);
      }
    }
    const auto after = read_process_maps(child);
    REQUIRE_FALSE(after.has_value());
    CHECK(after.error().message == "no process with PID " + std::to_string(child));
  }
}

TEST_CASE("inspect: read_process_maps says permission denied for another user's process") {
  if (::getuid() != 0) {
    // Without root we cannot become another user; PID 1 then belongs to another user unless we own it.
    const auto result = read_process_maps(1);
    if (result.has_value()) {
      CUDADIAG_SKIP("PID 1 is readable by this user; there is no other user's process to check");
    }
    CHECK(contains(result.error().message, "permission denied"));
    return;
  }
  std::array<int, 2> pipe_fds{};
  REQUIRE(::pipe(pipe_fds.data()) == 0);
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) {
    ::close(pipe_fds[0]);
    constexpr uid_t k_nobody = 65534;
    if (::setgroups(0, nullptr) != 0 || ::setgid(k_nobody) != 0 || ::setuid(k_nobody) != 0) {
      ::_exit(77);
    }
    const auto result = read_process_maps(1);
    const std::string message = result ? std::string("readable") : result.error().message;
    const auto written = ::write(pipe_fds[1], message.data(), message.size());
    ::_exit(written < 0 ? 3 : 0);
  }
  ::close(pipe_fds[1]);
  std::string message;
  std::array<char, 512> buffer{};
  ssize_t got = 0;
  while ((got = ::read(pipe_fds[0], buffer.data(), buffer.size())) > 0) {
    message.append(buffer.data(), static_cast<std::size_t>(got));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);
  REQUIRE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) {
    CUDADIAG_SKIP("cannot switch to user nobody here");
  }
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(message == "permission denied reading /proc/1/maps (the process belongs to another user; run as that "
                   "user or root)");
}
