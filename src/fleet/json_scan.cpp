#include "fleet/json_scan.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace cudadiag::fleet::json_scan {
namespace {

// The bytes the scanner must look at: outside strings the quote and brackets, inside strings the
// quote and the backslash. Everything else is skipped a table lookup at a time.
constexpr std::array<bool, 256> table_of(std::string_view bytes) {
  std::array<bool, 256> table{};
  for (const char c : bytes) {
    table[static_cast<unsigned char>(c)] = true;
  }
  return table;
}
constexpr auto k_structural = table_of("\"{}[]");
constexpr auto k_in_string = table_of("\"\\");

} // namespace

std::size_t advance_scalar(State& state, std::string_view text) {
  const char* data = text.data();
  const std::size_t size = text.size();
  std::size_t i = 0;
  while (i < size) {
    if (state.in_string) {
      if (state.escaped) {
        state.escaped = false;
        ++i;
        continue;
      }
      while (i < size && !k_in_string[static_cast<unsigned char>(data[i])]) {
        ++i;
      }
      if (i == size) {
        break;
      }
      if (data[i] == '\\') {
        state.escaped = true;
      } else {
        state.in_string = false;
      }
      ++i;
      continue;
    }
    while (i < size && !k_structural[static_cast<unsigned char>(data[i])]) {
      ++i;
    }
    if (i == size) {
      break;
    }
    const char c = data[i];
    if (c == '"') {
      state.in_string = true;
    } else if (c == '{' || c == '[') {
      ++state.depth;
    } else if (--state.depth == 0) {
      return i;
    }
    ++i;
  }
  return npos;
}

LineScan advance_line_scalar(State& state, std::string_view text) {
  const auto newline = text.find('\n');
  const auto close = advance_scalar(state, text.substr(0, newline));
  if (close != npos) {
    return {close, npos};
  }
  return {npos, newline == npos ? text.size() : newline};
}

#if defined(__SSE2__)

namespace {

// One bit per byte of a 16-byte block for each class of interesting byte.
struct BlockMasks {
  std::uint32_t quote;
  std::uint32_t backslash;
  std::uint32_t open;
  std::uint32_t close;
};

BlockMasks classify(const char* block) {
  const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block));
  auto equal = [&bytes](char c) {
    return static_cast<std::uint32_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(bytes, _mm_set1_epi8(c))));
  };
  return {equal('"'), equal('\\'), equal('{') | equal('['), equal('}') | equal(']')};
}

} // namespace

std::size_t advance(State& state, std::string_view text) {
  const char* data = text.data();
  const std::size_t size = text.size();
  // An escape left open by the previous piece swallows this piece's first byte.
  std::size_t skip = npos; // the offset of a byte a backslash escaped
  if (state.escaped && size > 0) {
    state.escaped = false;
    skip = 0;
  }
  std::size_t base = 0;
  for (; base + 16 <= size; base += 16) {
    const auto masks = classify(data + base);
    std::uint32_t pending = masks.quote | masks.backslash | masks.open | masks.close;
    while (pending != 0) {
      const auto bit = static_cast<unsigned>(__builtin_ctz(pending));
      pending &= pending - 1;
      const std::size_t offset = base + bit;
      if (offset == skip) {
        continue;
      }
      const std::uint32_t one = 1U << bit;
      if (state.in_string) {
        if ((masks.backslash & one) != 0) {
          skip = offset + 1;
        } else if ((masks.quote & one) != 0) {
          state.in_string = false;
        }
      } else if ((masks.quote & one) != 0) {
        state.in_string = true;
      } else if ((masks.open & one) != 0) {
        ++state.depth;
      } else if ((masks.close & one) != 0 && --state.depth == 0) {
        return offset;
      }
    }
  }
  // The last bytes (fewer than 16; never read past the text) go through the scalar machine, with an
  // escape that reaches across the block boundary handed over as its state.
  if (skip == base) {
    state.escaped = true;
  }
  const auto end = advance_scalar(state, text.substr(base));
  return end == npos ? npos : base + end;
}

