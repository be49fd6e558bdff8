// The fast JSON text writer: byte for byte what nlohmann's dump writes, for every kind of value.
#include "report/json_text.hpp"

#include <doctest/doctest.h>

#include <random>

using nlohmann::json;

namespace {

std::string reference(const json& value, int indent) {
  return value.dump(indent, ' ', false, json::error_handler_t::replace);
}

json every_kind() {
  json document = {
      {"plain", "/usr/local/cuda/lib64/libcudart.so.13"},
      {"quote and backslash", "say \"hi\" C:\\path"},
      {"controls", std::string("tab\tnewline\nbell\x07nul\0end", 24)},
      {"utf8", "caf\xc3\xa9 \xf0\x9f\x98\x80"},
      {"invalid utf8", "/a\xff" "b\xc3"},
      {"del", "x\x7fy"},
      {"empty string", ""},
      {"integers", {0, -1, 42, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()}},
      {"unsigned", std::numeric_limits<std::uint64_t>::max()},
      {"floats", {0.0, -0.0, 1.5, 1e20, 1e-7, 3.141592653589793, 100.0}},
      {"not finite", {std::numeric_limits<double>::infinity(), std::numeric_limits<double>::quiet_NaN()}},
      {"booleans", {true, false}},
      {"null", nullptr},
      {"empty object", json::object()},
      {"empty array", json::array()},
      {"nested", {{"a", {{"b", json::array({json::object(), json::array(), 1})}}}}},
  };
  document["key \"quoted\"\n\xff"] = "value";
  return document;
}

} // namespace

TEST_CASE("json text: every kind of value is written as nlohmann writes it, at every indent") {
  const auto document = every_kind();
  for (const int indent : {-1, 0, 1, 2, 4}) {
    CAPTURE(indent);
    CHECK(cudadiag::report::dump_json(document, indent) == reference(document, indent));
  }
  for (const auto& scalar : {json(nullptr), json(true), json(7), json(-7), json(2.5), json("s"), json::object(), json::array()}) {
    CHECK(cudadiag::report::dump_json(scalar, 2) == reference(scalar, 2));
  }
}

TEST_CASE("json text: random documents of random bytes match nlohmann's text") {
  std::mt19937 random(12345);
  const auto random_string = [&] {
    std::string text(random() % 12, ' ');
    for (auto& c : text) {
      c = static_cast<char>(random() % 4 == 0 ? random() % 256 : 'a' + random() % 26);
    }
    return text;
  };
  for (int round = 0; round < 200; ++round) {
    json document = json::object();
    for (int member = 0; member < 8; ++member) {
      switch (random() % 5) {
      case 0: document[random_string()] = random_string(); break;
      case 1: document[random_string()] = static_cast<std::int64_t>(random()) - 1000000; break;
      case 2: document[random_string()] = json::array({random_string(), static_cast<double>(random()) / 7.0}); break;
      case 3: document[random_string()] = {{random_string(), random() % 2 == 0}}; break;
      default: document[random_string()] = nullptr; break;
      }
    }
    CHECK(cudadiag::report::dump_json(document, 2) == reference(document, 2));
  }
}
