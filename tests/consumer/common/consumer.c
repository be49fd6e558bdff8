/* A C99 program using the installed C API: version agreement, a quick check, its JSON. Exits 0
 * when every call behaves. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cudadiag/cudadiag.h>

int main(void) {
  cudadiag_options* options = NULL;
  cudadiag_report* report = NULL;
  size_t needed = 0;
  size_t findings = 0;
  if (cudadiag_version() != CUDADIAG_VERSION_NUMBER) {
    fprintf(stderr, "headers %d, library %d\n", CUDADIAG_VERSION_NUMBER, cudadiag_version());
    return 1;
  }
  if (cudadiag_options_new(&options) != CUDADIAG_OK ||
      cudadiag_options_from_json(options, "{\"components\": [\"cuda\", \"nvrtc\"]}") != CUDADIAG_OK ||
      cudadiag_quick_check(options, &report) != CUDADIAG_OK ||
      cudadiag_report_json(report, NULL, 0, &needed) != CUDADIAG_OK ||
      cudadiag_report_finding_count(report, &findings) != CUDADIAG_OK) {
    fprintf(stderr, "cudadiag: %s\n", cudadiag_last_error());
    return 1;
  }
  char* json = malloc(needed);
  int status = json != NULL && cudadiag_report_json(report, json, needed, NULL) == CUDADIAG_OK &&
                       strstr(json, "\"schema_version\": 1") != NULL
                   ? 0
                   : 1;
  if (status == 0) {
    printf("c consumer ok: cudadiag %s, %zu findings\n", cudadiag_version_string(), findings);
  }
  free(json);
  cudadiag_report_free(report);
  cudadiag_options_free(options);
  return status;
}
