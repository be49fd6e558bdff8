#pragma once
// The process environment, read once. Nothing in the library calls getenv() after capture():
// every component receives an Environment by const reference, and tests build one by hand.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag {

class Environment {
public:
  // Reads environ, the current directory and the user id of this process.
  static Environment capture();

  // The value of `name`, or nullopt when unset. A set-but-empty variable returns "".
  [[nodiscard]] std::optional<std::string> get(std::string_view name) const;
  // The value when set and non-empty; cuda-pathfinder treats an empty value as unset.
  [[nodiscard]] std::optional<std::string> non_empty(std::string_view name) const;

  void set(std::string name, std::string value) { m_vars[std::move(name)] = std::move(value); }
  void unset(const std::string& name) { m_vars.erase(name); }
  [[nodiscard]] const std::map<std::string, std::string, std::less<>>& variables() const { return m_vars; }

  // The home directory: $HOME when set and non-empty, else passwd_home when set, else uid's passwd
  // entry, looked up then.
  [[nodiscard]] std::string home() const;

  std::string cwd;  // the working directory at capture time ("" if unreadable)
  unsigned uid = 0; // real user id
  // A home directory to use instead of uid's passwd entry (tests, redaction of a recorded
  // environment); capture() leaves it empty: the passwd database is asked only when the answer is
  // needed (a lookup can go to LDAP or sssd on a cluster node).
  std::string passwd_home;

private:
  std::map<std::string, std::string, std::less<>> m_vars;
};

// The home directory of `uid` in the passwd database, "" when there is none.
std::string home_from_passwd(unsigned uid);

// Splits a colon-separated search path (PATH, LD_LIBRARY_PATH). Empty entries are kept as "" so
// callers can report them: the loader treats an empty entry as the current directory.
std::vector<std::string> split_search_path(std::string_view value);

// Where this operating system keeps what the loader and the toolkits use. The defaults describe
// the running machine; tests point them at synthetic trees.
// The machine this binary was built for, in the spellings the layouts use: the toolkit's target
// triple (targets/x86_64-linux, targets/sbsa-linux) and Debian's multiarch tuple.
#if defined(__aarch64__)
inline constexpr std::string_view k_host_target_triple = "sbsa-linux";
inline constexpr std::string_view k_host_multiarch = "aarch64-linux-gnu";
#else
inline constexpr std::string_view k_host_target_triple = "x86_64-linux";
inline constexpr std::string_view k_host_multiarch = "x86_64-linux-gnu";
#endif

struct SystemLayout {
  std::string ld_so_cache = "/etc/ld.so.cache";
  // What ldconfig builds the cache from (with its include files); named in remedies.
  std::string ld_so_conf = "/etc/ld.so.conf";
  // The system-wide preload list glibc loads into every process after LD_PRELOAD's entries.
  std::string ld_so_preload = "/etc/ld.so.preload";
  // glibc's trusted directories, searched after ld.so.cache, in order.
  std::vector<std::string> default_lib_dirs = {"/lib/" + std::string(k_host_multiarch),
                                               "/usr/lib/" + std::string(k_host_multiarch),
                                               "/lib64",
                                               "/usr/lib64",
                                               "/lib",
                                               "/usr/lib"};
  // Parents of system toolkits: <parent>/cuda and <parent>/cuda-X.Y.
  std::vector<std::string> toolkit_parents = {"/usr/local"};
  // The target triple used by toolkit and conda layouts (targets/<triple>/lib).
  std::string target_triple = std::string(k_host_target_triple);
  // Debian's multiarch tuple (/usr/include/<multiarch>, where cuDNN's packages put cudnn.h).
  std::string multiarch = std::string(k_host_multiarch);
  // Prefixed to the system include directories the catalog names (/usr/include, ...); "" on a
  // real machine, a synthetic tree in tests.
  std::string system_root = "";
  // The system package databases versions are read from (Debian's dpkg, RPM's SQLite database).
  std::string dpkg_dir = "/var/lib/dpkg";
  std::string rpm_db = "/var/lib/rpm/rpmdb.sqlite";
};

} // namespace cudadiag
