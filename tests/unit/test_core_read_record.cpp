// What quick_check()'s kept answer rests on (core/read_record.hpp): the snapshot of the paths a
// computation read, and, over the sources, that every file-system call discovery can reach notes
// its path first — a call that does not could let a kept answer outlive a change.

#include "core/read_record.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <vector>

namespace {

namespace stdfs = std::filesystem;
using cudadiag::testing::TempTree;

std::string read_record_text(const stdfs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// `text` with // comments blanked (lines kept, so that line numbers stay right).
std::vector<std::string> read_record_code_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const auto comment = line.find("//");
    lines.push_back(comment == std::string::npos ? line : line.substr(0, comment));
  }
  return lines;
}

} // namespace

TEST_CASE("read record: a snapshot stays unchanged until a read file, a listed directory or a link "
          "changes, and a path changed just before is not trusted") {
  // In the build directory: every directory above a recorded path is part of the snapshot, and /tmp
  // changes all the time on a shared machine.
  const std::string scratch = CUDADIAG_UNIT_SCRATCH_DIR;
  const TempTree tree(scratch);
  const auto file = tree.write("lib/libfoo.so.1", "one");
  tree.symlink("lib/libfoo.so", "libfoo.so.1");
  {
    // Just written: a change in the same timestamp tick could go unseen, so nothing is kept.
    cudadiag::fs::ReadRecorder recorder;
    cudadiag::fs::note_path(file);
    CHECK_FALSE(recorder.finish().has_value());
  }
  ::usleep(2'100'000);
  const auto take = [&] {
    cudadiag::fs::ReadRecorder recorder;
    cudadiag::fs::note_path(file);
    cudadiag::fs::note_path(tree.path("lib/libfoo.so"));
    cudadiag::fs::note_path(tree.path("lib/libbar.so.1")); // missing: covered by lib/
    return recorder.finish();
  };
  const auto snapshot = take();
  REQUIRE(snapshot.has_value());
  CHECK(snapshot->unchanged());
  CHECK(snapshot->size() >= 4); // the file, the link, lib/, the tree's root and above

  SUBCASE("a file changed in place") {
    std::ofstream(file, std::ios::in | std::ios::out) << "two";
    CHECK_FALSE(snapshot->unchanged());
  }
  SUBCASE("a missing path created") {
    tree.write("lib/libbar.so.1", "");
    CHECK_FALSE(snapshot->unchanged());
  }
  SUBCASE("a link pointed elsewhere") {
    stdfs::remove(tree.path("lib/libfoo.so"));
    tree.symlink("lib/libfoo.so", "libfoo.so.2");
    CHECK_FALSE(snapshot->unchanged());
  }
  SUBCASE("a read that paths do not name") {
    cudadiag::fs::ReadRecorder recorder;
    cudadiag::fs::note_unrecordable_read();
    CHECK_FALSE(recorder.finish().has_value());
  }
}

TEST_CASE("read record: every file-system call discovery can reach notes its path first") {
  // src/inspect is read afresh on every quick_check() call; the load-check cache, the output
  // writer and the spawn fallback (libc_compat.cpp: this process's descriptors) are not used by
  // discovery; read_record.cpp is the validation itself.
  const std::vector<std::string> exempt = {"src/core/read_record.cpp", "src/core/output_file.cpp",
                                           "src/linkage/load_cache.cpp", "src/core/libc_compat.cpp"};
  const std::regex call(
      R"((^|[^A-Za-z0-9_.>])(::|std::filesystem::)(open|stat|lstat|access|realpath|readlink|)"
      R"(opendir|glob|fopen|exists|is_regular_file|is_directory|status|directory_iterator|)"
      R"(canonical|read_symlink|file_size)\s*\(|std::ifstream\s+\w+\s*\()");
  const stdfs::path root = CUDADIAG_SOURCE_DIR;
  std::vector<std::string> unnoted;
  std::size_t calls = 0;
  for (const char* dir :
       {"src/core", "src/discovery", "src/elf", "src/findings", "src/linkage", "src/loader", "probes",
        "src/python", "src/versions", "src/report", "src/pipeline", "src/api", "src/policy"}) {
    for (const auto& entry : stdfs::directory_iterator(root / dir)) {
      const auto relative = stdfs::relative(entry.path(), root).string();
      const auto ext = entry.path().extension();
      if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp") ||
          std::find(exempt.begin(), exempt.end(), relative) != exempt.end()) {
        continue;
      }
      const auto lines = read_record_code_lines(read_record_text(entry.path()));
      for (std::size_t i = 0; i < lines.size(); ++i) {
        if (!std::regex_search(lines[i], call)) {
          continue;
        }
        ++calls;
        bool noted = false;
        for (std::size_t back = 0; back <= 8 && back <= i && !noted; ++back) {
          noted = lines[i - back].find("note_path(") != std::string::npos ||
                  lines[i - back].find("note_unrecordable_read(") != std::string::npos;
        }
        if (!noted) {
          unnoted.push_back(relative + ":" + std::to_string(i + 1) + ": " + lines[i]);
        }
      }
    }
  }
  CHECK(calls >= 15); // the scan finds the calls it is about
  std::string listed;
  for (const auto& line : unnoted) {
    listed += line + "\n";
  }
  CAPTURE(listed); // the calls without fs::note_path() before them
  CHECK(unnoted.empty());
}
