#pragma once
// The report as JUnit XML, for CI dashboards (GitLab, Jenkins, GitHub test reporters). Suites:
//   cudadiag.components  one testcase per component: failure when an error finding (a warning one
//                        under --fail-on warning) names it or its status is "error"; skipped
//                        when it was not found and nothing requires it; passed otherwise;
//   cudadiag.findings    one testcase per finding: errors fail; warnings fail under --fail-on
//                        warning and pass otherwise; info passes; the message and remedy are the body;
//   cudadiag.selftest    one testcase per self-test result (test and device): fail -> failure,
//                        error -> error, skip -> skipped with the reason; one skipped testcase
//                        when the self-test did not run;
//   cudadiag.policy      one testcase per requirement (only when the report carries a policy).
// Reads the report's JSON document; the output is UTF-8 XML 1.0 (characters XML forbids are
// written as the text \xNN).

#include "report/report.hpp"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace cudadiag::report {

// `text` escaped for XML character data and attribute values.
std::string xml_escape(std::string_view text);

} // namespace cudadiag::report
