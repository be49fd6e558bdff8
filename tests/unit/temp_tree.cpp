#include "temp_tree.hpp"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <sys/stat.h>
#include <vector>

namespace cudadiag::testing {

TempTree::TempTree()
    : TempTree([] {
        const char* tmp = std::getenv("TMPDIR");
        return std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp");
      }()) {}

TempTree::TempTree(const std::string& parent) {
  ::mkdir(parent.c_str(), 0755); // exists already, or made here; mkdtemp says when it cannot be used
  std::string pattern = parent + "/cudadiag-test-XXXXXX";
  std::vector<char> buffer(pattern.begin(), pattern.end());
  buffer.push_back('\0');
  if (::mkdtemp(buffer.data()) == nullptr) {
    throw std::runtime_error("mkdtemp failed");
  }
  m_root = buffer.data();
}

TempTree::~TempTree() {
  std::error_code ignored;
  // Restore permissions first so that unreadable test directories can be removed.
  for (auto it = std::filesystem::recursive_directory_iterator(
           m_root, std::filesystem::directory_options::skip_permission_denied, ignored);
       it != std::filesystem::recursive_directory_iterator(); it.increment(ignored)) {
    if (!it->is_symlink(ignored) && it->is_directory(ignored)) {
      ::chmod(it->path().c_str(), 0755);
    }
  }
  ::chmod(m_root.c_str(), 0755);
  std::filesystem::remove_all(m_root, ignored);
}

std::string TempTree::path(std::string_view relative) const {
  if (relative.empty()) {
    return m_root;
  }
  return m_root + "/" + std::string(relative);
}

std::string TempTree::mkdir(std::string_view relative) const {
  const auto full = path(relative);
  std::filesystem::create_directories(full);
  return full;
}

std::string TempTree::write(std::string_view relative, std::string_view content, unsigned mode) const {
  const auto full = path(relative);
  std::filesystem::create_directories(std::filesystem::path(full).parent_path());
  std::ofstream out(full, std::ios::binary | std::ios::trunc);
  out.write(content.data(), static_cast<std::streamsize>(content.size()));
  out.close();
  ::chmod(full.c_str(), mode);
  return full;
}

std::string TempTree::symlink(std::string_view relative, std::string_view target) const {
  const auto full = path(relative);
  std::filesystem::create_directories(std::filesystem::path(full).parent_path());
  if (::symlink(std::string(target).c_str(), full.c_str()) != 0) {
    throw std::runtime_error("symlink failed: " + full);
  }
  return full;
}

std::string TempTree::copy_file(const std::string& source, std::string_view relative) const {
  const auto full = path(relative);
  std::filesystem::create_directories(std::filesystem::path(full).parent_path());
  std::filesystem::copy_file(source, full, std::filesystem::copy_options::overwrite_existing);
  return full;
}

} // namespace cudadiag::testing
