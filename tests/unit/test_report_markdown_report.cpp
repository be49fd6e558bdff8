// The Markdown rendering: verdict first, tables that survive '|' and newlines, escaped prose.
#include "core/filesystem.hpp"
#include "report/markdown_report.hpp"
#include "report/output_formats.hpp"

#include <doctest/doctest.h>

using cudadiag::report::markdown_code;
using cudadiag::report::markdown_escape;

TEST_CASE("markdown: the verdict comes first, then the sections in order") {
  const auto text =
      cudadiag::fs::read_file_prefix(CUDADIAG_SOURCE_DIR "/docs/examples/h200-host-report.json", 1U << 24U);
  REQUIRE(text);
  const auto markdown = cudadiag::report::render_markdown(nlohmann::json::parse(*text));
  CHECK(markdown.rfind(
            "# cudadiag report: vm\n\n**Verdict: WARNING** — 0 errors, 5 warnings, 9 info (exit code 0)",
            0) == 0);
  const auto components = markdown.find("## Components");
  const auto devices = markdown.find("## Devices");
  const auto findings = markdown.find("## Findings");
  const auto selftest = markdown.find("## Self-test");
  const auto environment = markdown.find("## Environment");
  CHECK(components < devices);
  CHECK(devices < findings);
  CHECK(findings < selftest);
  CHECK(selftest < environment);
  CHECK(environment != std::string::npos);
  // What each isolated worker loaded, between the components and the findings.
  const auto verification = markdown.find("## Verification");
  REQUIRE(verification != std::string::npos);
  CHECK(components < verification);
  CHECK(verification < findings);
  CHECK(markdown.find("Each library loaded in an isolated worker process", verification) < findings);
  CHECK(markdown.find("| nvrtc | ok |", verification) < findings);
  CHECK(markdown.find("| nvrtc | found | 13.0.88 · site-packages<br>`") != std::string::npos);
  CHECK(markdown.find("**Remedy:**") != std::string::npos);
}

TEST_CASE("markdown: escaping of prose and code spans") {
  CHECK(markdown_escape("a|b *c* _d_ <e> [f]") == "a\\|b \\*c\\* \\_d\\_ \\<e\\> \\[f\\]");
  CHECK(markdown_escape("one\ntwo") == "one<br>two");
  CHECK(markdown_code("/usr/lib") == "`/usr/lib`");
  CHECK(markdown_code("a`b") == "``a`b``");
  CHECK(markdown_code("`x") == "`` `x ``");
  CHECK(markdown_code("a|b\nc") == "`a\\|b c`");
}

TEST_CASE("markdown: the Python frameworks section: builds, pins, and what torch loads against CUDA Python") {
  const auto report = nlohmann::json::parse(R"({
    "environment": {
      "frameworks": [{"framework": "torch", "version": "2.11.0", "cuda": "13.0", "source": "torch/version.py",
                      "gpu_code": ["sm_90", "compute_90"]},
                     {"framework": "cupy-cuda13x", "version": "14.2.0", "cuda": "13", "source": "the name"}],
      "framework_requirements": [{"framework": "torch", "framework_version": "2.11.0", "met": true},
                                 {"framework": "torch", "framework_version": "2.11.0", "met": false}]},
    "linkage": {"frameworks": [{
      "framework": "torch", "version": "2.11.0", "library": "/venv/torch/lib/libtorch_cuda.so", "loads": false,
      "import": {"statement": "import torch", "model": "torch 2.11", "branch": "global deps loaded",
                 "import_error": "OSError: libcudart.so.13: cannot open shared object file"},
      "closure": {"objects": [
        {"component": "cudnn", "path": "/venv/nvidia/cudnn/lib/libcudnn.so.9", "version": "9.19.0.56",
         "found_via": "preloaded", "selected": false},
        {"component": null, "path": "/lib/x86_64-linux-gnu/libc.so.6", "found_via": "ld.so.cache", "selected": false}]}}]}
  })");
  const auto markdown = cudadiag::report::render_markdown(report);
  const auto section = markdown.find("## Python frameworks");
  REQUIRE(section != std::string::npos);
  CHECK(markdown.find("| torch 2.11.0 | CUDA 13.0<br>`sm_90 compute_90` | **1 of 2** | "
                      "**fails**<br>`/venv/torch/lib/libtorch_cuda.so` |",
                      section) != std::string::npos);
  CHECK(markdown.find("| cupy-cuda13x 14.2.0 | CUDA 13 | - | - |", section) != std::string::npos);
  CHECK(markdown.find("import torch (torch 2.11): global deps loaded; fails: OSError: libcudart.so.13",
                      section) != std::string::npos);
  CHECK(markdown.find(
            "| cudnn<br>`/venv/nvidia/cudnn/lib/libcudnn.so.9` | 9.19.0.56 | preloaded | another copy |",
            section) != std::string::npos);
  CHECK(markdown.find("libc.so.6", section) == std::string::npos); // the system's libraries are not listed
}
