#include "core/sha256.hpp"

#include "core/read_record.hpp"
#include "core/system_root.hpp"
#include "core/text.hpp"
#include "core/unique_fd.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <vector>

namespace cudadiag {

namespace {

constexpr std::array<std::uint32_t, 64> k_rounds = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2};

constexpr std::uint32_t rotate_right(std::uint32_t value, int bits) {
  return (value >> bits) | (value << (32 - bits));
}

} // namespace

Sha256::Sha256()
    : m_state{0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
              0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19} {}

void Sha256::block(const std::uint8_t* data) {
  std::array<std::uint32_t, 64> w{};
  for (std::size_t i = 0; i < 16; ++i) {
    w[i] = (std::uint32_t{data[4 * i]} << 24) | (std::uint32_t{data[4 * i + 1]} << 16) |
           (std::uint32_t{data[4 * i + 2]} << 8) | std::uint32_t{data[4 * i + 3]};
  }
  for (std::size_t i = 16; i < 64; ++i) {
    const auto s0 = rotate_right(w[i - 15], 7) ^ rotate_right(w[i - 15], 18) ^ (w[i - 15] >> 3);
    const auto s1 = rotate_right(w[i - 2], 17) ^ rotate_right(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  auto [a, b, c, d, e, f, g, h] = m_state;
  for (std::size_t i = 0; i < 64; ++i) {
    const auto s1 = rotate_right(e, 6) ^ rotate_right(e, 11) ^ rotate_right(e, 25);
    const auto choose = (e & f) ^ (~e & g);
    const auto t1 = h + s1 + choose + k_rounds[i] + w[i];
    const auto s0 = rotate_right(a, 2) ^ rotate_right(a, 13) ^ rotate_right(a, 22);
    const auto majority = (a & b) ^ (a & c) ^ (b & c);
    const auto t2 = s0 + majority;
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  const std::array<std::uint32_t, 8> add = {a, b, c, d, e, f, g, h};
  for (std::size_t i = 0; i < 8; ++i) {
    m_state[i] += add[i];
  }
}

void Sha256::update(std::string_view bytes) {
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  std::size_t size = bytes.size();
  m_length += size;
  if (m_buffered > 0) {
    const auto take = std::min(size, 64 - m_buffered);
    std::copy(data, data + take, m_buffer.begin() + static_cast<std::ptrdiff_t>(m_buffered));
    m_buffered += take;
    data += take;
    size -= take;
    if (m_buffered < 64) {
      return;
    }
    block(m_buffer.data());
    m_buffered = 0;
  }
  for (; size >= 64; data += 64, size -= 64) {
    block(data);
  }
  std::copy(data, data + size, m_buffer.begin());
  m_buffered = size;
}

Sha256Digest Sha256::finish() {
  const std::uint64_t bits = m_length * 8;
  const std::string_view one("\x80", 1);
  update(one);
  const std::string zeros(64, '\0');
  update(std::string_view(zeros).substr(0, (m_buffered <= 56 ? 56 - m_buffered : 120 - m_buffered)));
  std::array<char, 8> length{};
  for (std::size_t i = 0; i < 8; ++i) {
    length[i] = static_cast<char>((bits >> (56 - 8 * i)) & 0xff);
  }
  update(std::string_view(length.data(), length.size()));
  Sha256Digest digest{};
  for (std::size_t i = 0; i < 8; ++i) {
    for (std::size_t j = 0; j < 4; ++j) {
      digest[4 * i + j] = static_cast<std::uint8_t>((m_state[i] >> (24 - 8 * j)) & 0xff);
    }
  }
  return digest;
}

Sha256Digest sha256(std::string_view bytes) {
  Sha256 hasher;
  hasher.update(bytes);
  return hasher.finish();
}

std::optional<Sha256Digest> sha256_file(const std::string& path) {
  fs::note_path(path);
  const UniqueFd fd(::open(fs::HostPath(path).c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    return std::nullopt;
  }
  Sha256 hasher;
  std::vector<char> buffer(std::size_t{1} << 20);
  for (;;) {
    const auto got = ::read(fd.get(), buffer.data(), buffer.size());
    if (got < 0 && errno == EINTR) {
      continue;
    }
    if (got < 0) {
      return std::nullopt;
    }
    if (got == 0) {
      return hasher.finish();
    }
    hasher.update(std::string_view(buffer.data(), static_cast<std::size_t>(got)));
  }
}

std::string sha256_hex(const Sha256Digest& digest) {
  return hex_encode(std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

std::string sha256_record(const Sha256Digest& digest) {
  static constexpr std::string_view k_alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  std::size_t i = 0;
  for (; i + 3 <= digest.size(); i += 3) {
    const std::uint32_t group =
        (std::uint32_t{digest[i]} << 16) | (std::uint32_t{digest[i + 1]} << 8) | digest[i + 2];
    for (int shift = 18; shift >= 0; shift -= 6) {
      out += k_alphabet[(group >> shift) & 63];
    }
  }
  // 32 bytes: two left over, three characters, no padding.
  const std::uint32_t group = (std::uint32_t{digest[i]} << 16) | (std::uint32_t{digest[i + 1]} << 8);
  out += k_alphabet[(group >> 18) & 63];
  out += k_alphabet[(group >> 12) & 63];
  out += k_alphabet[(group >> 6) & 63];
  return out;
}

} // namespace cudadiag
