#include "targets.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace cudadiag::fuzz {
namespace {

const std::filesystem::path& scratch_root() {
  static const std::filesystem::path root = [] {
    std::string pattern = (std::filesystem::temp_directory_path() / "cudadiag-fuzz-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) {
      std::perror("cudadiag fuzz: mkdtemp");
      std::abort();
    }
    std::atexit([] {
      std::error_code ignored;
      std::filesystem::remove_all(scratch_root(), ignored);
    });
    return std::filesystem::path(pattern);
  }();
  return root;
}

} // namespace

std::vector<std::string> split_input(const std::uint8_t* data, std::size_t size, std::size_t parts) {
  constexpr std::string_view k_separator = "\n====\n";
  std::string_view rest(reinterpret_cast<const char*>(data), size);
  std::vector<std::string> out;
  while (out.size() + 1 < parts) {
    const auto at = rest.find(k_separator);
    if (at == std::string_view::npos) {
      break;
    }
    out.emplace_back(rest.substr(0, at));
    rest.remove_prefix(at + k_separator.size());
  }
  out.emplace_back(rest);
  out.resize(parts);
  return out;
}

std::string fresh_dir(std::string_view sub) {
  const auto dir = scratch_root() / sub;
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  std::filesystem::create_directories(dir);
  return dir.string();
}

void write_file(const std::string& path, std::string_view content) {
  std::filesystem::create_directories(std::filesystem::path(path).parent_path());
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
}

std::string file_name_part(std::string_view text) {
  std::string out;
  for (const char c : text.substr(0, 64)) {
    out += c == '/' || c == '\0' ? '_' : c;
  }
  if (out.empty() || out == "." || out == "..") {
    out = "x" + out;
  }
  return out;
}

void check(bool condition, std::string_view what) {
  if (!condition) {
    std::fprintf(stderr, "cudadiag fuzz: property violated: %.*s\n", static_cast<int>(what.size()),
                 what.data());
    std::abort();
  }
}

} // namespace cudadiag::fuzz