namespace {

// One bit per byte of a 64-byte block for each class of byte advance_line looks at.
struct WideMasks {
  std::uint64_t quote = 0;
  std::uint64_t backslash = 0;
  std::uint64_t open = 0;
  std::uint64_t close = 0;
  std::uint64_t newline = 0;
};

WideMasks classify_wide(const char* block) {
  WideMasks masks;
  for (unsigned part = 0; part < 4; ++part) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 16 * part));
    // Setting bit 5 folds '[' onto '{' and ']' onto '}' (and nothing else onto either).
    const __m128i folded = _mm_or_si128(bytes, _mm_set1_epi8(0x20));
    auto bits = [part](__m128i in, char c) {
      const auto mask = static_cast<unsigned>(_mm_movemask_epi8(_mm_cmpeq_epi8(in, _mm_set1_epi8(c))));
      return static_cast<std::uint64_t>(mask) << (16 * part);
    };
    masks.quote |= bits(bytes, '"');
    masks.backslash |= bits(bytes, '\\');
    masks.newline |= bits(bytes, '\n');
    masks.open |= bits(folded, '{');
    masks.close |= bits(folded, '}');
  }
  return masks;
}

// Bit i set when an odd number of bits 0..i are set: inside a string at byte i, for quote bits.
std::uint64_t prefix_xor(std::uint64_t bits) {
  for (unsigned shift = 1; shift < 64; shift *= 2) {
    bits ^= bits << shift;
  }
  return bits;
}

constexpr std::size_t k_wide = 64;

} // namespace

LineScan advance_line(State& state, std::string_view text) {
  const std::size_t size = text.size();
  std::array<char, k_wide> last{}; // the final partial block, copied: nothing past the text is read
  for (std::size_t base = 0; base < size; base += k_wide) {
    const std::size_t count = std::min(k_wide, size - base);
    const char* block = text.data() + base;
    if (count < k_wide) {
      std::memcpy(last.data(), block, count);
      block = last.data();
    }
    const auto masks = classify_wide(block);
    const std::uint64_t valid = count == k_wide ? ~std::uint64_t{0} : (std::uint64_t{1} << count) - 1;
    const std::uint64_t newline = masks.newline & valid;
    const std::size_t length = newline != 0 ? static_cast<std::size_t>(__builtin_ctzll(newline)) : count;
    const std::uint64_t piece = length == k_wide ? ~std::uint64_t{0} : (std::uint64_t{1} << length) - 1;
    if (state.escaped || (masks.backslash & piece) != 0) {
      // Escapes are rare in reports: this block's piece goes through the scalar machine.
      if (const auto end = advance_scalar(state, text.substr(base, length)); end != npos) {
        return {base + end, npos};
      }
    } else {
      // No escapes: each quote toggles the string state, and brackets count where it is off.
      std::uint64_t inside = prefix_xor(masks.quote & piece);
      if (state.in_string) {
        inside = ~inside;
      }
      std::uint64_t brackets = (masks.open | masks.close) & piece & ~inside;
      while (brackets != 0) {
        const auto bit = static_cast<unsigned>(__builtin_ctzll(brackets));
        brackets &= brackets - 1;
        if (((masks.open >> bit) & 1U) != 0) {
          ++state.depth;
        } else if (--state.depth == 0) {
          state.in_string = false;
          return {base + bit, npos};
        }
      }
      if (length > 0) {
        state.in_string = ((inside >> (length - 1)) & 1U) != 0;
      }
    }
    if (newline != 0) {
      return {npos, base + length};
    }
  }
  return {npos, size};
}

bool vectorised() {
  return true;
}

#else

std::size_t advance(State& state, std::string_view text) {
  return advance_scalar(state, text);
}

LineScan advance_line(State& state, std::string_view text) {
  return advance_line_scalar(state, text);
}

bool vectorised() {
  return false;
}

#endif

} // namespace cudadiag::fleet::json_scan
