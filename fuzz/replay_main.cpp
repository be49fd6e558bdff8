// cudadiag_fuzz_replay TARGET PATH...: runs every file under each PATH (a file or a directory,
// recursively) through one fuzz target, without libFuzzer. The ordinary build runs each target's
// seed corpus (fuzz/corpus/TARGET) and regression inputs (tests/fuzz/TARGET) this way (ctest -L
// fuzz_replay), under whatever sanitizers that build uses. `cudadiag_fuzz_replay --list` prints
// the target names.
#include "targets.hpp"

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

namespace {

std::vector<std::uint8_t> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

} // namespace

int main(int argc, char** argv) {
  using cudadiag::fuzz::k_targets;
  if (argc == 2 && std::string_view(argv[1]) == "--list") {
    for (const auto& target : k_targets) {
      std::printf("%.*s\n", static_cast<int>(target.name.size()), target.name.data());
    }
    return 0;
  }
  if (argc < 3) {
    std::fprintf(stderr, "usage: cudadiag_fuzz_replay TARGET PATH... | --list\n");
    return 2;
  }
  const std::string_view name = argv[1];
  const auto* target = std::find_if(std::begin(k_targets), std::end(k_targets),
                                    [name](const auto& entry) { return entry.name == name; });
  if (target == std::end(k_targets)) {
    std::fprintf(stderr, "cudadiag_fuzz_replay: unknown target %s\n", argv[1]);
    return 2;
  }
  std::vector<std::filesystem::path> files;
  for (int i = 2; i < argc; ++i) {
    const std::filesystem::path root = argv[i];
    if (std::filesystem::is_directory(root)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
        if (entry.is_regular_file()) {
          files.push_back(entry.path());
        }
      }
    } else if (std::filesystem::is_regular_file(root)) {
      files.push_back(root);
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& file : files) {
    const auto bytes = read_bytes(file);
    target->run(bytes.data(), bytes.size());
  }
  std::printf("%.*s: %zu inputs ran\n", static_cast<int>(name.size()), name.data(), files.size());
  return files.empty() ? 1 : 0;
}
