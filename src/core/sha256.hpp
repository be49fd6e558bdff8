#pragma once
// SHA-256 (FIPS 180-4) over bytes or a file, and the digest as a wheel's RECORD writes it.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cudadiag {

using Sha256Digest = std::array<std::uint8_t, 32>;

// Incremental: update() any number of times, then finish() once.
class Sha256 {
public:
  Sha256();
  void update(std::string_view bytes);
  Sha256Digest finish();

private:
  void block(const std::uint8_t* data);
  std::array<std::uint32_t, 8> m_state{};
  std::array<std::uint8_t, 64> m_buffer{};
  std::size_t m_buffered = 0;
  std::uint64_t m_length = 0;
};

Sha256Digest sha256(std::string_view bytes);
// The digest of a file's content, read in pieces; nullopt when it cannot be opened or read.
std::optional<Sha256Digest> sha256_file(const std::string& path);
// The digest as lower-case hexadecimal (64 digits).
std::string sha256_hex(const Sha256Digest& digest);
// The digest as PEP 376 / PEP 627 RECORD files write it after "sha256=": URL-safe base64
// without padding (43 characters).
std::string sha256_record(const Sha256Digest& digest);

} // namespace cudadiag
