#include "linkage/object_store.hpp"

namespace cudadiag::linkage {

const ObjectFile* ObjectStore::open(const std::string& path) {
  if (const auto known = m_by_path.find(path); known != m_by_path.end()) {
    return known->second;
  }
  const ObjectFile* result = nullptr;
  if (const auto id = fs::file_id(path)) {
    auto& slot = m_by_identity[*id];
    if (!slot) {
      auto file = std::make_unique<ObjectFile>();
      file->identity = *id;
      const auto resolved = fs::real_path(path);
      file->realpath = resolved ? *resolved : path;
      if (!fs::is_regular_file(file->realpath)) {
        file->fails_because = fs::is_directory(file->realpath) ? "cannot read file data: Is a directory"
                                                                : "not a regular file";
      } else {
        file->elf = elf::read_elf_info(file->realpath);
        if (!file->elf) {
          file->fails_because = file->elf.error().message;
        } else if (auto why = elf::incompatibility_with_host(*file->elf)) {
          file->skipped_because = *why;
        }
      }
      slot = std::move(file);
    }
    result = slot.get();
  }
  m_by_path.emplace(path, result);
  return result;
}

const Expected<elf::DynamicSymbols>& ObjectStore::symbols(const ObjectFile& file) {
  auto found = m_symbols.find(&file);
  if (found == m_symbols.end()) {
    auto read = file.elf ? elf::read_dynamic_symbols(file.realpath, *file.elf)
                         : Expected<elf::DynamicSymbols>(Error{file.elf.error().message});
    found = m_symbols.emplace(&file, std::move(read)).first;
  }
  return found->second;
}

} // namespace cudadiag::linkage
