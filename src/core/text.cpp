#include "core/text.hpp"

#include <string_view>

namespace cudadiag {

std::string hex_number(std::uint64_t value) {
  static constexpr std::string_view k_digits = "0123456789abcdef";
  std::string text;
  do {
    text.insert(text.begin(), k_digits[value & 0xfU]);
    value >>= 4U;
  } while (value != 0);
  return "0x" + text;
}

} // namespace cudadiag
