// A program using the installed C++ API the way an application would. Exits 0 when the library
// answers consistently: the headers and the loaded library agree on the version, quick_check()
// returns a report whose JSON matches its values, and (with --expect-worker) verify() found the
// cudadiag executable installed next to the library.

#include <cstdio>
#include <cstring>
#include <cudadiag/cudadiag.hpp>
#include <string>

int main(int argc, char** argv) {
  const bool expect_worker = argc > 1 && std::strcmp(argv[1], "--expect-worker") == 0;
  if (cudadiag::version() != CUDADIAG_VERSION_STRING) {
    std::fprintf(stderr, "headers %s, library %s\n", CUDADIAG_VERSION_STRING, cudadiag::version().c_str());
    return 1;
  }
  const auto report = cudadiag::quick_check();
  const auto json = cudadiag::to_json(report);
  if (json.find("\"schema_version\": 1") == std::string::npos || report.components.empty()) {
    std::fprintf(stderr, "unexpected quick_check result:\n%s", json.c_str());
    return 1;
  }
  if (expect_worker) {
    cudadiag::Options options;
    options.components = {"cuda"};
    const auto verified = cudadiag::verify(options);
    if (verified.verification_skipped.find("worker executable") != std::string::npos) {
      std::fprintf(stderr, "the installed worker was not found: %s\n", verified.verification_skipped.c_str());
      return 1;
    }
  }
  std::printf("c++ consumer ok: cudadiag %s, %zu components, %zu findings\n", cudadiag::version().c_str(),
              report.components.size(), report.findings.size());
  return 0;
}
