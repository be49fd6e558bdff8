// SHA-256 against FIPS 180-4's examples, across block boundaries, over a file, and as a RECORD
// writes it.
#include "core/sha256.hpp"
#include "temp_tree.hpp"

#include <doctest/doctest.h>

#include <string>

using cudadiag::sha256;
using cudadiag::sha256_file;
using cudadiag::sha256_hex;
using cudadiag::sha256_record;

TEST_CASE("sha256: the standard's examples") {
  CHECK(sha256_hex(sha256("")) == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex(sha256("abc")) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(sha256_hex(sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")) ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(sha256(std::string(1000000, 'a'))) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("sha256: pieces of any size give the digest of the whole") {
  std::string text;
  for (int i = 0; i < 300; ++i) {
    text += static_cast<char>('a' + i % 26);
  }
  for (const std::size_t piece : {std::size_t{1}, std::size_t{7}, std::size_t{55}, std::size_t{56},
                                  std::size_t{63}, std::size_t{64}, std::size_t{65}, std::size_t{128}}) {
    cudadiag::Sha256 hasher;
    for (std::size_t at = 0; at < text.size(); at += piece) {
      hasher.update(std::string_view(text).substr(at, piece));
    }
    CHECK(hasher.finish() == sha256(text));
  }
}

TEST_CASE("sha256: a file's digest, and the RECORD encoding") {
  cudadiag::testing::TempTree tree;
  const auto path = tree.write("lib/libx.so.1", "abc");
  const auto digest = sha256_file(path);
  REQUIRE(digest.has_value());
  CHECK(*digest == sha256("abc"));
  CHECK_FALSE(sha256_file(tree.path("missing.so")).has_value());
  // pip writes sha256=<urlsafe base64 without padding>, 43 characters.
  CHECK(sha256_record(sha256("abc")) == "ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0");
  CHECK(sha256_record(sha256("")) == "47DEQpj8HBSa-_TImW-5JCeuQeRkm5NMpJWZG3hSuFU");
}
