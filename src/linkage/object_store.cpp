#include "linkage/object_store.hpp"

namespace cudadiag::linkage {
namespace {

// What the loader makes of the file whose identity is `id`, reached as `path`; `known` gives the
// ELF facts of a file already read this run, by real path (nullopt: read it).
template <class Known>
void read_object(const std::string& path, const fs::FileId& id, ObjectFile& file, const Known& known,
                 const fs::RealPathCache& real_paths) {
  file.identity = id;
  const auto resolved = real_paths.real_path(path);
  file.realpath = resolved ? *resolved : path;
  if (!fs::is_regular_file(file.realpath)) {
    file.fails_because =
        fs::is_directory(file.realpath) ? "cannot read file data: Is a directory" : "not a regular file";
    return;
  }
  if (auto facts = known(file.realpath)) {
    file.elf = std::move(*facts);
  } else {
    file.elf = elf::read_elf_info(file.realpath);
  }
  if (!file.elf) {
    file.fails_because = file.elf.error().message;
  } else if (auto why = elf::incompatibility_with_host(*file.elf)) {
    file.skipped_because = *why;
  }
}

} // namespace

const ObjectFile* ObjectStore::open(const std::string& path) {
  {
    const std::shared_lock lock(m_mutex);
    if (const auto known = m_by_path.find(path); known != m_by_path.end()) {
      return known->second;
    }
  }
  const auto id = fs::file_id(path);
  Slot* slot = nullptr;
  if (id) {
    const std::lock_guard lock(m_mutex);
    auto& owned = m_by_identity[*id];
    if (!owned) {
      owned = std::make_unique<Slot>();
    }
    slot = owned.get(); // stable: slots are never erased
  }
  if (slot != nullptr) {
    slot->read_once.call([&] {
      read_object(path, *id, slot->file, [this](const std::string& realpath) { return known_elf(realpath); },
                  m_real_paths);
    });
  }
  const ObjectFile* result = slot != nullptr ? &slot->file : nullptr;
  const std::lock_guard lock(m_mutex);
  m_by_path.emplace(path, result);
  return result;
}

const Expected<elf::DynamicSymbols>& ObjectStore::symbols(const ObjectFile& file) {
  Slot* slot = nullptr;
  {
    const std::shared_lock lock(m_mutex);
    slot = m_by_identity.at(file.identity).get();
  }
  slot->symbols_once.call([&] {
    slot->symbols = file.elf ? elf::read_dynamic_symbols(file.realpath, *file.elf)
                             : Expected<elf::DynamicSymbols>(Error{file.elf.error().message});
  });
  return slot->symbols;
}

void ObjectStore::add_known(std::shared_ptr<const KnownElf> known) {
  const std::lock_guard lock(m_mutex);
  m_known = std::move(known);
}

std::optional<elf::ElfInfo> ObjectStore::known_elf(const std::string& realpath) const {
  std::shared_ptr<const KnownElf> known;
  {
    const std::shared_lock lock(m_mutex);
    known = m_known;
  }
  if (!known) {
    return std::nullopt;
  }
  const auto found = known->find(realpath);
  return found != known->end() ? std::optional<elf::ElfInfo>(found->second) : std::nullopt;
}

std::size_t ObjectStore::files_read() const {
  const std::shared_lock lock(m_mutex);
  return m_by_identity.size();
}

} // namespace cudadiag::linkage
