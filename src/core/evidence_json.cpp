#include "core/evidence_json.hpp"

namespace cudadiag {

using json = nlohmann::json;

json evidence_to_json(const Evidence& evidence) {
  json object = json::object();
  for (const auto& [name, value] : evidence.fields()) {
    object[name] = evidence_value_to_json(value);
  }
  return object;
}

json evidence_value_to_json(const EvidenceValue& value) {
  return std::visit(
      [](const auto& alternative) -> json {
        using T = std::decay_t<decltype(alternative)>;
        if constexpr (std::is_same_v<T, std::monostate>) {
          return nullptr;
        } else if constexpr (std::is_same_v<T, EvidenceValue::List>) {
          json array = json::array();
          for (const auto& item : alternative) {
            array.push_back(evidence_value_to_json(item));
          }
          return array;
        } else if constexpr (std::is_same_v<T, Evidence>) {
          return evidence_to_json(alternative);
        } else {
          return alternative;
        }
      },
      value.variant());
}

Evidence evidence_from_json(const json& object) {
  Evidence evidence;
  if (object.is_object()) {
    for (const auto& [name, value] : object.items()) {
      evidence.set(name, evidence_value_from_json(value));
    }
  }
  return evidence;
}

EvidenceValue evidence_value_from_json(const json& value) {
  switch (value.type()) {
  case json::value_t::boolean: return value.get<bool>();
  case json::value_t::number_integer: return value.get<std::int64_t>();
  case json::value_t::number_unsigned: return value.get<std::uint64_t>();
  case json::value_t::number_float: return value.get<double>();
  case json::value_t::string: return value.get_ref<const std::string&>();
  case json::value_t::object: return evidence_from_json(value);
  case json::value_t::array: {
    EvidenceValue::List items;
    items.reserve(value.size());
    for (const auto& item : value) {
      items.push_back(evidence_value_from_json(item));
    }
    return items;
  }
  case json::value_t::null:
  case json::value_t::binary:
  case json::value_t::discarded: break;
  }
  return nullptr;
}

} // namespace cudadiag
