#pragma once
// A value per key, computed once however many threads ask: the first asker computes it, the others
// asking for that key wait for it (and only for it), later askers get it at once. Entries are never
// removed, so references stay valid for the map's life. For what a run reads once and several
// components ask about (directory listings, a toolkit's version.json).

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

namespace cudadiag {

template <class Value>
class OnceMap {
public:
  // The value for `key`; `compute()` runs on the first question only.
  template <class Compute>
  const Value& get(const std::string& key, Compute&& compute) const {
    Slot* slot = nullptr;
    {
      const std::lock_guard lock(m_mutex);
      auto& owned = m_slots[key];
      if (!owned) {
        owned = std::make_unique<Slot>();
      }
      slot = owned.get(); // stable: slots are never erased
    }
    std::call_once(slot->once, [&] { slot->value = compute(); });
    return slot->value;
  }

  // How many keys were asked about.
  [[nodiscard]] std::size_t size() const {
    const std::lock_guard lock(m_mutex);
    return m_slots.size();
  }

private:
  struct Slot {
    std::once_flag once;
    Value value{};
  };
  mutable std::mutex m_mutex; // guards the map, not the values being computed
  mutable std::unordered_map<std::string, std::unique_ptr<Slot>> m_slots;
};

} // namespace cudadiag
