// --exit-style: cudadiag's exit codes in node-problem-detector and Nagios terms, and the status line.
#include "report/exit_style.hpp"

#include <doctest/doctest.h>
#include <nlohmann/json.hpp>

using cudadiag::report::ExitStyle;
using cudadiag::report::styled_exit_code;

TEST_CASE("exit style: npd and nagios codes") {
  CHECK(cudadiag::report::parse_exit_style("npd") == ExitStyle::npd);
  CHECK_FALSE(cudadiag::report::parse_exit_style("NPD"));
  // cudadiag 0 / 1 / 2 usage / 3 internal
  CHECK(styled_exit_code(ExitStyle::npd, 0, 0, 3) == 0);
  CHECK(styled_exit_code(ExitStyle::npd, 1, 1, 0) == 1);
  CHECK(styled_exit_code(ExitStyle::npd, 2, 0, 0) == 2);
  CHECK(styled_exit_code(ExitStyle::npd, 3, 0, 0) == 2);
  CHECK(styled_exit_code(ExitStyle::nagios, 0, 0, 0) == 0);
  CHECK(styled_exit_code(ExitStyle::nagios, 0, 0, 2) == 1);
  CHECK(styled_exit_code(ExitStyle::nagios, 1, 1, 2) == 2);
  CHECK(styled_exit_code(ExitStyle::nagios, 1, 0, 2) == 2); // a warning under --fail-on warning
  CHECK(styled_exit_code(ExitStyle::nagios, 2, 0, 0) == 3);
  CHECK(styled_exit_code(ExitStyle::cudadiag, 3, 0, 0) == 3);
}

TEST_CASE("exit style: the status line names the findings") {
  const nlohmann::json report = {{"findings",
                                  {{{"id", "driver.init_failed"}, {"severity", "error"}},
                                   {{"id", "env.bad_search_path"}, {"severity", "warning"}}}},
                                 {"summary", {{"counts", {{"error", 1}, {"warning", 1}, {"info", 0}}}}},
                                 {"selftest", nullptr}};
  CHECK(cudadiag::report::status_line(ExitStyle::npd, report, 1) ==
        "cudadiag PROBLEM: 1 error (driver.init_failed); 1 warning (env.bad_search_path)\n");
  CHECK(cudadiag::report::status_line(ExitStyle::nagios, report, 2) ==
        "cudadiag CRITICAL: 1 error (driver.init_failed); 1 warning (env.bad_search_path) | errors=1 "
        "warnings=1\n");
  const nlohmann::json clean = {{"findings", nlohmann::json::array()},
                                {"summary", {{"counts", {{"error", 0}, {"warning", 0}}}}}};
  CHECK(cudadiag::report::status_line(ExitStyle::npd, clean, 0) == "cudadiag OK: no errors or warnings\n");
}

TEST_CASE("exit style: an id raised for several components is named once, with its components") {
  const nlohmann::json report = {
      {"findings",
       {{{"id", "lib.python_native_differ"}, {"severity", "warning"}, {"components", {"cudnn"}}},
        {{"id", "lib.python_native_differ"}, {"severity", "warning"}, {"components", {"nccl"}}},
        {{"id", "lib.python_native_differ"}, {"severity", "warning"}, {"components", {"cudnn"}}},
        {{"id", "env.bad_search_path"}, {"severity", "warning"}, {"components", nlohmann::json::array()}}}},
      {"summary", {{"counts", {{"error", 0}, {"warning", 4}, {"info", 0}}}}},
      {"selftest", nullptr}};
  CHECK(
      cudadiag::report::status_line(ExitStyle::nagios, report, 1) ==
      "cudadiag WARNING: 0 errors; 4 warnings (lib.python_native_differ: cudnn, nccl; env.bad_search_path) | "
      "errors=0 warnings=4\n");
}
