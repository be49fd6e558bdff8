#pragma once
// Small text helpers shared by the readers, their trace lines and their error messages.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag {

// "0x1f" for 31: lower-case hexadecimal with a 0x prefix and no padding.
std::string hex_number(std::uint64_t value);

// Bytes as lower-case hexadecimal, two digits each (for binary data inside JSON messages).
std::string hex_encode(std::string_view bytes);
// The inverse; nullopt for an odd length or a character that is not a hexadecimal digit.
std::optional<std::string> hex_decode(std::string_view text);

// `text` without leading and trailing ASCII white space (space, \t, \n, \v, \f, \r).
std::string_view trim(std::string_view text);
// `text` with ASCII upper-case letters lowered; other bytes unchanged (no locale).
std::string to_lower(std::string_view text);
// The lines of `text`, split at '\n' (a '\r' stays); no empty last line for a final newline.
std::vector<std::string_view> split_lines(std::string_view text);
// The parts with `separator` between them ("a, b, c").
std::string join(const std::vector<std::string>& parts, std::string_view separator);
// A duration as a person writes it, to a tenth of a second: "10 s", "2.5 s", "0.1 s".
std::string seconds_text(std::chrono::milliseconds duration);
// The parts one after the other, in one allocation: for the trace lines a search writes by the
// thousand ("CUDA_HOME: /usr/local/cuda/lib64/libcudart.so.13 exists"), which `a + ": " + b + ...`
// built in one allocation per `+`.
template <class... Parts> std::string concat(const Parts&... parts) {
  const std::string_view views[] = {std::string_view(parts)...};
  std::size_t size = 0;
  for (const auto view : views) {
    size += view.size();
  }
  std::string out;
  out.reserve(size);
  for (const auto view : views) {
    out.append(view);
  }
  return out;
}

// Whether `text` is well-formed UTF-8 (no overlong forms, surrogates or code points past U+10FFFF).
bool is_valid_utf8(std::string_view text);
// `text` with control characters and bytes that are not part of well-formed UTF-8 written as \xNN:
// safe to put on one trace line.
std::string printable(std::string_view text);

} // namespace cudadiag
