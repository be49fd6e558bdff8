// The HTML page: self-contained, verdict first, every section present, and all text escaped.
#include "checks.hpp"
#include "core/filesystem.hpp"
#include "report/html_report.hpp"
#include "report/output_formats.hpp"

#include <doctest/doctest.h>

using cudadiag::testing::h200_example_report;

namespace {

using nlohmann::json;

} // namespace

TEST_CASE("html: a self-contained page whose first content is the verdict") {
  const auto html = cudadiag::report::render_html(h200_example_report());
  CHECK(html.rfind("<!DOCTYPE html>", 0) == 0);
  const auto body = html.find("<body>");
  REQUIRE(body != std::string::npos);
  CHECK(html.find("<section class=\"verdict verdict-warning\"", body) == body + 7);
  CHECK(html.find("WARNING") < html.find("id=\"components\""));
  for (const char* section :
       {"id=\"components\"", "id=\"devices\"", "id=\"findings\"", "id=\"selftest\"", "id=\"environment\""}) {
    CHECK_MESSAGE(html.find(section) != std::string::npos, section);
  }
  // Nothing is fetched from anywhere: no scripts, no external stylesheets, images or fonts.
  for (const char* external :
       {"<script", "<link", "<img", "src=", "url(", "@import", "http://", "https://"}) {
    CHECK_MESSAGE(html.find(external) == std::string::npos, external);
  }
  CHECK(html.find("NVIDIA H200") != std::string::npos);
  CHECK(html.find("580.159.04 (NVML), CUDA 13.0; cuInit: CUDA_SUCCESS") != std::string::npos);
  CHECK(html.find("Remedy:") != std::string::npos);
  // Every warning is linked from the verdict to its finding.
  CHECK(html.find("<a href=\"#finding-") != std::string::npos);
}

TEST_CASE("html: text from the report cannot inject markup") {
  auto report = h200_example_report();
  report["findings"][0]["message"] = "<script>alert(1)</script> & \"quotes\"";
  report["summary"]["status"] = "error";
  const auto html = cudadiag::report::render_html(report);
  CHECK(html.find("<script>") == std::string::npos);
  CHECK(html.find("&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quotes&quot;") != std::string::npos);
  CHECK(html.find("verdict-error") != std::string::npos);
  CHECK(cudadiag::report::html_escape(std::string("a\x01z", 3)) == "a\xef\xbf\xbdz");
}

TEST_CASE("html: the self-test and policy sections show their figures and results") {
  auto report = h200_example_report();
  report["selftest"] = {{"ran", true},
                        {"status", "pass"},
                        {"level", "quick"},
                        {"wall_ms", 812},
                        {"score", {{"value", 97.1}, {"correctness_passed", true}}},
                        {"tests",
                         {{{"key", "sort"},
                           {"device", 0},
                           {"status", "pass"},
                           {"primary", {{"name", "u32_gkeys_per_s"}, {"value", 42.4}, {"unit", "Gkeys/s"}}},
                           {"metrics",
                            {{{"name", "u32_gkeys_per_s"}, {"value", 42.4}, {"unit", "Gkeys/s"}},
                             {{"name", "u64_gkeys_per_s"}, {"value", 16.3}, {"unit", "Gkeys/s"}}}}}}}};
  report["policy"] = {
      {"requirements", {{{"spec", "driver>=590"}, {"met", false}, {"detail", "580.159.04"}}}}};
  const auto html = cudadiag::report::render_html(report);
  CHECK(html.find("42.4 Gkeys/s") != std::string::npos);
  CHECK(html.find("u64_gkeys_per_s 16.3 Gkeys/s") != std::string::npos);
  CHECK(html.find("score 97.1 / 100") != std::string::npos);
  CHECK(html.find("id=\"policy\"") != std::string::npos);
  CHECK(html.find("UNMET") != std::string::npos);
  CHECK(html.find("driver&gt;=590") != std::string::npos);
}
