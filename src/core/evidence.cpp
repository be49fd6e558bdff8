#include "core/evidence.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace cudadiag {
namespace {

using Fields = std::vector<std::pair<std::string, EvidenceValue>>;

Fields::const_iterator lower_bound(const Fields& fields, std::string_view name) {
  return std::lower_bound(fields.begin(), fields.end(), name,
                          [](const auto& field, std::string_view key) { return field.first < key; });
}

} // namespace

Evidence::Evidence(std::initializer_list<EvidenceField> fields) {
  for (const auto& field : fields) {
    // The first of two equal names wins, as in a JSON object built from the same list.
    if (!contains(field.name)) {
      set(field.name, field.value);
    }
  }
}

Evidence& Evidence::set(std::string_view name, EvidenceValue value) {
  (*this)[name] = std::move(value);
  return *this;
}

EvidenceValue& Evidence::operator[](std::string_view name) {
  const auto at = lower_bound(m_fields, name);
  const auto index = static_cast<std::size_t>(at - m_fields.cbegin());
  if (at == m_fields.cend() || at->first != name) {
    m_fields.emplace(m_fields.begin() + static_cast<std::ptrdiff_t>(index), std::string(name),
                     EvidenceValue());
  }
  return m_fields[index].second;
}

void Evidence::merge(const Evidence& other) {
  for (const auto& [name, value] : other.m_fields) {
    set(name, value);
  }
}

void Evidence::erase(std::string_view name) {
  const auto at = lower_bound(m_fields, name);
  if (at != m_fields.cend() && at->first == name) {
    m_fields.erase(at);
  }
}

const EvidenceValue* Evidence::find(std::string_view name) const {
  const auto at = lower_bound(m_fields, name);
  return at != m_fields.cend() && at->first == name ? &at->second : nullptr;
}

const EvidenceValue& Evidence::at(std::string_view name) const {
  const auto* value = find(name);
  if (value == nullptr) {
    throw std::out_of_range("evidence has no field '" + std::string(name) + "'");
  }
  return *value;
}

const std::string* Evidence::string(std::string_view name) const {
  const auto* value = find(name);
  return value != nullptr ? value->string() : nullptr;
}

bool operator==(const Evidence& a, const Evidence& b) {
  return a.m_fields == b.m_fields;
}

EvidenceValue::EvidenceValue(std::initializer_list<EvidenceField> fields) : m_value(Evidence(fields)) {}

std::optional<std::int64_t> EvidenceValue::integer() const {
  if (const auto* value = std::get_if<std::int64_t>(&m_value)) {
    return *value;
  }
  if (const auto* value = std::get_if<std::uint64_t>(&m_value);
      value != nullptr && *value <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) {
    return static_cast<std::int64_t>(*value);
  }
  return std::nullopt;
}

std::optional<double> EvidenceValue::number() const {
  if (const auto* value = std::get_if<std::int64_t>(&m_value)) {
    return static_cast<double>(*value);
  }
  if (const auto* value = std::get_if<std::uint64_t>(&m_value)) {
    return static_cast<double>(*value);
  }
  if (const auto* value = std::get_if<double>(&m_value)) {
    return *value;
  }
  return std::nullopt;
}

const EvidenceValue& EvidenceValue::at(std::string_view name) const {
  const auto* fields = record();
  if (fields == nullptr) {
    throw std::out_of_range("evidence value is not a record (looking for '" + std::string(name) + "')");
  }
  return fields->at(name);
}

const EvidenceValue& EvidenceValue::at(std::size_t index) const {
  const auto* items = list();
  if (items == nullptr || index >= items->size()) {
    throw std::out_of_range("evidence value has no item " + std::to_string(index));
  }
  return (*items)[index];
}

std::size_t EvidenceValue::size() const {
  if (const auto* items = list()) {
    return items->size();
  }
  if (const auto* fields = record()) {
    return fields->size();
  }
  return 0;
}

EvidenceValue& EvidenceValue::operator[](std::string_view name) {
  if (is_null()) {
    m_value = Evidence();
  }
  auto* fields = std::get_if<Evidence>(&m_value);
  if (fields == nullptr) {
    throw std::logic_error("evidence value is not a record (setting '" + std::string(name) + "')");
  }
  return (*fields)[name];
}

void EvidenceValue::push_back(EvidenceValue value) {
  if (is_null()) {
    m_value = List();
  }
  auto* items = std::get_if<List>(&m_value);
  if (items == nullptr) {
    throw std::logic_error("evidence value is not a list");
  }
  items->push_back(std::move(value));
}

bool operator==(const EvidenceValue& a, const EvidenceValue& b) {
  const bool a_number = a.is_number();
  const bool b_number = b.is_number();
  if (a_number || b_number) {
    if (!a_number || !b_number) {
      return false;
    }
    const bool a_float = std::holds_alternative<double>(a.m_value);
    const bool b_float = std::holds_alternative<double>(b.m_value);
    if (a_float || b_float) {
      return *a.number() == *b.number();
    }
    // Two integers: unsigned values beyond int64_t compare only with each other.
    if (a.integer() && b.integer()) {
      return *a.integer() == *b.integer();
    }
    return a.m_value == b.m_value;
  }
  return a.m_value == b.m_value;
}

} // namespace cudadiag
