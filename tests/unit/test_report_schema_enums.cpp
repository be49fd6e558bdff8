// The report schema's enums are the registries' lists: a row added to a registry (a self-test, a
// repair class, a component kind, a version source) without its schema value, or a schema value
// no registry has, fails here.

#include "findings/repair.hpp"
#include "probes/catalog.hpp"
#include "selftest/selftest.hpp"
#include "versions/version_sources.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <string>
#include <vector>

namespace {

const nlohmann::json& report_schema() {
  static const nlohmann::json schema = [] {
    std::ifstream in(CUDADIAG_SOURCE_DIR "/docs/schema/report.schema.json");
    return nlohmann::json::parse(in);
  }();
  return schema;
}

// The schema's enum at `pointer`, its strings in order (a null, allowed where the field may be
// null, is left out).
std::vector<std::string> schema_enum(const char* pointer) {
  std::vector<std::string> values;
  for (const auto& value : report_schema().at(nlohmann::json::json_pointer(pointer))) {
    if (value.is_string()) {
      values.push_back(value.get<std::string>());
    }
  }
  return values;
}

template <typename Rows, typename Name> std::vector<std::string> registry_names(const Rows& rows, Name name) {
  std::vector<std::string> names;
  for (const auto& row : rows) {
    names.emplace_back(name(row));
  }
  return names;
}

} // namespace

TEST_CASE("schema enums: the self-test keys are the self-test table's, in its order") {
  CHECK(schema_enum("/properties/selftest/oneOf/1/properties/tests/items/properties/key/enum") ==
        registry_names(cudadiag::selftest::test_catalog(),
                       [](const cudadiag::selftest::TestInfo& test) { return test.key; }));
}

TEST_CASE("schema enums: the repair classes are the findings' repair table, least to most invasive") {
  CHECK(schema_enum("/$defs/finding/properties/repair/enum") ==
        registry_names(cudadiag::findings::k_repairs, [](cudadiag::findings::Repair repair) {
          return cudadiag::findings::to_string(repair);
        }));
}

TEST_CASE("schema enums: the component kinds are the catalog's") {
  CHECK(schema_enum("/$defs/component/properties/kind/enum") ==
        registry_names(cudadiag::probes::k_component_kinds, [](cudadiag::probes::ComponentKind kind) {
          return cudadiag::probes::to_string(kind);
        }));
}

TEST_CASE("schema enums: the version sources are the version readers'") {
  CHECK(schema_enum("/$defs/version_source/enum") ==
        registry_names(cudadiag::versions::k_version_sources, [](cudadiag::versions::VersionSource source) {
          return cudadiag::versions::to_string(source);
        }));
}
