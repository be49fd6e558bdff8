/* The C API end to end: options from a JSON string, a report, its verdict and findings, its JSON.
 *
 *   c_api [OPTIONS_JSON]     e.g. c_api '{"components": ["cuda", "nvrtc"], "fail_on": "warning"}'
 *
 * Prints the verdict and one line per finding; exits with the report's exit code (0 ok, 1 a finding
 * at or above "fail_on"), or 3 when a cudadiag call fails.
 * Build: cc c_api.c $(pkg-config --cflags --libs cudadiag)   (CMake: cudadiag::cudadiag_c) */
#include <stdio.h>
#include <stdlib.h>

#include <cudadiag/cudadiag.h>

/* The last error names the function that failed and why. */
static int fail(void) {
  fprintf(stderr, "cudadiag: %s\n", cudadiag_last_error());
  return 3;
}

static const char* severity_name(cudadiag_severity severity) {
  return severity == CUDADIAG_SEVERITY_ERROR     ? "error"
         : severity == CUDADIAG_SEVERITY_WARNING ? "warning"
                                                 : "info";
}

int main(int argc, char** argv) {
  cudadiag_options* options = NULL;
  cudadiag_report* report = NULL;
  cudadiag_verdict verdict = CUDADIAG_VERDICT_OK;
  size_t count = 0;
  int exit_code = 0;

  if (cudadiag_options_new(&options) != CUDADIAG_OK) {
    return fail();
  }
  if (argc > 1 && cudadiag_options_from_json(options, argv[1]) != CUDADIAG_OK) {
    int code = fail(); /* e.g. an unknown key: the message names it */
    cudadiag_options_free(options);
    return code;
  }
  if (cudadiag_report_new(options, &report) != CUDADIAG_OK) {
    int code = fail();
    cudadiag_options_free(options);
    return code;
  }
  cudadiag_report_verdict(report, &verdict);
  cudadiag_report_exit_code(report, &exit_code);
  cudadiag_report_finding_count(report, &count);
  printf("cudadiag %s: verdict %s, %zu findings\n", cudadiag_version_string(),
         verdict == CUDADIAG_VERDICT_ERROR     ? "error"
         : verdict == CUDADIAG_VERDICT_WARNING ? "warning"
                                               : "ok",
         count);
  for (size_t i = 0; i < count; ++i) {
    const char* id = NULL;
    const char* message = NULL;
    cudadiag_severity severity = CUDADIAG_SEVERITY_INFO;
    cudadiag_report_finding_id(report, i, &id);
    cudadiag_report_finding_severity(report, i, &severity);
    cudadiag_report_finding_message(report, i, &message);
    printf("  %-7s %-28s %s\n", severity_name(severity), id, message);
  }

  /* The whole report as JSON (schema_version 1): ask for the size, then copy. */
  size_t needed = 0;
  cudadiag_report_json(report, NULL, 0, &needed);
  char* json = malloc(needed);
  if (json != NULL && cudadiag_report_json(report, json, needed, NULL) == CUDADIAG_OK) {
    printf("JSON report: %zu bytes\n", needed - 1);
  }
  free(json);
  cudadiag_report_free(report);
  cudadiag_options_free(options);
  return exit_code;
}
