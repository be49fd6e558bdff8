#pragma once
// Pieces every verify probe shares: the common result skeleton of probes.hpp, turning text a
// library wrote into something JSON can always serialise, and the never-throw wrapper.

#include "cuda_api/library.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cudadiag::verify {

// {"library": path, "loaded": false, "dlopen_error": null, "missing_symbols": []}.
inline nlohmann::json new_probe_result(const std::string& path) {
  return nlohmann::json{{"library", path},
                        {"loaded", false},
                        {"dlopen_error", nullptr},
                        {"missing_symbols", nlohmann::json::array()}};
}

// Text a library wrote into a buffer of `capacity` bytes: up to the first NUL (never past the
// buffer), with every byte outside printable ASCII replaced by '?', so that the report's JSON
// always serialises whatever a broken or hostile library put there.
inline std::string library_text(const char* buffer, std::size_t capacity) {
  if (buffer == nullptr) {
    return {};
  }
  const void* nul = std::memchr(buffer, '\0', capacity);
  const std::size_t length =
      nul != nullptr ? static_cast<std::size_t>(static_cast<const char*>(nul) - buffer) : capacity;
  std::string text(buffer, length);
  for (char& c : text) {
    if (c < 0x20 || c > 0x7e) {
      c = (c == '\n' || c == '\t') ? c : '?';
    }
  }
  return text;
}

// library_text for a NUL-terminated string the library owns (error strings), read at most 4 KiB.
inline std::string library_text(const char* text) {
  constexpr std::size_t k_max = 4096;
  return text != nullptr ? library_text(text, ::strnlen(text, k_max)) : std::string();
}

// Calls `body(result)` on a fresh skeleton for `path`; anything it throws becomes
// "probe_error": message, so a probe never throws. (Every throwing step is inside a try, the
// handlers' own allocations too; only non-throwing moves of the result remain outside.)
template <class Body>
nlohmann::json run_probe(const std::string& path, Body&& body) noexcept { // NOLINT(bugprone-exception-escape)
  nlohmann::json result;
  try {
    result = new_probe_result(path);
    std::forward<Body>(body)(result);
  } catch (const std::exception& error) {
    try {
      result["probe_error"] = library_text(error.what());
    } catch (...) {
      return nlohmann::json(); // out of memory: nothing sensible left to report
    }
  } catch (...) {
    try {
      result["probe_error"] = "unknown exception";
    } catch (...) {
      return nlohmann::json();
    }
  }
  return result;
}

// The missing names as the JSON array of the skeleton, sorted, without duplicates.
inline nlohmann::json missing_symbols_json(const cuda_api::MissingSymbols& missing) {
  return nlohmann::json(missing.sorted());
}

} // namespace cudadiag::verify
