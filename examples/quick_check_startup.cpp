// Fail fast at startup: before touching CUDA, ask cudadiag whether CUDA can work in this process.
// quick_check() takes a few milliseconds, runs in this process, loads nothing, starts no process and
// launches no kernel. On an error-level finding (the driver stub first on the search path, no
// driver, two copies of one CUDA library mapped, ...) the program exits with the finding's message
// and remedy instead of crashing an hour later with "invalid device context".
//
// Build: c++ -std=c++17 quick_check_startup.cpp $(pkg-config --cflags --libs cudadiag)
//   or, in CMake: find_package(cudadiag CONFIG REQUIRED) + target_link_libraries(app PRIVATE
//   cudadiag::cudadiag)

#include <cstdio>
#include <cudadiag/cudadiag.hpp>

namespace {

// Prints every warning and error; returns false when CUDA is expected to fail here.
bool cuda_stack_is_usable() {
  const cudadiag::Report report = cudadiag::quick_check();
  for (const auto& finding : report.findings) {
    const bool error = finding.severity == cudadiag::Severity::error;
    std::fprintf(stderr, "%s [%s] %s\n  remedy: %s\n", error ? "error:" : "warning:", finding.id.c_str(),
                 finding.message.c_str(), finding.remedy.c_str());
  }
  return report.verdict != cudadiag::Verdict::error;
}

} // namespace

int main() {
  if (!cuda_stack_is_usable()) {
    std::fprintf(stderr, "CUDA cannot work in this process; not starting (checked by cudadiag %s)\n",
                 cudadiag::version().c_str());
    return 1;
  }
  std::printf("CUDA stack looks consistent; starting.\n");
  // ... the application's own work: initialise CUDA, load models, serve ...
  return 0;
}
