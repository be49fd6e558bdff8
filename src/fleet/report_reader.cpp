#include "fleet/report_reader.hpp"

#include "core/bounded_json.hpp"
#include "core/json_fields.hpp"
#include "diff/report_input.hpp"
#include "report/json_report.hpp"

#include <array>
#include <string>

#if CUDADIAG_HAVE_SIMDJSON
#include <simdjson.h>
#endif

namespace cudadiag::fleet {
namespace {

using nlohmann::json;

// Members no fleet field reads (node_facts.cpp). Each is dropped wherever it occurs; `diff` of
// group representatives works on their whole text instead.
constexpr std::array<std::string_view, 22> k_pruned_keys = {
    "candidates",    "trace",         "also_found_as", "evidence",  "remedy",       "message",
    "description",   "details",       "environment",   "attributes", "stderr_tail", "trace_tail",
    "reason",        "search_dir",    "elf",           "realpath",  "path",         "soname",
    "version_source", "pathfinder_found_via", "metrics", "missing_symbols",
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
  case element_type::STRING:
    return std::string(std::string_view(element));
  case element_type::INT64:
    return std::int64_t(element);
  case element_type::UINT64:
    return std::uint64_t(element);
  case element_type::DOUBLE:
    return double(element);
  case element_type::BOOL:
    return bool(element);
  case element_type::NULL_VALUE:
    break;
  }
  return nullptr;
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

std::string_view parser_name() { return "simdjson"; }

namespace {

// One parser per thread: it keeps its buffers between documents. Like every reader of outside input
// it is bounded: as deep as diff::k_max_report_depth, as large as diff::k_max_input_bytes (simdjson
// parses without recursion and refuses numbers no double or 64-bit integer holds).
Expected<json> parse_padded(const char* data, std::size_t size) {
  thread_local simdjson::dom::parser parser(diff::k_max_input_bytes);
  thread_local const bool allocated =
      parser.allocate(std::size_t{1} << 20U, diff::k_max_report_depth) == simdjson::SUCCESS;
  if (!allocated) {
    return Error{"out of memory for the JSON parser"};
  }
  if (size > diff::k_max_input_bytes) {
    return Error{"larger than " + std::to_string(diff::k_max_input_bytes >> 20U) + " MiB: not a cudadiag report"};
  }
  simdjson::dom::element root;
  if (const auto error = parser.parse(data, size, false).get(root); error != simdjson::SUCCESS) {
    return Error{std::string("not JSON (") + simdjson::error_message(error) + ")"};
  }
  return checked(convert(root));
}

} // namespace

Expected<json> read_pruned_report(std::string_view text) {
  const simdjson::padded_string padded(text);
  return parse_padded(padded.data(), padded.size());
}

Expected<json> read_pruned_report_in_place(std::string& text) {
  if (text.capacity() - text.size() < simdjson::SIMDJSON_PADDING) {
    text.reserve(text.size() + simdjson::SIMDJSON_PADDING);
  }
  return parse_padded(text.data(), text.size());
}

#else

std::string_view parser_name() { return "nlohmann"; }

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

Expected<json> read_pruned_report_in_place(std::string& text) { return read_pruned_report(text); }

#endif

} // namespace cudadiag::fleet
