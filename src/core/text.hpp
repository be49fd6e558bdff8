#pragma once
// Small text formatting helpers shared by the readers' error messages.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cudadiag {

// "0x1f" for 31: lower-case hexadecimal with a 0x prefix and no padding.
std::string hex_number(std::uint64_t value);

// Bytes as lower-case hexadecimal, two digits each (for binary data inside JSON messages).
std::string hex_encode(std::string_view bytes);
// The inverse; nullopt for an odd length or a character that is not a hexadecimal digit.
std::optional<std::string> hex_decode(std::string_view text);

} // namespace cudadiag
