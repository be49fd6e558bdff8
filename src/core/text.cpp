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

std::string hex_encode(std::string_view bytes) {
  static constexpr std::string_view k_digits = "0123456789abcdef";
  std::string text;
  text.reserve(2 * bytes.size());
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    text += k_digits[byte >> 4U];
    text += k_digits[byte & 0xfU];
  }
  return text;
}

std::optional<std::string> hex_decode(std::string_view text) {
  if (text.size() % 2 != 0) {
    return std::nullopt;
  }
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') {
      return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
      return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
      return c - 'A' + 10;
    }
    return -1;
  };
  std::string bytes;
  bytes.reserve(text.size() / 2);
  for (std::size_t i = 0; i < text.size(); i += 2) {
    const int high = nibble(text[i]);
    const int low = nibble(text[i + 1]);
    if (high < 0 || low < 0) {
      return std::nullopt;
    }
    bytes += static_cast<char>(high << 4 | low);
  }
  return bytes;
}

} // namespace cudadiag
