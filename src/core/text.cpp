#include "core/text.hpp"

#include "core/utf8.hpp"

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

std::string_view trim(std::string_view text) {
  constexpr std::string_view k_space = " \t\r\n\f\v";
  const auto first = text.find_first_not_of(k_space);
  if (first == std::string_view::npos) {
    return {};
  }
  const auto last = text.find_last_not_of(k_space);
  return text.substr(first, last - first + 1);
}

std::string to_lower(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') {
      c = static_cast<char>(c - 'A' + 'a');
    }
  }
  return out;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    auto end = text.find('\n', start);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

bool is_valid_utf8(std::string_view text) {
  return utf8::first_invalid(text) == std::string_view::npos;
}

std::string printable(std::string_view text) {
  static constexpr std::string_view k_hex = "0123456789abcdef";
  std::string out;
  out.reserve(text.size());
  const auto escape = [&](unsigned char c) {
    out += "\\x";
    out.push_back(k_hex[c >> 4U]);
    out.push_back(k_hex[c & 0xFU]);
  };
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      if (c < 0x20 || c == 0x7F) {
        escape(c);
      } else {
        out.push_back(text[i]);
      }
      ++i;
      continue;
    }
    char32_t code = 0;
    const std::size_t length = utf8::sequence_at(text, i, code);
    if (length == 0) {
      escape(c);
      ++i;
    } else {
      out.append(text.substr(i, length));
      i += length;
    }
  }
  return out;
}

std::string join(const std::vector<std::string>& parts, std::string_view separator) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (i != 0) {
      out += separator;
    }
    out += parts[i];
  }
  return out;
}

std::string seconds_text(std::chrono::milliseconds duration) {
  const auto tenths = (duration.count() + 50) / 100;
  return std::to_string(tenths / 10) + (tenths % 10 != 0 ? "." + std::to_string(tenths % 10) : "") + " s";
}

} // namespace cudadiag
