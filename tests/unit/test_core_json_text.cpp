// The fast JSON text writer: byte for byte what nlohmann's dump writes, for every kind of value.
#include "core/json_text.hpp"

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
      {"invalid utf8", "/a\xff"
                       "b\xc3"},
      {"del", "x\x7fy"},
      {"empty string", ""},
      {"integers",
       {0, -1, 42, std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()}},
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
    CHECK(cudadiag::dump_json(document, indent) == reference(document, indent));
  }
  for (const auto& scalar :
       {json(nullptr), json(true), json(7), json(-7), json(2.5), json("s"), json::object(), json::array()}) {
    CHECK(cudadiag::dump_json(scalar, 2) == reference(scalar, 2));
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
      case 2:
        document[random_string()] = json::array({random_string(), static_cast<double>(random()) / 7.0});
        break;
      case 3: document[random_string()] = {{random_string(), random() % 2 == 0}}; break;
      default: document[random_string()] = nullptr; break;
      }
    }
    CHECK(cudadiag::dump_json(document, 2) == reference(document, 2));
  }
}

TEST_CASE("json text: a byte that needs escaping is found at every position of long strings") {
  // Strings are checked 16 and 8 bytes at a time: each special byte at each position of strings of
  // every length up to 80, against nlohmann's text.
  for (const char special : {'\0', '\x1f', ' ', '"', '\\', '\x7f', '\x80', '\xff', 'a'}) {
    for (std::size_t length = 1; length <= 80; ++length) {
      for (std::size_t at = 0; at < length; ++at) {
        std::string text(length, 'x');
        text[at] = special;
        const json document = {{"key", text}, {text, 1}};
        CAPTURE(length);
        CAPTURE(at);
        REQUIRE(cudadiag::dump_json(document, 2) == reference(document, 2));
      }
    }
  }
}

TEST_CASE("json text: lines nested deeper than the indentation kept at hand are indented in full") {
  json document = "leaf";
  for (int level = 0; level < 80; ++level) {
    document = json::array({document});
  }
  for (const int indent : {1, 2, 4}) {
    CAPTURE(indent);
    CHECK(cudadiag::dump_json(document, indent) == reference(document, indent));
  }
}

namespace {

// The every_kind() document written member by member through a JsonStream (keys in tree order).
void stream_tree(cudadiag::JsonStream& out, const json& node) {
  switch (node.type()) {
  case json::value_t::object:
    out.begin_object();
    for (const auto& [key, member] : node.items()) {
      out.key(key);
      stream_tree(out, member);
    }
    out.end_object();
    return;
  case json::value_t::array:
    out.array_of(node.size(),
                 [&](cudadiag::JsonStream& element, std::size_t i) { stream_tree(element, node[i]); });
    return;
  case json::value_t::null: out.null(); return;
  case json::value_t::boolean: out.boolean(node.get<bool>()); return;
  case json::value_t::number_integer: out.integer(node.get<std::int64_t>()); return;
  default: out.value(node); return; // strings (raw bytes) and the other numbers: as a tree
  }
}

} // namespace

TEST_CASE("json stream: a document written member by member is the tree's text, at every indent") {
  auto document = every_kind();
  json long_array = json::array();
  for (int i = 0; i < 40; ++i) { // long enough to be written on several threads
    long_array.push_back({{"index", i}, {"path", "/opt/lib" + std::to_string(i)}, {"empty", json::array()}});
  }
  document["long array"] = long_array;
  for (const int indent : {-1, 0, 2, 4}) {
    CAPTURE(indent);
    std::string text;
    cudadiag::JsonStream stream(text, indent);
    stream_tree(stream, document);
    CHECK(text == reference(document, indent));
  }
}

TEST_CASE("json stream: text is made valid UTF-8 the way the report spells it") {
  std::string text;
  cudadiag::JsonStream stream(text, -1);
  stream.begin_array();
  stream.text("/a\xff"
              "b");
  stream.optional_text(std::nullopt);
  stream.optional_text(std::string("caf\xc3\xa9"));
  stream.end_array();
  CHECK(text == "[\"/a\\\\xffb\",null,\"caf\xc3\xa9\"]");
}

TEST_CASE("json stream: members out of nlohmann's order and unbalanced documents are refused") {
  std::string text;
  cudadiag::JsonStream stream(text, 2);
  stream.begin_object();
  stream.key("b");
  stream.null();
  CHECK_THROWS_AS(stream.key("a"), std::logic_error);
  CHECK_THROWS_AS(stream.key("b"), std::logic_error); // a repeated key would be one member in a tree
  CHECK_THROWS_AS(stream.end_array(), std::logic_error);
  CHECK_THROWS_AS(stream.null(), std::logic_error); // a value without a key

  std::string element_text;
  cudadiag::JsonStream other(element_text, 2);
  CHECK_THROWS_AS(
      other.array_of(3, [](cudadiag::JsonStream& element, std::size_t) { element.begin_object(); }),
      std::logic_error);
}
