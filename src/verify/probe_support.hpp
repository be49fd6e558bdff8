#pragma once
// Pieces every verify probe shares: turning text a library wrote into something JSON can always
// serialise, and the never-throw wrapper.

#include <cstddef>
#include <cstring>
#include <exception>
#include <string>
#include <string_view>
#include <utility>

namespace cudadiag::verify {

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

// Calls `body(facts)` on fresh facts for `path`; anything it throws becomes `probe_error`, so a
// probe never throws. (Every throwing step is inside a try, the handlers' own allocations too.)
template <class Facts, class Body> Facts run_probe(const std::string& path, Body&& body) noexcept {
  Facts facts;
  try {
    facts.library = path;
    std::forward<Body>(body)(facts);
  } catch (const std::exception& error) {
    try {
      facts.probe_error = library_text(error.what());
    } catch (...) { // out of memory: nothing sensible left to say
    }
  } catch (...) {
    try {
      facts.probe_error = "unknown exception";
    } catch (...) {
    }
  }
  return facts;
}

} // namespace cudadiag::verify
