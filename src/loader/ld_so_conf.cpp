#include "loader/ld_so_conf.hpp"

#include "core/filesystem.hpp"
#include "core/read_record.hpp"
#include "core/system_root.hpp"

#include <glob.h>

#include <algorithm>
#include <sstream>

namespace cudadiag::loader {
namespace {

constexpr std::size_t k_max_files = 64;
constexpr std::size_t k_max_bytes = std::size_t{1} << 20U;
constexpr int k_max_depth = 8;

std::string trim(std::string text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string::npos) {
    return "";
  }
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

std::vector<std::string> glob_sorted(const std::string& pattern) {
  std::vector<std::string> out;
  // What the glob read, for a kept answer (core/read_record.hpp): the directory it lists and the
  // matches; wildcards above the last component list directories no path names.
  const auto slash = pattern.rfind('/');
  const auto directory = slash == std::string::npos ? std::string(".") : pattern.substr(0, slash + 1);
  if (directory.find_first_of("*?[") != std::string::npos) {
    fs::note_unrecordable_read();
  } else {
    fs::note_path(directory);
  }
  // Under a root the directory is resolved inside it (core/system_root.hpp) and the matches named
  // as the root's system names them; a directory with wildcards is only prefixed with the root.
  std::string host_pattern = pattern;
  if (fs::under_root()) {
    host_pattern = directory.find_first_of("*?[") == std::string::npos
                       ? fs::HostPath(directory).str() + "/" + pattern.substr(slash + 1)
                       : fs::system_root() + "/" + pattern;
  }
  glob_t matches{};
  fs::note_path(directory); // noted above too; again here, beside the call
  if (::glob(host_pattern.c_str(), 0, nullptr, &matches) == 0) {
    for (std::size_t i = 0; i < matches.gl_pathc; ++i) {
      const auto match = fs::system_path(matches.gl_pathv[i]);
      fs::note_path(match);
      out.emplace_back(match);
    }
  }
  ::globfree(&matches);
  std::sort(out.begin(), out.end());
  return out;
}

struct Reader {
  LdConf& conf;
  std::vector<std::string> read_files;

  void read(const std::string& path, int depth) {
    if (depth > k_max_depth || read_files.size() >= k_max_files ||
        std::find(read_files.begin(), read_files.end(), path) != read_files.end()) {
      conf.trace.push_back("ld.so.conf: " + path + " skipped (include loop, depth or file limit)");
      return;
    }
    const auto text = fs::read_file_prefix(path, k_max_bytes); // a regular file only: no FIFO waits
    if (!text) {
      conf.trace.push_back("ld.so.conf: cannot read " + path + " (" + text.error().message + ")");
      return;
    }
    read_files.push_back(path);
    conf.trace.push_back("ld.so.conf: read " + path);
    std::istringstream lines(*text);
    std::string line;
    int number = 0;
    while (std::getline(lines, line)) {
      ++number;
      if (const auto hash = line.find('#'); hash != std::string::npos) {
        line.resize(hash);
      }
      line = trim(line);
      if (line.empty()) {
        continue;
      }
      if (line.rfind("include", 0) == 0 && line.size() > 7 && (line[7] == ' ' || line[7] == '\t')) {
        std::istringstream patterns(line.substr(8));
        std::string pattern;
        while (patterns >> pattern) {
          const auto full = pattern.front() == '/' ? pattern : fs::join(fs::parent(path), pattern);
          for (const auto& match : glob_sorted(full)) {
            read(match, depth + 1);
          }
        }
        continue;
      }
      if (line.rfind("hwcap", 0) == 0) {
        continue; // "hwcap N NAME" lines name no directory
      }
      if (const auto equals = line.find('='); equals != std::string::npos) {
        line = trim(line.substr(0, equals));
      }
      while (line.size() > 1 && line.back() == '/') {
        line.pop_back();
      }
      conf.entries.push_back({line, path, number});
    }
  }
};

} // namespace

const LdConfEntry* LdConf::listing(const std::string& directory) const {
  const auto wanted = fs::lexically_normal(directory);
  const auto wanted_real = fs::real_path(directory);
  for (const auto& entry : entries) {
    if (fs::lexically_normal(entry.directory) == wanted) {
      return &entry;
    }
  }
  for (const auto& entry : entries) {
    const auto real = fs::real_path(entry.directory);
    if (wanted_real && real && *real == *wanted_real) {
      return &entry;
    }
  }
  return nullptr;
}

LdConf read_ld_so_conf(const std::string& path) {
  LdConf conf;
  Reader reader{conf, {}};
  reader.read(path, 0);
  return conf;
}

} // namespace cudadiag::loader
