#pragma once
// A value per key, computed once however many threads ask: the first asker computes it, the others
// asking for that key wait for it (and only for it), later askers get it at once. Entries are never
// removed, so references stay valid for the map's life. For what a run reads once and several
// components ask about (directory listings, a toolkit's version.json).

#include <atomic>
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
    std::call_once(slot->once, [&] {
      slot->value = compute();
      slot->ready.store(true, std::memory_order_release);
    });
    return slot->value;
  }

  // The value for `key` if it has been computed already, else nullptr (never waits, never computes).
  [[nodiscard]] const Value* find(const std::string& key) const {
    const std::lock_guard lock(m_mutex);
    const auto found = m_slots.find(key);
    return found != m_slots.end() && found->second->ready.load(std::memory_order_acquire) ? &found->second->value
                                                                                          : nullptr;
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
    std::atomic<bool> ready{false}; // value computed
  };
  mutable std::mutex m_mutex; // guards the map, not the values being computed
  mutable std::unordered_map<std::string, std::unique_ptr<Slot>> m_slots;
};

} // namespace cudadiag
