// Why /proc/PID/maps could not be read: the cause named from facts about this process and the
// target, and, as root, a real refusal after CAP_SYS_PTRACE is dropped.

#include "checks.hpp"
#include "inspect/access_denial.hpp"
#include "inspect/process_maps.hpp"

#include "skip.hpp"

#include <doctest/doctest.h>

#include <grp.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <csignal>
#include <string>

using cudadiag::inspect::access_denial_reason;
using cudadiag::inspect::AccessFacts;
using cudadiag::testing::contains;

TEST_CASE("inspect: a refusal is explained by the cause the facts support") {
  SUBCASE("another user's process, not root") {
    const AccessFacts facts{.our_euid = 1000, .target_uid = 0, .have_cap_sys_ptrace = false, .same_user_namespace = {}};
    CHECK(access_denial_reason(1, facts) == "(the process belongs to another user; run as that user or root)");
  }
  SUBCASE("this user's process that is not dumpable") {
    const AccessFacts facts{.our_euid = 1000, .target_uid = 1000, .have_cap_sys_ptrace = false, .same_user_namespace = {}};
    CHECK(contains(access_denial_reason(7, facts), "process 7 is this user's but not dumpable"));
  }
  SUBCASE("root without CAP_SYS_PTRACE (a container) is not told to become root") {
    const AccessFacts facts{.our_euid = 0, .target_uid = 65534, .have_cap_sys_ptrace = false, .same_user_namespace = {}};
    const auto reason = access_denial_reason(1, facts);
    CHECK(contains(reason, "running as root but without CAP_SYS_PTRACE"));
    CHECK(!contains(reason, "another user; run as that user or root"));
  }
  SUBCASE("root with CAP_SYS_PTRACE in another user namespace") {
    const AccessFacts facts{.our_euid = 0, .target_uid = 0, .have_cap_sys_ptrace = true, .same_user_namespace = false};
    CHECK(contains(access_denial_reason(1, facts), "process 1 is in another user namespace"));
  }
  SUBCASE("root with CAP_SYS_PTRACE, namespace unknown: an outer namespace or a security module") {
    const AccessFacts facts{.our_euid = 0, .target_uid = 0, .have_cap_sys_ptrace = true, .same_user_namespace = {}};
    const auto reason = access_denial_reason(1, facts);
    CHECK(contains(reason, "with CAP_SYS_PTRACE"));
    CHECK(contains(reason, "security module"));
  }
}

TEST_CASE("inspect: this process's own facts are read from /proc") {
  const auto facts = cudadiag::inspect::access_facts(::getpid());
  CHECK(facts.our_euid == ::geteuid());
  REQUIRE(facts.target_uid.has_value());
  CHECK(*facts.target_uid == ::getuid());
  CHECK(facts.have_cap_sys_ptrace.has_value());
  CHECK(facts.same_user_namespace == std::optional<bool>(true));
}

TEST_CASE("inspect: root without CAP_SYS_PTRACE reading another user's process is told so") {
  if (::geteuid() != 0) {
    CUDADIAG_SKIP("needs root: the check drops CAP_SYS_PTRACE from a root process");
  }
  // The target: a child that becomes nobody and waits.
  const pid_t target = ::fork();
  REQUIRE(target >= 0);
  if (target == 0) {
    constexpr uid_t k_nobody = 65534;
    if (::setgroups(0, nullptr) != 0 || ::setgid(k_nobody) != 0 || ::setuid(k_nobody) != 0) {
      ::_exit(77);
    }
    ::pause();
    ::_exit(0);
  }
  std::array<int, 2> pipe_fds{};
  REQUIRE(::pipe(pipe_fds.data()) == 0);
  const pid_t reader = ::fork();
  REQUIRE(reader >= 0);
  if (reader == 0) {
    ::close(pipe_fds[0]);
    ::usleep(100000); // the target has switched users by then
    __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
    std::array<__user_cap_data_struct, 2> data{};
    if (::syscall(SYS_capget, &header, data.data()) != 0) {
      ::_exit(78);
    }
    data[0].effective &= ~(1U << CAP_SYS_PTRACE);
    if (::syscall(SYS_capset, &header, data.data()) != 0) {
      ::_exit(78);
    }
    const auto result = cudadiag::inspect::read_process_maps(target);
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
  REQUIRE(::waitpid(reader, &status, 0) == reader);
  ::kill(target, SIGKILL);
  int target_status = 0;
  REQUIRE(::waitpid(target, &target_status, 0) == target);
  REQUIRE(WIFEXITED(status));
  if (WEXITSTATUS(status) == 78) {
    CUDADIAG_SKIP("capset is not permitted here");
  }
  if (WIFEXITED(target_status) && WEXITSTATUS(target_status) == 77) {
    CUDADIAG_SKIP("cannot switch to user nobody here");
  }
  CHECK(WEXITSTATUS(status) == 0);
  CHECK(contains(message, "permission denied reading /proc/" + std::to_string(target) + "/maps"));
  CHECK(contains(message, "running as root but without CAP_SYS_PTRACE"));
}
