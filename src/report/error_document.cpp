#include "report/error_document.hpp"

#include "report/json_report.hpp"

namespace cudadiag::report {

nlohmann::json error_document(std::string_view message, int exit_code) {
  const char* kind = exit_code == 2 ? "usage" : exit_code == 3 ? "internal" : "failed";
  return {{"schema_version", k_schema_version},
          {"tool", {{"name", "cudadiag"}, {"version", CUDADIAG_VERSION}}},
          {"error", {{"kind", kind}, {"message", to_valid_utf8(message)}, {"exit_code", exit_code}}},
          {"summary", {{"status", "error"}, {"exit_code", exit_code}}}};
}

} // namespace cudadiag::report
