// The glibc calls newer than 2.17, each through glibc where it has them and through the fallback
// (forced with k_no_extensions) that older glibcs get.
#include "core/libc_compat.hpp"
#include "skip.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <vector>

namespace libc = cudadiag::libc;

namespace {

// Runs `argv` through posix_spawn with `actions` and returns its exit status (-1: not started or
// not exited normally).
int spawn_and_wait(posix_spawn_file_actions_t* actions, std::vector<std::string> argv) {
  std::vector<char*> pointers;
  for (auto& argument : argv) {
    pointers.push_back(argument.data());
  }
  pointers.push_back(nullptr);
  pid_t pid = -1;
  if (::posix_spawn(&pid, pointers.front(), actions, nullptr, pointers.data(), environ) != 0) {
    return -1;
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Whether a child spawned with add_close_from(lowest) still has descriptor `fd` open.
bool child_has_descriptor(int fd, int lowest, const libc::Extensions& extensions) {
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  REQUIRE(libc::add_close_from(&actions, lowest, extensions) == 0);
  const int status =
      spawn_and_wait(&actions, {"/bin/sh", "-c", "test -e /proc/self/fd/" + std::to_string(fd)});
  ::posix_spawn_file_actions_destroy(&actions);
  REQUIRE(status >= 0);
  return status == 0;
}

std::string file_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Where a child spawned through spawn_in_directory(directory) runs: what its `pwd -P` prints.
std::string child_directory(const std::string& directory, const std::string& out_file,
                            const libc::Extensions& extensions) {
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  auto argv = libc::spawn_in_directory(&actions, directory, {"/bin/sh", "-c", "pwd -P > \"$0\"", out_file},
                                       extensions);
  const int status = spawn_and_wait(&actions, std::move(argv));
  ::posix_spawn_file_actions_destroy(&actions);
  REQUIRE(status == 0);
  return file_text(out_file);
}

} // namespace

TEST_CASE("libc compat: the fallback names every signal as glibc's sigabbrev_np does") {
  CHECK(libc::signal_name(SIGKILL, libc::k_no_extensions) == "SIGKILL");
  CHECK(libc::signal_name(SIGSEGV, libc::k_no_extensions) == "SIGSEGV");
  CHECK(libc::signal_name(SIGIO, libc::k_no_extensions) == "SIGPOLL");
  CHECK(libc::signal_name(0, libc::k_no_extensions) == "signal 0");
  CHECK(libc::signal_name(SIGRTMIN, libc::k_no_extensions) == "signal " + std::to_string(SIGRTMIN));
  CHECK(libc::signal_name(200, libc::k_no_extensions) == "signal 200");
  if (libc::glibc().sigabbrev == nullptr) {
    CUDADIAG_SKIP("this glibc has no sigabbrev_np (older than 2.32) to compare the table with");
  }
  for (int signal = 0; signal <= 70; ++signal) {
    CAPTURE(signal);
    CHECK(libc::signal_name(signal, libc::k_no_extensions) == libc::signal_name(signal));
  }
}

TEST_CASE(
    "libc compat: descriptors from the lowest up are closed in the child, with or without glibc's action") {
  const int fd = ::fcntl(::open("/dev/null", O_RDONLY), F_DUPFD, 40); // inheritable, 40 or above
  REQUIRE(fd >= 40);
  CHECK(child_has_descriptor(fd, fd + 1, libc::k_no_extensions));
  CHECK_FALSE(child_has_descriptor(fd, fd, libc::k_no_extensions));
  CHECK_FALSE(child_has_descriptor(fd, 3, libc::k_no_extensions));
  if (libc::glibc().spawn_addclosefrom != nullptr) {
    CHECK(child_has_descriptor(fd, fd + 1, libc::glibc()));
    CHECK_FALSE(child_has_descriptor(fd, fd, libc::glibc()));
  }
  ::close(fd);
}

TEST_CASE("libc compat: the child starts in the directory, through glibc's action or through the shell") {
  const cudadiag::testing::TempTree tree;
  // A name the shell would split or expand if it were not quoted.
  const auto directory = tree.mkdir("a dir $HOME 'q' \"d\" *");
  char* resolved = ::realpath(directory.c_str(), nullptr);
  REQUIRE(resolved != nullptr);
  const std::string expected = std::string(resolved) + "\n";
  std::free(resolved);
  const auto through_shell =
      libc::spawn_in_directory(nullptr, directory, {"/bin/true"}, libc::k_no_extensions);
  CHECK(through_shell.front() == "/bin/sh");
  CHECK(child_directory(directory, tree.path("fallback.txt"), libc::k_no_extensions) == expected);
  if (libc::glibc().spawn_addchdir != nullptr) {
    CHECK(child_directory(directory, tree.path("glibc.txt"), libc::glibc()) == expected);
  }
}

TEST_CASE("libc compat: without glibc's chdir action, a directory that cannot be entered fails the child") {
  const cudadiag::testing::TempTree tree;
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY,
                                     0); // the shell's complaint
  auto argv = libc::spawn_in_directory(&actions, tree.path("missing"), {"/bin/true"}, libc::k_no_extensions);
  CHECK(spawn_and_wait(&actions, std::move(argv)) == 2);
  ::posix_spawn_file_actions_destroy(&actions);
}
