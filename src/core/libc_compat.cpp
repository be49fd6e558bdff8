#include "core/libc_compat.hpp"

#include "core/filesystem.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <charconv>
#include <string_view>
#include <utility>

namespace cudadiag::libc {
namespace {

template <class Function> Function resolved(const char* name) {
  return reinterpret_cast<Function>(::dlsym(RTLD_DEFAULT, name)); // NOLINT: dlsym's void* to a function
}

// The standard signals by number, named as glibc's sigabbrev_np names them (SIGIO is "POLL",
// SIGIOT "ABRT").
constexpr std::pair<int, std::string_view> k_signal_names[] = {
    {SIGHUP, "HUP"},       {SIGINT, "INT"},     {SIGQUIT, "QUIT"}, {SIGILL, "ILL"},   {SIGTRAP, "TRAP"},
    {SIGABRT, "ABRT"},     {SIGBUS, "BUS"},     {SIGFPE, "FPE"},   {SIGKILL, "KILL"}, {SIGUSR1, "USR1"},
    {SIGSEGV, "SEGV"},     {SIGUSR2, "USR2"},   {SIGPIPE, "PIPE"}, {SIGALRM, "ALRM"}, {SIGTERM, "TERM"},
#ifdef SIGSTKFLT
    {SIGSTKFLT, "STKFLT"},
#endif
    {SIGCHLD, "CHLD"},     {SIGCONT, "CONT"},   {SIGSTOP, "STOP"}, {SIGTSTP, "TSTP"}, {SIGTTIN, "TTIN"},
    {SIGTTOU, "TTOU"},     {SIGURG, "URG"},     {SIGXCPU, "XCPU"}, {SIGXFSZ, "XFSZ"}, {SIGVTALRM, "VTALRM"},
    {SIGPROF, "PROF"},     {SIGWINCH, "WINCH"}, {SIGPOLL, "POLL"}, {SIGPWR, "PWR"},   {SIGSYS, "SYS"},
};

} // namespace

const Extensions& glibc() {
  static const Extensions extensions{
      .spawn_addclosefrom =
          resolved<int (*)(posix_spawn_file_actions_t*, int)>("posix_spawn_file_actions_addclosefrom_np"),
      .spawn_addchdir =
          resolved<int (*)(posix_spawn_file_actions_t*, const char*)>("posix_spawn_file_actions_addchdir_np"),
      .sigabbrev = resolved<const char* (*)(int)>("sigabbrev_np"),
  };
  return extensions;
}

std::string signal_name(int signal, const Extensions& extensions) {
  if (extensions.sigabbrev != nullptr) {
    if (const char* abbreviation = extensions.sigabbrev(signal)) {
      return std::string("SIG") + abbreviation;
    }
    return "signal " + std::to_string(signal);
  }
  for (const auto& [number, name] : k_signal_names) {
    if (number == signal) {
      return "SIG" + std::string(name);
    }
  }
  return "signal " + std::to_string(signal);
}

int add_close_from(posix_spawn_file_actions_t* actions, int lowest, const Extensions& extensions) {
  if (extensions.spawn_addclosefrom != nullptr) {
    return extensions.spawn_addclosefrom(actions, lowest);
  }
  const int directory = ::open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (directory < 0) {
    return errno;
  }
  const auto names = fs::read_directory_names(directory, 1U << 20U);
  int status = 0;
  for (const auto name : names.names) {
    int fd = -1;
    const auto [end, error] = std::from_chars(name.data(), name.data() + name.size(), fd);
    if (error != std::errc() || end != name.data() + name.size() || fd < lowest || fd == directory) {
      continue;
    }
    if (const int added = ::posix_spawn_file_actions_addclose(actions, fd); added != 0 && status == 0) {
      status = added;
    }
  }
  ::close(directory);
  return status;
}

std::vector<std::string> spawn_in_directory(posix_spawn_file_actions_t* actions, const std::string& directory,
                                            std::vector<std::string> argv, const Extensions& extensions) {
  if (extensions.spawn_addchdir != nullptr) {
    extensions.spawn_addchdir(actions, directory.c_str());
    return argv;
  }
  std::vector<std::string> through_shell = {"/bin/sh", "-c", "cd -- \"$0\" && exec \"$@\"", directory};
  through_shell.insert(through_shell.end(), std::make_move_iterator(argv.begin()),
                       std::make_move_iterator(argv.end()));
  return through_shell;
}

} // namespace cudadiag::libc
