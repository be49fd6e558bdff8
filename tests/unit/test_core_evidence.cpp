// Typed evidence: records kept in name order, optional as null, numbers equal across kinds, and
// the JSON edge rendering exactly what an nlohmann object built from the same fields dumps.
#include "core/evidence.hpp"
#include "core/evidence_json.hpp"

#include <doctest/doctest.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

using cudadiag::Evidence;
using cudadiag::EvidenceValue;

TEST_CASE("evidence records keep their fields in name order, one per name") {
  Evidence evidence{{"zeta", 1}, {"alpha", "a"}, {"mid", true}, {"alpha", "second"}};
  REQUIRE(evidence.size() == 3);
  CHECK(evidence.fields()[0].first == "alpha");
  CHECK(evidence.fields()[1].first == "mid");
  CHECK(evidence.fields()[2].first == "zeta");
  CHECK(evidence.at("alpha") == "a"); // the first of two equal names, as a JSON object built alike
  evidence.set("alpha", "replaced");
  CHECK(*evidence.string("alpha") == "replaced");
  evidence.erase("mid");
  CHECK_FALSE(evidence.contains("mid"));
  CHECK(evidence.find("nothing") == nullptr);
  CHECK_THROWS_AS((void)evidence.at("nothing"), std::out_of_range);
}

TEST_CASE("evidence values: optional as null, containers as lists and records, typed reads") {
  const std::optional<int> none;
  const std::optional<std::string> some = "x";
  const std::vector<std::string> names{"a", "b"};
  const std::map<std::string, std::string> paths{{"nvrtc", "/lib/libnvrtc.so"}};
  const Evidence evidence{{"none", none},
                          {"some", some},
                          {"names", names},
                          {"paths", paths},
                          {"nested", {{"inner", 2.5}}},
                          {"unsigned", std::uint64_t{1} << 63U},
                          {"minus", -3}};
  CHECK(evidence.at("none").is_null());
  CHECK(evidence.at("some") == "x");
  CHECK(evidence.at("names").size() == 2);
  CHECK(evidence.at("names").at(1) == "b");
  CHECK(evidence.at("paths").at("nvrtc") == "/lib/libnvrtc.so");
  CHECK(evidence.at("nested").at("inner").number() == 2.5);
  CHECK_FALSE(evidence.at("unsigned").integer().has_value()); // beyond int64_t
  CHECK(evidence.at("unsigned").is_number());
  CHECK(evidence.at("minus").integer() == -3);
  CHECK(evidence.at("some").integer() == std::nullopt);
  CHECK_THROWS_AS((void)evidence.at("names").at(2), std::out_of_range);
  CHECK_THROWS_AS((void)evidence.at("some").at("field"), std::out_of_range);
}

TEST_CASE("evidence numbers compare by value across signedness and floating point") {
  CHECK(EvidenceValue(8) == EvidenceValue(8U));
  CHECK(EvidenceValue(8) == EvidenceValue(8.0));
  CHECK_FALSE(EvidenceValue(8) == EvidenceValue("8"));
  CHECK_FALSE(EvidenceValue(true) == EvidenceValue(1));
  CHECK(EvidenceValue() == EvidenceValue(nullptr));
}

TEST_CASE("evidence builds in place: null becomes a record or a list on first use") {
  Evidence evidence;
  evidence["outer"]["inner"] = 1;
  evidence["items"].push_back("first");
  evidence["items"].push_back({{"k", false}});
  CHECK(evidence.at("outer").at("inner") == 1);
  CHECK(evidence.at("items").size() == 2);
  CHECK(evidence.at("items").at(1).at("k") == false);
  CHECK_THROWS_AS(evidence["items"]["field"], std::logic_error);
  Evidence more{{"outer", "replaced"}, {"added", 0}};
  evidence.merge(more);
  CHECK(evidence.at("outer") == "replaced");
  CHECK(evidence.at("added") == 0);
}

TEST_CASE("evidence renders as the JSON an nlohmann object of the same fields dumps, and reads back") {
  const Evidence evidence{{"path", "/usr/lib/libcuda.so.1"},
                          {"signal", std::optional<int>()},
                          {"copies", EvidenceValue::List{{{"version", "13.0"}, {"deleted", false}}, 7U}},
                          {"ratio", 0.25},
                          {"count", std::size_t{3}},
                          {"code", -1}};
  const nlohmann::json expected = {
      {"path", "/usr/lib/libcuda.so.1"},
      {"signal", nullptr},
      {"copies", nlohmann::json::array({{{"version", "13.0"}, {"deleted", false}}, 7U})},
      {"ratio", 0.25},
      {"count", std::size_t{3}},
      {"code", -1}};
  const auto rendered = cudadiag::evidence_to_json(evidence);
  CHECK(rendered.dump() == expected.dump());
  CHECK(rendered["count"].is_number_unsigned());
  CHECK(rendered["code"].is_number_integer());
  CHECK(cudadiag::evidence_from_json(rendered) == evidence);
  CHECK(cudadiag::evidence_from_json(nlohmann::json::array()).empty());
}
