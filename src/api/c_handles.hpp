#pragma once
// The C API's handles and the registry that tells a live handle from a freed or foreign pointer.
// A pointer is dereferenced only after the registry has confirmed it is live, so a stale pointer is
// rejected without touching freed memory (which is what keeps the after-free tests clean under
// AddressSanitizer). The registry cannot tell a stale pointer from a new handle that reuses its
// address; cudadiag.h documents that limit.

#include "api/settings.hpp"
#include "core/once_flag.hpp"
#include "cudadiag/cudadiag.h"
#include "cudadiag/types.hpp"

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <variant>
#include <vector>

struct cudadiag_options {
  mutable std::mutex mutex; // guards settings: one handle may be read and written from many threads
  cudadiag::api::Settings settings;
};

// Immutable once registered, except for the JSON text, rendered once on first request.
struct cudadiag_report {
  std::variant<cudadiag::Report, cudadiag::ProcessInspection> source;
  cudadiag_verdict verdict = CUDADIAG_VERDICT_OK;
  int exit_code = 0;
  std::vector<cudadiag::Finding> findings;
  mutable cudadiag::OnceFlag json_once;
  mutable std::string json;

  [[nodiscard]] const std::string& json_text() const;
};

namespace cudadiag::api {

// The live handles of one type. Owns them: remove() hands the handle back for destruction.
template <class Handle> class HandleRegistry {
public:
  Handle* add(std::unique_ptr<Handle> handle) {
    Handle* raw = handle.get();
    const std::lock_guard lock(m_mutex);
    m_live.emplace(raw, std::move(handle));
    return raw;
  }
  [[nodiscard]] bool contains(const Handle* handle) const {
    const std::lock_guard lock(m_mutex);
    return handle != nullptr && m_live.count(handle) != 0;
  }
  // The handle, no longer registered; nullptr when `handle` is not live.
  std::unique_ptr<Handle> remove(const Handle* handle) {
    const std::lock_guard lock(m_mutex);
    const auto it = m_live.find(handle);
    if (it == m_live.end()) {
      return nullptr;
    }
    auto owned = std::move(it->second);
    m_live.erase(it);
    return owned;
  }

private:
  mutable std::mutex m_mutex;
  std::unordered_map<const Handle*, std::unique_ptr<Handle>> m_live;
};

HandleRegistry<cudadiag_options>& options_registry();
HandleRegistry<cudadiag_report>& report_registry();

} // namespace cudadiag::api
