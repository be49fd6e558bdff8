// Requirement specs: the grammar, the errors that name the bad token, and version precision.
#include "policy/requirement.hpp"

#include <doctest/doctest.h>

#include <cmath>

using namespace cudadiag::policy;

TEST_CASE("requirement: the forms of the grammar") {
  auto nvrtc = parse_requirement(" nvrtc >= 12.4 ");
  REQUIRE(nvrtc);
  CHECK(nvrtc->text == "nvrtc >= 12.4");
  CHECK(nvrtc->subject == Subject::component);
  CHECK(nvrtc->name == "nvrtc");
  CHECK(nvrtc->op == Op::ge);
  CHECK(nvrtc->value == "12.4");

  auto cccl = parse_requirement("cccl");
  REQUIRE(cccl);
  CHECK_FALSE(cccl->op);

  CHECK(parse_requirement("driver>=580")->subject == Subject::driver);
  CHECK(parse_requirement("driver.cuda>=13.0")->subject == Subject::driver_cuda);
  CHECK(parse_requirement("nvJitLink=13.0")->op == Op::eq);

  auto sort = parse_requirement("selftest.sort>=30Gkeys");
  REQUIRE(sort);
  CHECK(sort->subject == Subject::selftest_test);
  CHECK(sort->name == "sort");
  CHECK(sort->metric.empty());
  CHECK(sort->value == "30");
  CHECK(sort->unit == "Gkeys");

  auto metric = parse_requirement("selftest.sort.u64_gkeys_per_s>=10");
  REQUIRE(metric);
  CHECK(metric->metric == "u64_gkeys_per_s");
  CHECK(metric->unit.empty());

  CHECK(parse_requirement("selftest.reduce >= 4000 GB/s")->unit == "GB/s");
  CHECK(parse_requirement("selftest")->subject == Subject::selftest);
  CHECK(parse_requirement("selftest.ipc")->subject == Subject::selftest_test);
  CHECK(parse_requirement("selftest.score>=80")->subject == Subject::selftest_score);

  auto none = parse_requirement("no-errors");
  REQUIRE(none);
  CHECK(none->subject == Subject::findings);
  CHECK(none->name == "error");
  CHECK(none->op == Op::eq);
  CHECK(parse_requirement("findings.warning<=3")->value == "3");
}

TEST_CASE("requirement: malformed specs are errors naming the bad token") {
  const std::pair<const char*, const char*> cases[] = {
      {"", "empty requirement"},
      {"nvrtcc>=12.4", "unknown component 'nvrtcc'"},
      {"nvrtc>>12", "'>12' is not a value"},
      {"nvrtc>=twelve", "'twelve' is not a version"},
      {"nvrtc>=", "nothing after '>='"},
      {">=12", "nothing before the operator"},
      {"nv rtc>=12", "'nv rtc' is not a name"},
      {"nvrtc=>12", "'>12' is not a value"},
      {"selftest.sortt>=30", "unknown self-test 'sortt'"},
      {"selftest.sort>=30Gbananas", "unknown unit 'Gbananas'"},
      {"selftest.sort>=fast", "'fast' is not a number"},
      {"selftest>=1", "'selftest' takes no comparison"},
      {"selftest.score", "needs a comparison"},
      {"findings.fatal==0", "unknown severity 'fatal'"},
      {"findings.error==none", "'none' is not a count"},
  };
  for (const auto& [spec, expected] : cases) {
    const auto parsed = parse_requirement(spec);
    REQUIRE_FALSE_MESSAGE(parsed, spec);
    CHECK_MESSAGE(parsed.error().message.find(expected) != std::string::npos,
                  spec << " -> " << parsed.error().message);
  }
}

TEST_CASE("requirement: versions compare at the precision written") {
  CHECK(version_satisfies("13.0.88", Op::ge, "12.4"));
  CHECK(version_satisfies("12.4.127", Op::ge, "12.4"));
  CHECK_FALSE(version_satisfies("12.3.107", Op::ge, "12.4"));
  CHECK(version_satisfies("13.0.88", Op::eq, "13.0"));
  CHECK(version_satisfies("13.0.88", Op::eq, "13"));
  CHECK_FALSE(version_satisfies("12.4.1", Op::gt, "12.4"));
  CHECK(version_satisfies("580.159.04", Op::ge, "580"));
  CHECK_FALSE(version_satisfies("575.51.03", Op::ge, "580"));
  CHECK(version_satisfies("12.9", Op::lt, "13"));
  CHECK(version_satisfies("12.9", Op::ne, "13"));
  CHECK(version_satisfies("13.1", Op::le, "13.1.5")); // 13.1 counts as 13.1.0
}

TEST_CASE("requirement: units match with or without /s, in any case") {
  CHECK(same_unit("Gkeys/s", "Gkeys"));
  CHECK(same_unit("GB/s", "gb/s"));
  CHECK_FALSE(same_unit("GB/s", "Gkeys"));
  CHECK(number_satisfies(42.4, Op::ge, 30));
  CHECK_FALSE(number_satisfies(std::nan(""), Op::ne, 1));
}
