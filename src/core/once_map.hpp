#pragma once
// A value per key, computed once however many threads ask: the first asker computes it, the others
// asking for that key wait for it (and only for it), later askers get it at once. Entries are never
// removed, so references stay valid for the map's life. For what a run reads once and several
// components ask about (directory listings, a toolkit's version.json, the files the closures open).
//
// Lookups take no lock. The same few dozen keys are asked about thousands of times per run from
// every thread (each component asks for the listing of each directory it searches); behind a lock,
// even one per shard, the threads queued on the lock words of those hot keys (measured on a 16-CPU
// host: the listings' shard locks were the largest wait left once the object store's lock was
// gone). Each bucket is a list that only grows at its head: a reader follows it from the head it
// loaded, an inserter publishes a complete node with one compare-and-swap and, when another thread
// got in first, looks through the nodes that came in meanwhile before it tries again, so a key is
// never inserted twice.

#include "core/once_flag.hpp"

#include <array>
#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace cudadiag {

template <class Value> class OnceMap {
public:
  OnceMap() = default;
  OnceMap(const OnceMap&) = delete;
  OnceMap& operator=(const OnceMap&) = delete;
  ~OnceMap() {
    for (auto& head : m_heads) {
      for (Node* node = head.load(std::memory_order_relaxed); node != nullptr;) {
        delete std::exchange(node, node->next);
      }
    }
  }

  // The value for `key`; `compute()` runs on the first question only.
  template <class Compute> const Value& get(const std::string& key, Compute&& compute) const {
    Node& node = node_for(key);
    node.once.call([&] { node.value = compute(); });
    return node.value;
  }

  // The value for `key` if it has been computed already, else nullptr (never waits, never computes).
  [[nodiscard]] const Value* find(const std::string& key) const {
    const auto hash = std::hash<std::string>{}(key);
    const Node* node = find_in(bucket_of(hash).load(std::memory_order_acquire), nullptr, key, hash);
    return node != nullptr && node->once.done() ? &node->value : nullptr;
  }

  // How many keys were asked about.
  [[nodiscard]] std::size_t size() const { return m_size.load(std::memory_order_relaxed); }

private:
  struct Node {
    Node(const std::string& node_key, std::size_t node_hash) : key(node_key), hash(node_hash) {}
    const std::string key;
    const std::size_t hash;
    Node* next = nullptr; // set before the node is published, never changed after
    OnceFlag once;
    Value value{};
  };

  std::atomic<Node*>& bucket_of(std::size_t hash) const { return m_heads[hash % k_buckets]; }

  // The node for `key` among the nodes from `first` up to (not including) `stop`, or nullptr.
  static Node* find_in(Node* first, const Node* stop, const std::string& key, std::size_t hash) {
    for (Node* node = first; node != stop; node = node->next) {
      if (node->hash == hash && node->key == key) {
        return node;
      }
    }
    return nullptr;
  }

  Node& node_for(const std::string& key) const {
    const auto hash = std::hash<std::string>{}(key);
    auto& head = bucket_of(hash);
    Node* first = head.load(std::memory_order_acquire);
    if (Node* found = find_in(first, nullptr, key, hash)) {
      return *found;
    }
    auto made = std::make_unique<Node>(key, hash);
    for (;;) {
      made->next = first;
      if (head.compare_exchange_weak(first, made.get(), std::memory_order_release,
                                     std::memory_order_acquire)) {
        m_size.fetch_add(1, std::memory_order_relaxed);
        return *made.release();
      }
      // `first` is the head now: the nodes from it down to the one ours pointed at came in meanwhile.
      if (Node* found = find_in(first, made->next, key, hash)) {
        return *found; // another thread inserted the key first; ours is dropped unpublished
      }
    }
  }

  // A run asks about hundreds of keys (thousands on a large site-packages): lists of a few nodes.
  static constexpr std::size_t k_buckets = 256;
  mutable std::array<std::atomic<Node*>, k_buckets> m_heads{};
  mutable std::atomic<std::size_t> m_size{0};
};

} // namespace cudadiag
