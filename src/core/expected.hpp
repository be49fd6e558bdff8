#pragma once
// The one error convention of cudadiag's code (CONTRIBUTING.md, "Errors"): a function that can fail
// returns Expected<T, E> (std::expected arrives in C++23; this is the subset ccache's
// util/expected.hpp uses of tl::expected): its value, or an E (by default an Error) saying why.
// Expected<void> is a step that only does something. CUDADIAG_TRY and CUDADIAG_TRY_ASSIGN pass an
// error up. Callers decide whether an error is a rejected candidate, a finding or a trace line.
// Nothing here throws except value() on an error, which is a bug.

#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

namespace cudadiag {

// An error carried as a value: a human-readable reason, stable enough to show to users.
struct Error {
  std::string message;
};

template <class T, class E = Error> class Expected {
  static_assert(!std::is_same_v<T, E>, "Expected<T, E>: a value and an error of one type are ambiguous");

public:
  using value_type = T;
  using error_type = E;

  Expected(T value)
      : m_state(std::in_place_index<0>, std::move(value)) {} // NOLINT(google-explicit-constructor)
  Expected(E error)
      : m_state(std::in_place_index<1>, std::move(error)) {} // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool has_value() const { return m_state.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { return checked(); }
  const T& value() const& { return const_cast<Expected*>(this)->checked(); }
  T&& value() && { return std::move(checked()); }
  T* operator->() { return &checked(); }
  const T* operator->() const { return &const_cast<Expected*>(this)->checked(); }
  T& operator*() & { return checked(); }
  const T& operator*() const& { return const_cast<Expected*>(this)->checked(); }
  T&& operator*() && { return std::move(checked()); }

  // The value, or `fallback` when this holds an error.
  template <class U> [[nodiscard]] T value_or(U&& fallback) const& {
    return has_value() ? std::get<0>(m_state) : static_cast<T>(std::forward<U>(fallback));
  }

  // The error; only meaningful when has_value() is false.
  [[nodiscard]] const E& error() const& { return std::get<1>(m_state); }
  [[nodiscard]] E&& error() && { return std::get<1>(std::move(m_state)); }

private:
  T& checked() {
    if (!has_value()) {
      if constexpr (std::is_same_v<E, Error>) {
        throw std::logic_error("Expected::value() on an error: " + std::get<1>(m_state).message);
      } else {
        throw std::logic_error("Expected::value() on an error");
      }
    }
    return std::get<0>(m_state);
  }
  std::variant<T, E> m_state;
};

// Success with nothing to return, or an E: what a step that only does something returns.
template <class E> class Expected<void, E> {
public:
  using value_type = void;
  using error_type = E;

  Expected() = default;
  Expected(E error) : m_state(std::move(error)) {} // NOLINT(google-explicit-constructor)

  [[nodiscard]] bool has_value() const { return m_state.index() == 0; }
  explicit operator bool() const { return has_value(); }
  // The error; only meaningful when has_value() is false.
  [[nodiscard]] const E& error() const& { return std::get<1>(m_state); }
  [[nodiscard]] E&& error() && { return std::get<1>(std::move(m_state)); }

private:
  std::variant<std::monostate, E> m_state;
};

} // namespace cudadiag

// Evaluates `expression` (an Expected) and returns its error from the calling function when it
// holds one; the calling function returns an Expected of any value type and the same error type.
#define CUDADIAG_TRY(expression)                                                                             \
  do {                                                                                                       \
    if (auto cudadiag_try_result = (expression); !cudadiag_try_result) {                                     \
      return std::move(cudadiag_try_result).error();                                                         \
    }                                                                                                        \
  } while (false)

// Evaluates `expression` (an Expected): moves its value into `target` (an lvalue, declared before),
// or returns its error from the calling function, as CUDADIAG_TRY.
#define CUDADIAG_TRY_ASSIGN(target, expression)                                                              \
  do {                                                                                                       \
    auto cudadiag_try_result = (expression);                                                                 \
    if (!cudadiag_try_result) {                                                                              \
      return std::move(cudadiag_try_result).error();                                                         \
    }                                                                                                        \
    (target) = std::move(*std::move(cudadiag_try_result));                                                   \
  } while (false)
