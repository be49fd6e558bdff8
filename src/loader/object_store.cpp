#include "loader/object_store.hpp"

#include "core/timeline.hpp"

#include <type_traits>

namespace cudadiag::loader {
namespace {

// glibc's M_MMAP_THRESHOLD by default: malloc maps a block of this size or more, and free unmaps it.
constexpr std::size_t k_heap_mapping_threshold = std::size_t{128} << 10U;
// The tables kept by release_symbols() move into a vector: its growth must move them, not copy them.
static_assert(std::is_nothrow_move_constructible_v<elf::DynamicSymbols>);

// What the loader makes of the file `found` describes (its stat, links followed), reached as `path`;
// `known` gives the ELF facts of a file already read this run, by real path (nullopt: read it).
template <class Known>
void read_object(const std::string& path, const fs::FileStat& found, ObjectFile& file, const Known& known,
                 const fs::RealPathCache& real_paths) {
  file.identity = found.id;
  const auto resolved = real_paths.real_path(path);
  file.realpath = resolved ? *resolved : path;
  if (!found.regular) {
    file.fails_because = found.directory ? "cannot read file data: Is a directory" : "not a regular file";
    return;
  }
  if (auto truncated = elf::truncated_load(file.realpath)) {
    file.fails_because = truncated->reason;
    file.crashes = truncated->crashes;
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
  return m_by_path.get(path, [&]() -> const ObjectFile* {
    const auto found = fs::file_stat(path);
    if (!found) {
      return nullptr;
    }
    Slot& slot = slot_of(found->id);
    slot.read_once.call([&] {
      const timeline::Span span("open", path);
      read_object(
          path, *found, slot, [this](const std::string& realpath) { return known_elf(realpath); },
          m_real_paths);
    });
    return &slot;
  });
}

ObjectStore::Slot& ObjectStore::slot_of(const fs::FileId& id) {
  auto& shard = m_identities[IdentityHash()(id) % k_identity_shards];
  const std::lock_guard lock(shard.mutex);
  auto& owned = shard.slots[id];
  if (!owned) {
    owned = std::make_unique<Slot>();
  }
  return *owned; // stable: slots are never erased
}

const Expected<elf::DynamicSymbols>& ObjectStore::symbols(const ObjectFile& file) {
  // Every ObjectFile this store hands out is a Slot it owns (the contract of symbols()).
  auto& slot = const_cast<Slot&>(static_cast<const Slot&>(file));
  slot.symbols_once.call([&] {
    const timeline::Span span("symbols", file.realpath);
    slot.symbols = file.elf ? elf::read_dynamic_symbols(file.realpath, *file.elf)
                            : Expected<elf::DynamicSymbols>(Error{file.elf.error().message});
  });
  return slot.symbols;
}

void ObjectStore::add_known(std::shared_ptr<const KnownElf> known) {
  const std::lock_guard lock(m_known_mutex);
  m_known = std::move(known);
}

std::optional<elf::ElfInfo> ObjectStore::known_elf(const std::string& realpath) const {
  std::shared_ptr<const KnownElf> known;
  {
    const std::lock_guard lock(m_known_mutex);
    known = m_known;
  }
  if (!known) {
    return std::nullopt;
  }
  const auto found = known->find(realpath);
  return found != known->end() ? std::optional<elf::ElfInfo>(found->second) : std::nullopt;
}

void ObjectStore::release_symbols() {
  for (auto& shard : m_identities) {
    const std::lock_guard lock(shard.mutex);
    for (auto& [id, slot] : shard.slots) {
      if (slot->symbols_once.done()) { // else being read now, or never asked for
        if (slot->symbols && slot->symbols->largest_heap_block() >= k_heap_mapping_threshold) {
          m_unreleased_tables.push_back(std::move(*slot->symbols));
        } else if (slot->symbols) {
          m_released_string_tables.push_back(slot->symbols->string_table());
        }
        slot->symbols = Error{std::string(k_symbols_released)};
      }
    }
  }
}

std::size_t ObjectStore::files_read() const {
  std::size_t files = 0;
  for (auto& shard : m_identities) {
    const std::lock_guard lock(shard.mutex);
    files += shard.slots.size();
  }
  return files;
}

} // namespace cudadiag::loader
