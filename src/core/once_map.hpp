#pragma once
// A value per key, computed once however many threads ask: the first asker computes it, the others
// asking for that key wait for it (and only for it), later askers get it at once. Entries are never
// removed, so references stay valid for the map's life. For what a run reads once and several
// components ask about (directory listings, a toolkit's version.json).

#include "core/once_flag.hpp"

#include <array>
#include <cstddef>
#include <functional>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <unordered_map>

namespace cudadiag {

template <class Value>
class OnceMap {
public:
  // The value for `key`; `compute()` runs on the first question only.
  template <class Compute>
  const Value& get(const std::string& key, Compute&& compute) const {
    Shard& shard = shard_of(key);
    Slot* slot = nullptr; // stable once made: slots are never erased
    {
      const std::shared_lock lock(shard.mutex);
      if (const auto found = shard.slots.find(key); found != shard.slots.end()) {
        slot = found->second.get();
      }
    }
    if (slot == nullptr) {
      const std::lock_guard lock(shard.mutex);
      auto& owned = shard.slots[key];
      if (!owned) {
        owned = std::make_unique<Slot>();
      }
      slot = owned.get();
    }
    slot->once.call([&] { slot->value = compute(); });
    return slot->value;
  }

  // The value for `key` if it has been computed already, else nullptr (never waits, never computes).
  [[nodiscard]] const Value* find(const std::string& key) const {
    Shard& shard = shard_of(key);
    const std::shared_lock lock(shard.mutex);
    const auto found = shard.slots.find(key);
    return found != shard.slots.end() && found->second->once.done() ? &found->second->value : nullptr;
  }

  // How many keys were asked about.
  [[nodiscard]] std::size_t size() const {
    std::size_t keys = 0;
    for (auto& shard : m_shards) {
      const std::shared_lock lock(shard.mutex);
      keys += shard.slots.size();
    }
    return keys;
  }

private:
  struct Slot {
    OnceFlag once;
    Value value{};
  };
  // The keys are spread over shards, each with its own lock, so that threads asking about different
  // keys seldom wait for each other's insertions; lookups share the lock (every component asks
  // about the same few dozen directories, many times each). A shard's lock guards its map, not the
  // values being computed.
  struct alignas(64) Shard {
    std::shared_mutex mutex;
    std::unordered_map<std::string, std::unique_ptr<Slot>> slots;
  };
  static constexpr std::size_t k_shards = 16;
  Shard& shard_of(const std::string& key) const { return m_shards[std::hash<std::string>{}(key) % k_shards]; }
  mutable std::array<Shard, k_shards> m_shards;
};

} // namespace cudadiag
