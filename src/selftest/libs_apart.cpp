#include "selftest/libs_apart.hpp"

#include "selftest/libs.hpp"

#include <algorithm>

namespace cudadiag::selftest {
namespace {

bool contains(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string string_field(const EvidenceValue& record, std::string_view key) {
  const auto* fields = record.record();
  const auto* text = fields != nullptr ? fields->string(key) : nullptr;
  return text != nullptr ? *text : std::string();
}

std::size_t library_index(const EvidenceValue& record) {
  const auto name = string_field(record, "library");
  const auto found = std::find(libs::k_libraries.begin(), libs::k_libraries.end(), name);
  return static_cast<std::size_t>(found - libs::k_libraries.begin());
}

// The result's library records; empty when it has none.
Evidence::List library_records(const TestResult& result) {
  const auto* records = result.details.find("libraries");
  return records != nullptr && records->list() != nullptr ? *records->list() : Evidence::List();
}

// The apart worker's library records; one made from the result itself when it has none.
Evidence::List apart_records(const TestResult& apart) {
  if (auto records = library_records(apart); !records.empty()) {
    return records;
  }
  const bool broken = apart.status == TestStatus::fail || apart.status == TestStatus::error;
  return {{{"library", k_library_checked_apart},
           {"status",
            std::string(libs::to_string(broken ? libs::LibraryStatus::fail : libs::LibraryStatus::skip))},
           {"reason", apart.reason.empty() ? EvidenceValue() : EvidenceValue(apart.reason)},
           {"ms", apart.wall_ms}}};
}

} // namespace

std::optional<WorkerConfig> split_libs_apart(WorkerConfig& config) {
  if (!config.device || !contains(config.tests, "libs") || !config.libs_checked.empty() ||
      !config.libraries.contains(std::string(k_library_checked_apart))) {
    return std::nullopt;
  }
  WorkerConfig apart = config;
  apart.tests = {"libs"};
  apart.libs_checked = {std::string(k_library_checked_apart)};
  for (const auto name : libs::k_libraries) {
    if (name != k_library_checked_apart) {
      config.libs_checked.emplace_back(name);
    }
  }
  return apart;
}

void merge_libs_apart(std::vector<TestResult>& results, const std::vector<TestResult>& apart) {
  const auto from =
      std::find_if(apart.begin(), apart.end(), [](const TestResult& r) { return r.key == "libs"; });
  const auto into =
      std::find_if(results.begin(), results.end(), [](const TestResult& r) { return r.key == "libs"; });
  if (from == apart.end() || into == results.end()) {
    return;
  }
  auto records = library_records(*into);
  for (auto record : apart_records(*from)) {
    if (record.record() != nullptr) {
      record["own_worker"] = true;
    }
    records.push_back(std::move(record));
  }
  std::stable_sort(records.begin(), records.end(), [](const EvidenceValue& a, const EvidenceValue& b) {
    return library_index(a) < library_index(b);
  });
  std::vector<libs::Outcome> outcomes;
  for (const auto& record : records) {
    outcomes.push_back(
        {string_field(record, "library"),
         libs::parse_library_status(string_field(record, "status")).value_or(libs::LibraryStatus::ok),
         string_field(record, "reason")});
  }
  into->details["libraries"] = std::move(records);
  // A main worker that broke before or in the test keeps its error; otherwise the verdict is new.
  if (into->status != TestStatus::error) {
    const auto verdict = libs::verdict(outcomes);
    into->status = verdict.status;
    into->reason = verdict.reason;
  }
  into->wall_ms = std::max(into->wall_ms, from->wall_ms);
}

} // namespace cudadiag::selftest
