#include "fleet/report_reader.hpp"

#include "core/bounded_json.hpp"
#include "core/json_fields.hpp"
#include "diff/report_input.hpp"
#include "fleet/node_facts.hpp"
#include "report/json_report.hpp"

#include <algorithm>
#include <array>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#if CUDADIAG_HAVE_SIMDJSON
#include <simdjson.h>
#endif

namespace cudadiag::fleet {
namespace {

using nlohmann::json;

// Members no fleet field reads (node_facts.cpp). Each is dropped wherever it occurs; `diff` of
// group representatives works on their whole text instead.
constexpr std::array<std::string_view, 22> k_pruned_keys = {
    "candidates",
    "trace",
    "also_found_as",
    "evidence",
    "remedy",
    "message",
    "description",
    "details",
    "environment",
    "attributes",
    "stderr_tail",
    "trace_tail",
    "reason",
    "search_dir",
    "elf",
    "realpath",
    "path",
    "soname",
    "version_source",
    "pathfinder_found_via",
    "metrics",
    "missing_symbols",
};

Expected<json> checked(json document) {
  const auto version = json_fields::integer(document, "schema_version");
  const bool ours = document.is_object() && document.contains("tool") &&
                    json_fields::string_or(document["tool"], "name") == "cudadiag";
  if (!version || !ours) {
    return Error{"JSON but not a cudadiag report (it lacks schema_version and tool.name \"cudadiag\")"};
  }
  if (*version != report::k_schema_version) {
    return Error{"a report of schema_version " + std::to_string(*version) + "; this cudadiag (" +
                 CUDADIAG_VERSION + ") reads schema_version " + std::to_string(report::k_schema_version)};
  }
  return document;
}

// The members read_fleet_fields keeps, as a tree of keys (see node_facts_fields()). The member
// type is named (not a std::pair) because a pair of an incomplete type is ill-formed, which clang
// with libstdc++ refuses.
struct FieldMember;
struct FieldTree {
  bool whole = false; // a path ends here: the value is kept whole (pruned)
  std::vector<FieldMember> members;

