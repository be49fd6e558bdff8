#pragma once
// A minimal value-or-error type for C++20 (std::expected arrives in C++23).
// Low-level functions return Expected<T>; callers decide whether an error is a rejected candidate,
// a finding or a trace line. Nothing here throws except value() on an error, which is a bug.

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace cudadiag {

// An error carried as a value: a human-readable reason, stable enough to show to users.
struct Error {
  std::string message;
};

template <class T> class Expected {
public:
  Expected(T value) : m_state(std::move(value)) {}     // NOLINT(google-explicit-constructor)
  Expected(Error error) : m_state(std::move(error)) {} // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool has_value() const { return m_state.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { return checked(); }
  const T& value() const& { return const_cast<Expected*>(this)->checked(); }
  T&& value() && { return std::move(checked()); }
  T* operator->() { return &checked(); }
  const T* operator->() const { return &const_cast<Expected*>(this)->checked(); }
  T& operator*() & { return checked(); }
  const T& operator*() const& { return const_cast<Expected*>(this)->checked(); }

  // The error; only meaningful when has_value() is false.
  [[nodiscard]] const Error& error() const { return std::get<1>(m_state); }

private:
  T& checked() {
    if (!has_value()) {
      throw std::logic_error("Expected::value() on an error: " + std::get<1>(m_state).message);
    }
    return std::get<0>(m_state);
  }
  std::variant<T, Error> m_state;
};

// Success with nothing to return, or an Error: what a step that only does something returns.
template <> class Expected<void> {
public:
  Expected() = default;
  Expected(Error error) : m_error(std::move(error)) {} // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool has_value() const { return !m_error.has_value(); }
  explicit operator bool() const { return has_value(); }
  // The error; only meaningful when has_value() is false.
  [[nodiscard]] const Error& error() const { return *m_error; }

private:
  std::optional<Error> m_error;
};

} // namespace cudadiag

// Evaluates `expression` (an Expected) and returns its Error from the calling function when it
// holds one; the calling function returns an Expected of any type.
#define CUDADIAG_TRY(expression)                                                                             \
  do {                                                                                                       \
    if (auto cudadiag_try_result = (expression); !cudadiag_try_result) {                                     \
      return cudadiag_try_result.error();                                                                    \
    }                                                                                                        \
  } while (false)
