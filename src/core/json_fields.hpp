#pragma once
// Null-tolerant reads of JSON objects produced by probes. nlohmann's value() throws when a key
// holds null or another type; probe results use null for "unknown", so readers go through these.

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace cudadiag::json_fields {

// object[key] when object is an object and the value is a string; else `fallback`.
inline std::string string_or(const nlohmann::json& object, std::string_view key, std::string fallback = {}) {
  if (object.is_object()) {
    const auto it = object.find(key);
    if (it != object.end() && it->is_string()) {
      return it->get<std::string>();
    }
  }
  return fallback;
}

// object[key] when it is an integer; else nullopt.
inline std::optional<std::int64_t> integer(const nlohmann::json& object, std::string_view key) {
  if (object.is_object()) {
    const auto it = object.find(key);
    if (it != object.end() && it->is_number_integer()) {
      return it->get<std::int64_t>();
    }
  }
  return std::nullopt;
}

// object[key] when it is a boolean; else `fallback`.
inline bool bool_or(const nlohmann::json& object, std::string_view key, bool fallback) {
  if (object.is_object()) {
    const auto it = object.find(key);
    if (it != object.end() && it->is_boolean()) {
      return it->get<bool>();
    }
  }
  return fallback;
}

} // namespace cudadiag::json_fields
