#include "core/utf8.hpp"

namespace cudadiag::utf8 {

std::size_t sequence_at(std::string_view text, std::size_t at, char32_t& code) {
  const auto byte = [&text](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned lead = byte(at);
  std::size_t length = 0;
  char32_t value = 0;
  if (lead < 0x80U) {
    code = lead;
    return 1;
  }
  if (lead >= 0xc2U && lead <= 0xdfU) {
    length = 2;
    value = lead & 0x1fU;
  } else if (lead >= 0xe0U && lead <= 0xefU) {
    length = 3;
    value = lead & 0x0fU;
  } else if (lead >= 0xf0U && lead <= 0xf4U) {
    length = 4;
    value = lead & 0x07U;
  } else {
    return 0;
  }
  if (length > text.size() - at) {
    return 0;
  }
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(at + k) & 0xc0U) != 0x80U) {
      return 0;
    }
    value = (value << 6U) | (byte(at + k) & 0x3fU);
  }
  const bool overlong = (length == 3 && value < 0x800U) || (length == 4 && value < 0x10000U);
  if (overlong || (value >= 0xd800U && value <= 0xdfffU) || value > 0x10ffffU) {
    return 0;
  }
  code = value;
  return length;
}

std::size_t first_invalid(std::string_view text) {
  std::size_t at = 0;
  char32_t code = 0;
  while (at < text.size()) {
    const auto length = sequence_at(text, at, code);
    if (length == 0) {
      return at;
    }
    at += length;
  }
  return std::string_view::npos;
}

} // namespace cudadiag::utf8
