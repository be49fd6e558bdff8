// gzip through zlib: round trips, concatenated members, and the refusals that protect diff.
#include "bundle/gzip.hpp"

#include <doctest/doctest.h>

#include <string>

using cudadiag::bundle::gzip_compress;
using cudadiag::bundle::gzip_decompress;
using cudadiag::bundle::looks_like_gzip;

TEST_CASE("gzip: compress then decompress gives the input back") {
  std::string data;
  for (int i = 0; i < 100000; ++i) {
    data += static_cast<char>(i * 7 % 251);
  }
  const auto packed = gzip_compress(data);
  REQUIRE(packed);
  CHECK(looks_like_gzip(*packed));
  const auto unpacked = gzip_decompress(*packed, data.size());
  REQUIRE(unpacked);
  CHECK(*unpacked == data);

  const auto empty = gzip_compress("");
  REQUIRE(empty);
  CHECK(gzip_decompress(*empty, 10).value().empty());
}

TEST_CASE("gzip: concatenated members decompress to the concatenation") {
  const auto first = gzip_compress("first ").value();
  const auto second = gzip_compress("second").value();
  CHECK(gzip_decompress(first + second, 100).value() == "first second");
}

TEST_CASE("gzip: bad magic, truncation, corruption and expansion beyond the limit are errors") {
  const auto packed = gzip_compress(std::string(100000, 'a')).value();
  CHECK(gzip_decompress("plain text", 100).error().message.find("bad magic") != std::string::npos);
  CHECK(gzip_decompress(packed.substr(0, packed.size() / 2), 1000000).error().message.find("truncated") !=
        std::string::npos);
  auto corrupt = packed;
  corrupt[12] = static_cast<char>(corrupt[12] ^ 0xff);
  CHECK_FALSE(gzip_decompress(corrupt, 1000000));
  CHECK(gzip_decompress(packed, 1000).error().message.find("expands beyond 1000") != std::string::npos);
}
