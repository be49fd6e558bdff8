#include "inspect/access_denial.hpp"

#include "core/filesystem.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <string_view>
#include <sys/stat.h>

namespace cudadiag::inspect {

namespace {

constexpr unsigned k_cap_sys_ptrace = 19; // linux/capability.h

// Bit CAP_SYS_PTRACE of the "CapEff:" line of /proc/self/status (hexadecimal).
std::optional<bool> effective_cap_sys_ptrace() {
  const auto status = fs::read_file_prefix("/proc/self/status", 64U << 10U);
  if (!status) {
    return std::nullopt;
  }
  constexpr std::string_view k_key = "\nCapEff:";
  const auto at = status->find(k_key);
  if (at == std::string::npos) {
    return std::nullopt;
  }
  std::string_view rest(*status);
  rest.remove_prefix(at + k_key.size());
  rest.remove_prefix(std::min(rest.find_first_not_of(" \t"), rest.size()));
  unsigned long long mask = 0;
  const auto [end, error] = std::from_chars(rest.data(), rest.data() + rest.size(), mask, 16);
  if (error != std::errc() || end == rest.data()) {
    return std::nullopt;
  }
  return ((mask >> k_cap_sys_ptrace) & 1U) != 0;
}

std::optional<std::string> link_target(const std::string& path) {
  std::array<char, 256> buffer{};
  const auto got = ::readlink(path.c_str(), buffer.data(), buffer.size() - 1);
  if (got <= 0) {
    return std::nullopt;
  }
  return std::string(buffer.data(), static_cast<std::size_t>(got));
}

} // namespace

AccessFacts access_facts(int pid) {
  AccessFacts facts;
  facts.our_euid = ::geteuid();
  const auto proc_dir = "/proc/" + std::to_string(pid);
  struct stat st {};
  if (::stat(proc_dir.c_str(), &st) == 0) {
    facts.target_uid = st.st_uid;
  }
  facts.have_cap_sys_ptrace = effective_cap_sys_ptrace();
  const auto ours = link_target("/proc/self/ns/user");
  const auto theirs = link_target(proc_dir + "/ns/user");
  if (ours && theirs) {
    facts.same_user_namespace = *ours == *theirs;
  }
  return facts;
}

std::string access_denial_reason(int pid, const AccessFacts& facts) {
  const auto id = std::to_string(pid);
  const bool other_user = facts.target_uid && *facts.target_uid != facts.our_euid;
  if (facts.our_euid != 0) {
    if (facts.target_uid && !other_user) {
      return "(process " + id +
             " is this user's but not dumpable: a setuid/setgid program, or one that called "
             "prctl(PR_SET_DUMPABLE, 0); run as root)";
    }
    return "(the process belongs to another user; run as that user or root)";
  }
  // Root, and still refused.
  if (facts.have_cap_sys_ptrace && !*facts.have_cap_sys_ptrace) {
    return "(running as root but without CAP_SYS_PTRACE, which reading another user's process needs; "
           "containers drop it by default: add it (e.g. --cap-add SYS_PTRACE) or run on the host)";
  }
  if (facts.same_user_namespace && !*facts.same_user_namespace) {
    return "(process " + id +
           " is in another user namespace, where this root has no rights; run cudadiag in "
           "the namespace that owns it, e.g. on the host)";
  }
  return "(running as root" + std::string(facts.have_cap_sys_ptrace ? " with CAP_SYS_PTRACE" : "") +
         ", yet the kernel refused: process " + id +
         " is likely in an outer user namespace or a security "
         "module (AppArmor, SELinux) denies ptrace reads; run cudadiag where that process was started, e.g. "
         "on "
         "the host)";
}

} // namespace cudadiag::inspect
