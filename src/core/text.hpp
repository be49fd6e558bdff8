#pragma once
// Small text formatting helpers shared by the readers' error messages.

#include <cstdint>
#include <string>

namespace cudadiag {

// "0x1f" for 31: lower-case hexadecimal with a 0x prefix and no padding.
std::string hex_number(std::uint64_t value);

} // namespace cudadiag
