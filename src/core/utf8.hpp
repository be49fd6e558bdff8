#pragma once
// UTF-8 well-formedness, for readers that must refuse or escape bytes that are not text.

#include <cstddef>
#include <string_view>

namespace cudadiag::utf8 {

// The length (1-4) of the well-formed UTF-8 sequence that starts at `text[at]`, storing its code
// point in `code`; 0 when the bytes there are not one (a stray continuation byte, a truncated
// sequence, an overlong form, a surrogate, a code point past U+10FFFF). `at` must be < size.
std::size_t sequence_at(std::string_view text, std::size_t at, char32_t& code);

// The offset of the first byte that does not start a well-formed sequence, or npos.
std::size_t first_invalid(std::string_view text);

} // namespace cudadiag::utf8
