#include "core/text.hpp"

#include <doctest/doctest.h>

#include <string>

using namespace cudadiag;

TEST_CASE("text: hex_number is lower-case with a 0x prefix") {
  CHECK(hex_number(0) == "0x0");
  CHECK(hex_number(31) == "0x1f");
}

TEST_CASE("text: hex_encode and hex_decode round-trip any bytes") {
  std::string bytes;
  for (int value = 0; value < 256; ++value) {
    bytes += static_cast<char>(value);
  }
  const auto text = hex_encode(bytes);
  CHECK(text.size() == 512);
  CHECK(text.substr(0, 6) == "000102");
  CHECK(text.substr(text.size() - 2) == "ff");
  CHECK(hex_decode(text) == bytes);
  CHECK(hex_decode("ABcd") == std::string("\xab\xcd"));
  CHECK(hex_decode("") == std::string());
}

TEST_CASE("text: hex_decode refuses odd lengths and non-digits") {
  CHECK_FALSE(hex_decode("abc"));
  CHECK_FALSE(hex_decode("zz"));
  CHECK_FALSE(hex_decode("0g"));
}