  [[nodiscard]] const FieldTree* find(std::string_view key) const;
  FieldTree& member(std::string_view key); // added when absent
};
struct FieldMember {
  std::string_view key;
  FieldTree tree;
};

const FieldTree* FieldTree::find(std::string_view key) const {
  for (const auto& member : members) {
    if (member.key == key) {
      return &member.tree;
    }
  }
  return nullptr;
}

FieldTree& FieldTree::member(std::string_view key) {
  for (auto& member : members) {
    if (member.key == key) {
      return member.tree;
    }
  }
  return members.emplace_back(FieldMember{key, FieldTree{}}).tree;
}

const FieldTree& fleet_fields() {
  static const FieldTree tree = [] {
    FieldTree root;
    auto add = [&root](std::string_view path) {
      FieldTree* node = &root;
      while (true) {
        const auto dot = path.find('.');
        const auto key = path.substr(0, dot);
        node = &node->member(key);
        if (dot == std::string_view::npos) {
          node->whole = true;
          return;
        }
        path.remove_prefix(dot + 1);
      }
    };
    for (const auto path : node_facts_fields()) {
      add(path);
    }
    add("schema_version"); // what checked() reads
    add("tool.name");
    return root;
  }();
  return tree;
}

#if CUDADIAG_HAVE_SIMDJSON

json convert(simdjson::dom::element element) {
  using simdjson::dom::element_type;
  switch (element.type()) {
  case element_type::OBJECT: {
    json out = json::object();
    for (const auto field : simdjson::dom::object(element)) {
      if (!is_pruned_key(field.key)) {
        out.emplace(std::string(field.key), convert(field.value));
      }
    }
    return out;
  }
  case element_type::ARRAY: {
    json out = json::array();
    for (const auto item : simdjson::dom::array(element)) {
      out.push_back(convert(item));
    }
    return out;
  }
  case element_type::STRING: return std::string(std::string_view(element));
  case element_type::INT64: return std::int64_t(element);
  case element_type::UINT64: return std::uint64_t(element);
  case element_type::DOUBLE: return double(element);
  case element_type::BOOL: return bool(element);
  case element_type::NULL_VALUE: break;
  }
  return nullptr;
}

// convert() of only the members of `tree` (select() without building the rest first).
json convert_selected(simdjson::dom::element element, const FieldTree& tree) {
  using simdjson::dom::element_type;
  if (tree.whole) {
    return convert(element);
  }
  if (element.type() == element_type::OBJECT) {
    json out = json::object();
    for (const auto field : simdjson::dom::object(element)) {
      if (const auto* member = tree.find(field.key); member != nullptr && !is_pruned_key(field.key)) {
        out.emplace(std::string(field.key), convert_selected(field.value, *member));
      }
    }
    return out;
  }
  if (element.type() == element_type::ARRAY) {
    json out = json::array();
    for (const auto item : simdjson::dom::array(element)) {
      out.push_back(convert_selected(item, tree));
    }
    return out;
  }
  return convert(element);
}

#endif

} // namespace

bool is_pruned_key(std::string_view key) {
  // Called for every key of every report: compare only against the names of the same length.
  static const auto lengths = [] {
    std::array<bool, 32> present{};
    for (const auto pruned : k_pruned_keys) {
      present[pruned.size()] = true;
    }
    return present;
  }();
  if (key.size() >= lengths.size() || !lengths[key.size()]) {
    return false;
  }
  for (const auto pruned : k_pruned_keys) {
    if (pruned.size() == key.size() && key == pruned) {
      return true;
    }
  }
  return false;
}

#if CUDADIAG_HAVE_SIMDJSON

std::string_view parser_name() {
  return "simdjson";
}

namespace {

// One parser per thread: it keeps its buffers between documents. Like every reader of outside input
// it is bounded: as deep as diff::k_max_report_depth, as large as diff::k_max_input_bytes (simdjson
// parses without recursion and refuses numbers no double or 64-bit integer holds).
Expected<json> parse_padded(const char* data, std::size_t size, const FieldTree* fields) {
  thread_local simdjson::dom::parser parser(diff::k_max_input_bytes);
  thread_local const bool allocated =
      parser.allocate(std::size_t{1} << 20U, diff::k_max_report_depth) == simdjson::SUCCESS;
  if (!allocated) {
    return Error{"out of memory for the JSON parser"};
  }
  if (size > diff::k_max_input_bytes) {
    return Error{"larger than " + std::to_string(diff::k_max_input_bytes >> 20U) +
                 " MiB: not a cudadiag report"};
  }
  simdjson::dom::element root;
  if (const auto error = parser.parse(data, size, false).get(root); error != simdjson::SUCCESS) {
    return Error{std::string("not JSON (") + simdjson::error_message(error) + ")"};
  }
  return checked(fields != nullptr ? convert_selected(root, *fields) : convert(root));
}

Expected<json> parse_in_place(std::string& text, const FieldTree* fields) {
  if (text.capacity() - text.size() < simdjson::SIMDJSON_PADDING) {
    text.reserve(text.size() + simdjson::SIMDJSON_PADDING);
  }
  return parse_padded(text.data(), text.size(), fields);
}

} // namespace

Expected<json> read_pruned_report(std::string_view text) {
  const simdjson::padded_string padded(text);
  return parse_padded(padded.data(), padded.size(), nullptr);
}

Expected<json> read_pruned_report_in_place(std::string& text) {
  return parse_in_place(text, nullptr);
}

Expected<json> read_fleet_fields(std::string_view text) {
  const simdjson::padded_string padded(text);
  return parse_padded(padded.data(), padded.size(), &fleet_fields());
}

Expected<json> read_fleet_fields_in_place(std::string& text) {
  return parse_in_place(text, &fleet_fields());
}

#else

std::string_view parser_name() {
  return "nlohmann";
}

namespace {

// `document` (already pruned) with only the members of `tree`: objects keep the keys it names,
// arrays each item, scalars stay as they are.
json select(json document, const FieldTree& tree) {
  if (tree.whole) {
    return document;
  }
  if (document.is_object()) {
    json out = json::object();
    for (auto& [key, value] : document.items()) {
      if (const auto* member = tree.find(key)) {
        out.emplace(key, select(std::move(value), *member));
      }
    }
    return out;
  }
  if (document.is_array()) {
    for (auto& item : document) {
      item = select(std::move(item), tree);
    }
  }
  return document;
}

} // namespace

Expected<json> read_pruned_report(std::string_view text) {
  auto parsed = bounded_json::parse(text, {diff::k_max_report_depth, diff::k_max_input_bytes});
  if (auto* failure = std::get_if<bounded_json::Failure>(&parsed)) {
    return Error{"not JSON (" + failure->message() + ")"}; // the same words as the simdjson path
  }
  // Pruned after parsing (the bounded parser takes no callback): slower, and only the fallback.
  auto prune = [](auto& self, json& value) -> void {
    if (value.is_object()) {
      for (auto it = value.begin(); it != value.end();) {
        if (is_pruned_key(it.key())) {
          it = value.erase(it);
        } else {
          self(self, *it);
          ++it;
        }
      }
    } else if (value.is_array()) {
      for (auto& item : value) {
        self(self, item);
      }
    }
  };
  auto& document = std::get<json>(parsed);
  prune(prune, document);
  return checked(std::move(document));
}

Expected<json> read_pruned_report_in_place(std::string& text) {
  return read_pruned_report(text);
}

Expected<json> read_fleet_fields(std::string_view text) {
  auto pruned = read_pruned_report(text);
  if (!pruned) {
    return pruned;
  }
  return select(std::move(*pruned), fleet_fields());
}

Expected<json> read_fleet_fields_in_place(std::string& text) {
  return read_fleet_fields(text);
}

#endif

} // namespace cudadiag::fleet
