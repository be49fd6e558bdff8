#pragma once
// The glibc calls newer than the oldest glibc cudadiag's wheel runs on (2.17, manylinux2014),
// resolved at run time: where the running glibc has them, they are used (the fast path); where it
// does not, a fallback does the same job. Nothing here is linked against a glibc symbol newer than
// 2.17, so the binaries' symbol versions do not depend on them (scripts/glibc_floor.py lists
// what each binary needs). Directory listing needs no entry here: filesystem.cpp calls the
// getdents64 system call itself, which is all glibc's 2.30 wrapper does.

#include <spawn.h>

#include <string>
#include <vector>

namespace cudadiag::libc {

// The functions of the running glibc, each null where it lacks it.
struct Extensions {
  int (*spawn_addclosefrom)(posix_spawn_file_actions_t*, int) = nullptr;     // glibc 2.34
  int (*spawn_addchdir)(posix_spawn_file_actions_t*, const char*) = nullptr; // glibc 2.29
  const char* (*sigabbrev)(int) = nullptr;                                   // glibc 2.32
};

// The running glibc's (looked up once, by dlsym).
const Extensions& glibc();
// None: every fallback (the tests use it).
inline constexpr Extensions k_no_extensions{};

// "SIGKILL" for 9, as glibc's sigabbrev_np names it with "SIG" before; "signal <n>" for a number it
// has no name for (the real-time signals among them).
std::string signal_name(int signal, const Extensions& extensions = glibc());

// Adds to `actions`: every descriptor numbered `lowest` or above is closed in the child. Without
// glibc's action, each such descriptor open now (/proc/self/fd) gets a close action of its own: one
// another thread opens after this call without O_CLOEXEC then still reaches the child. 0 on
// success, else an errno value.
int add_close_from(posix_spawn_file_actions_t* actions, int lowest, const Extensions& extensions = glibc());

// What to posix_spawn so that the child runs `argv` (argv[0] the program's path) in `directory`.
// With glibc's chdir action, `argv` unchanged and the action added to `actions`; without it,
// /bin/sh changes directory and replaces itself with the program (the same process, so its group,
// signals and descriptors are the child's; a directory that cannot be entered makes it exit 2).
// Call it after every other action of `actions`, as glibc applies them in order.
std::vector<std::string> spawn_in_directory(posix_spawn_file_actions_t* actions, const std::string& directory,
                                            std::vector<std::string> argv,
                                            const Extensions& extensions = glibc());

} // namespace cudadiag::libc
