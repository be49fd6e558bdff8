#pragma once
// Why the kernel refused to let this process read another process's /proc/PID/maps, from facts
// about both (reading the maps needs ptrace read access: the same user and a dumpable target, or
// CAP_SYS_PTRACE in the target's user namespace; Yama's ptrace_scope restricts attaching only, so it
// is never the cause here). The explanation names the cause the facts support and what to do.

#include <optional>
#include <string>
#include <sys/types.h>

namespace cudadiag::inspect {

struct AccessFacts {
  uid_t our_euid = 0;
  std::optional<uid_t> target_uid;         // the owner of /proc/PID; nullopt when it cannot be stat'ed
  std::optional<bool> have_cap_sys_ptrace; // CapEff bit 19 of /proc/self/status; nullopt when unread
  std::optional<bool> same_user_namespace; // /proc/self/ns/user vs /proc/PID/ns/user; nullopt: unknown
};

// The facts for process `pid`, read from /proc.
AccessFacts access_facts(int pid);

// The parenthesised cause and remedy after "permission denied reading /proc/PID/maps", e.g.
// "(the process belongs to another user; run as that user or root)".
std::string access_denial_reason(int pid, const AccessFacts& facts);

} // namespace cudadiag::inspect
