#pragma once
// Evidence: the machine-readable facts a finding or a self-test result shows, as a typed value that
// depends on no JSON library. A record is a set of named values kept in name order (a name appears
// once; setting it again replaces the value); a value is null, a boolean, a signed or unsigned
// integer, a floating-point number, a string, a list of values or a nested record. The report edge
// (report/evidence_json.hpp) renders it as JSON; everything else reads it through the accessors.
//
// Built at the call site the way it reads:
//   Evidence{{"path", step.path}, {"signal", step.signal}, {"copies", Evidence::List{a, b}}}
// where an empty std::optional is null and a std::vector or std::map becomes a list or a record.

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace cudadiag {

class EvidenceValue;
struct EvidenceField;

class Evidence {
public:
  using List = std::vector<EvidenceValue>;
  using Field = EvidenceField;

  Evidence() = default;
  Evidence(std::initializer_list<EvidenceField> fields);

  // Sets `name` (replacing its value) and returns this record, for chaining.
  Evidence& set(std::string_view name, EvidenceValue value);
  // The value named `name`, inserted as null when absent (for building nested values in place).
  EvidenceValue& operator[](std::string_view name);
  // Moves every field of `other` into this record (replacing those of the same name).
  void merge(const Evidence& other);
  void erase(std::string_view name);

  // The value named `name`; nullptr when absent.
  [[nodiscard]] const EvidenceValue* find(std::string_view name) const;
  // The value named `name`; throws std::out_of_range when absent.
  [[nodiscard]] const EvidenceValue& at(std::string_view name) const;
  [[nodiscard]] bool contains(std::string_view name) const { return find(name) != nullptr; }
  // The string named `name`, or nullptr when it is absent or not a string.
  [[nodiscard]] const std::string* string(std::string_view name) const;

  // Defined below EvidenceValue: a member of an incomplete type cannot be asked (clang).
  [[nodiscard]] bool empty() const;
  [[nodiscard]] std::size_t size() const;
  // The fields in name order.
  [[nodiscard]] const std::vector<std::pair<std::string, EvidenceValue>>& fields() const { return m_fields; }

  friend bool operator==(const Evidence& a, const Evidence& b);

private:
  std::vector<std::pair<std::string, EvidenceValue>> m_fields; // sorted by name, names unique
};

class EvidenceValue {
public:
  using List = Evidence::List;

  EvidenceValue() = default; // null
  EvidenceValue(std::nullptr_t) {}
  EvidenceValue(bool value) : m_value(value) {}
  template <class T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool> && !std::is_same_v<T, char>)
      EvidenceValue(T value) {
    if constexpr (std::is_signed_v<T>) {
      m_value = static_cast<std::int64_t>(value);
    } else {
      m_value = static_cast<std::uint64_t>(value);
    }
  }
  EvidenceValue(double value) : m_value(value) {}
  EvidenceValue(float value) : m_value(static_cast<double>(value)) {}
  EvidenceValue(std::string value) : m_value(std::move(value)) {}
  EvidenceValue(const char* value) : m_value(std::string(value)) {}
  EvidenceValue(std::string_view value) : m_value(std::string(value)) {}
  EvidenceValue(List value) : m_value(std::move(value)) {}
  EvidenceValue(Evidence value) : m_value(std::move(value)) {}
  EvidenceValue(std::initializer_list<EvidenceField> fields);
  template <class T> EvidenceValue(const std::optional<T>& value) {
    if (value) {
      *this = EvidenceValue(*value);
    }
  }
  template <class T>
  requires(!std::is_same_v<T, EvidenceValue>) EvidenceValue(const std::vector<T>& values)
      : m_value(List(values.begin(), values.end())) {}
  template <class T> EvidenceValue(const std::map<std::string, T>& values);

  [[nodiscard]] bool is_null() const { return std::holds_alternative<std::monostate>(m_value); }
  [[nodiscard]] bool is_number() const {
    return std::holds_alternative<std::int64_t>(m_value) || std::holds_alternative<std::uint64_t>(m_value) ||
           std::holds_alternative<double>(m_value);
  }
  // Typed reads: nullptr / nullopt when the value is of another kind.
  [[nodiscard]] const bool* boolean() const { return std::get_if<bool>(&m_value); }
  // An integer of either signedness that fits in int64_t.
  [[nodiscard]] std::optional<std::int64_t> integer() const;
  // Any number, as a double.
  [[nodiscard]] std::optional<double> number() const;
  [[nodiscard]] const std::string* string() const { return std::get_if<std::string>(&m_value); }
  [[nodiscard]] const List* list() const { return std::get_if<List>(&m_value); }
  [[nodiscard]] const Evidence* record() const { return std::get_if<Evidence>(&m_value); }
  // The field `name` of a record, or the item `index` of a list; throws std::out_of_range when this
  // is of another kind or has no such field or item.
  [[nodiscard]] const EvidenceValue& at(std::string_view name) const;
  [[nodiscard]] const EvidenceValue& at(std::size_t index) const;
  // The items of a list or the fields of a record; 0 for anything else.
  [[nodiscard]] std::size_t size() const;

  // Building in place: a null value becomes an empty record or list on first use.
  EvidenceValue& operator[](std::string_view name);
  void push_back(EvidenceValue value);

  // The alternatives, for renderers that visit every kind.
  using Variant =
      std::variant<std::monostate, bool, std::int64_t, std::uint64_t, double, std::string, List, Evidence>;
  [[nodiscard]] const Variant& variant() const { return m_value; }

  // Numbers compare by value across kinds (8 == 8U == 8.0), as the JSON they render to does.
  friend bool operator==(const EvidenceValue& a, const EvidenceValue& b);

private:
  Variant m_value;
};

struct EvidenceField {
  std::string name;
  EvidenceValue value;
};

inline bool Evidence::empty() const {
  return m_fields.empty();
}
inline std::size_t Evidence::size() const {
  return m_fields.size();
}

template <class T> EvidenceValue::EvidenceValue(const std::map<std::string, T>& values) {
  Evidence record;
  for (const auto& [name, value] : values) {
    record.set(name, EvidenceValue(value));
  }
  m_value = std::move(record);
}

} // namespace cudadiag
