// PEP 440 versions and specifiers, PEP 508 markers: the cases framework pins use, and hostile input.
// (tests/cli/test_pep440_oracle.py compares both with Python's packaging on generated cases.)
#include "python/pep440.hpp"
#include "python/pep508.hpp"

#include <doctest/doctest.h>

#include <string>

using cudadiag::python::evaluate_marker;
using cudadiag::python::MarkerEnvironment;
using cudadiag::python::parse_specifiers;
using cudadiag::python::parse_version;
using cudadiag::python::satisfies;

namespace {
bool pep440_holds(const std::string& version, const std::string& spec) {
  const auto specifiers = parse_specifiers(spec);
  REQUIRE(specifiers.has_value());
  return satisfies(version, *specifiers);
}
} // namespace

TEST_CASE("pep440: versions normalise and order as PEP 440 says") {
  CHECK(parse_version("v1.0-1")->to_string() == "1.0.post1");
  CHECK(parse_version("1.0ALPHA2")->to_string() == "1.0a2");
  CHECK(parse_version("2.11.0+CU130")->to_string() == "2.11.0+cu130");
  CHECK_FALSE(parse_version("13.0.88-1ubuntu").has_value());
  CHECK_FALSE(parse_version("99999999999999999999999").has_value()); // beyond 18 digits: refused, not wrapped
  CHECK(*parse_version("1.0.dev0") < *parse_version("1.0a1"));
  CHECK(*parse_version("1.0rc1") < *parse_version("1.0"));
  CHECK(*parse_version("1.0") < *parse_version("1.0.post1"));
  CHECK(*parse_version("1.0") == *parse_version("1.0.0"));
  CHECK(*parse_version("1.0+abc") < *parse_version("1.0+1"));
}

TEST_CASE("pep440: the pins frameworks write") {
  CHECK(pep440_holds("13.2.86", "==13.2.86.*"));
  CHECK(pep440_holds("13.2.86.3", "==13.2.86.*"));
  CHECK_FALSE(pep440_holds("13.2.87", "==13.2.86.*"));
  CHECK(pep440_holds("2.11.0+cu130", "==2.11.0"));
  CHECK(pep440_holds("3.9.5", "~=3.9.0"));
  CHECK_FALSE(pep440_holds("3.10.0", "~=3.9.0"));
  CHECK_FALSE(pep440_holds("13.0.0rc1", "<13"));
  CHECK(pep440_holds("12.9.86", ">=12.0, <13"));
  CHECK(pep440_holds("anything", ""));
  CHECK_FALSE(parse_specifiers("~=3").has_value());
  CHECK_FALSE(parse_specifiers(">=1.0.*").has_value());
  CHECK_FALSE(parse_specifiers("=>1.0").has_value());
}

TEST_CASE("pep508: markers evaluate as packaging evaluates them, and bad ones are errors") {
  const MarkerEnvironment linux = {{"python_version", "3.12"},
                                   {"sys_platform", "linux"},
                                   {"platform_machine", "x86_64"},
                                   {"extra", "CUDA_13"}};
  CHECK(*evaluate_marker("python_version >= '3.10' and sys_platform == 'linux'", linux));
  CHECK(*evaluate_marker("extra == 'cuda-13'", linux)); // PEP 685 names
  CHECK_FALSE(*evaluate_marker("platform_machine == 'aarch64' or (python_version < '3.9')", linux));
  CHECK(*evaluate_marker("'86' in platform_machine", linux));
  CHECK_FALSE(evaluate_marker("sys_platform ~= 'linux'", linux).has_value());
  CHECK_FALSE(evaluate_marker("python_version >=", linux).has_value());
  CHECK_FALSE(evaluate_marker("os_name == 'posix'", linux).has_value()); // not in the environment
  std::string deep;
  for (int i = 0; i < 100000; ++i) {
    deep += '(';
  }
  const auto refused = evaluate_marker(deep + "python_version == '3.12'", linux);
  REQUIRE_FALSE(refused.has_value());
  CHECK(refused.error().message.find("nested deeper than 64") != std::string::npos);
}
