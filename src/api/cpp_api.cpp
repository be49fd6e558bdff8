// The exported C++ API (cudadiag.hpp). Thin by design: see api/pipeline.hpp for why the work is
// done there.

#include "api/pipeline.hpp"
#include "cudadiag/cudadiag.hpp"

namespace cudadiag {

Exception::~Exception() = default;

std::string version() {
  return CUDADIAG_VERSION_STRING;
}

Report discover(const Options& options) {
  return api::run_discover(options);
}
Report verify(const Options& options) {
  return api::run_verify(options);
}
Report self_test(const Options& options) {
  return api::run_self_test(options);
}
Report quick_check(const Options& options) {
  return api::run_quick_check(options);
}
ProcessInspection inspect_process(int pid) {
  return api::run_inspect(pid);
}

std::string to_json(const Report& report) {
  return api::render_json(report);
}
std::string to_json(const ProcessInspection& inspection) {
  return api::render_json(inspection);
}

} // namespace cudadiag
