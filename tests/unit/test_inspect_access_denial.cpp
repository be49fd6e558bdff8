// Why /proc/PID/maps could not be read: the cause named from facts about this process and the
// target. (A real refusal of root without CAP_SYS_PTRACE is not staged here: the CI machine's kernel
// lets such a root read another user's maps, so the case cannot be produced on it.)

#include "checks.hpp"
#include "inspect/access_denial.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <string>

using cudadiag::inspect::access_denial_reason;
using cudadiag::inspect::AccessFacts;
using cudadiag::testing::contains;

TEST_CASE("inspect: a refusal is explained by the cause the facts support") {
  SUBCASE("another user's process, not root") {
    const AccessFacts facts{
        .our_euid = 1000, .target_uid = 0, .have_cap_sys_ptrace = false, .same_user_namespace = {}};
    CHECK(access_denial_reason(1, facts) ==
          "(the process belongs to another user; run as that user or root)");
  }
  SUBCASE("this user's process that is not dumpable") {
    const AccessFacts facts{
        .our_euid = 1000, .target_uid = 1000, .have_cap_sys_ptrace = false, .same_user_namespace = {}};
    CHECK(contains(access_denial_reason(7, facts), "process 7 is this user's but not dumpable"));
  }
  SUBCASE("root without CAP_SYS_PTRACE (a container) is not told to become root") {
    const AccessFacts facts{
        .our_euid = 0, .target_uid = 65534, .have_cap_sys_ptrace = false, .same_user_namespace = {}};
    const auto reason = access_denial_reason(1, facts);
    CHECK(contains(reason, "running as root but without CAP_SYS_PTRACE"));
    CHECK(!contains(reason, "another user; run as that user or root"));
  }
  SUBCASE("root with CAP_SYS_PTRACE in another user namespace") {
    const AccessFacts facts{
        .our_euid = 0, .target_uid = 0, .have_cap_sys_ptrace = true, .same_user_namespace = false};
    CHECK(contains(access_denial_reason(1, facts), "process 1 is in another user namespace"));
  }
  SUBCASE("root with CAP_SYS_PTRACE, namespace unknown: an outer namespace or a security module") {
    const AccessFacts facts{
        .our_euid = 0, .target_uid = 0, .have_cap_sys_ptrace = true, .same_user_namespace = {}};
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
