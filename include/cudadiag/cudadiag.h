/* cudadiag C API: which CUDA libraries this process will load, whether they agree, whether the GPU
 * works — from inside an application (libcudadiag.so.0, pkg-config cudadiag, CMake cudadiag::cudadiag_c).
 *
 * Contract for every function below:
 *  - No C++ exception crosses it; nothing calls exit() or abort(); nothing is printed unless a log
 *    callback is installed (cudadiag_set_log_callback).
 *  - Functions returning cudadiag_status set the calling thread's last error: "" after CUDADIAG_OK,
 *    a one-line message otherwise (cudadiag_last_error).
 *  - NULL is accepted everywhere: a NULL handle is CUDADIAG_ERROR_INVALID_HANDLE, a NULL output
 *    pointer CUDADIAG_ERROR_INVALID_ARGUMENT (except where a NULL is documented as meaning a default).
 *  - Handles are independent; any number of threads may call any function at once, including on
 *    one handle. The only thing the caller must order is a handle's _free against its other uses.
 *  - A handle passed after its _free is detected and rejected with CUDADIAG_ERROR_INVALID_HANDLE (a
 *    _free of it is ignored and sets the last error). This is best effort: live handles are kept in
 *    a registry and checked before use, so the freed memory is never read, but once a new handle of
 *    the same type happens to get the same address, the stale pointer reaches the new handle.
 *  - Strings returned as `const char*` stay valid until the handle they came from is freed.
 *
 * Compatibility: see docs/api.md "Versioning policy". Within one major version, existing functions,
 * enum values and the meaning of the options JSON keys do not change; new ones may be added. */
#ifndef CUDADIAG_H
#define CUDADIAG_H

#include "cudadiag/export.h"
#include "cudadiag/version.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cudadiag_status {
  CUDADIAG_OK = 0,
  CUDADIAG_ERROR_INVALID_ARGUMENT = 1, /* a NULL output pointer, an index out of range, a bad pid */
  CUDADIAG_ERROR_INVALID_HANDLE = 2,   /* NULL, already freed, or not a handle of that type */
  CUDADIAG_ERROR_BUFFER_TOO_SMALL = 3, /* *needed tells the size required, NUL included */
  CUDADIAG_ERROR_INVALID_OPTIONS = 4,  /* options JSON malformed, an unknown key, a wrong type or value */
  CUDADIAG_ERROR_INSPECT_FAILED = 5,   /* the process cannot be read (gone, another user's, a zombie) */
  CUDADIAG_ERROR_OUT_OF_MEMORY = 6,
  CUDADIAG_ERROR_INTERNAL = 7 /* a bug in cudadiag: the message says what failed */
} cudadiag_status;

typedef enum cudadiag_severity {
  CUDADIAG_SEVERITY_INFO = 0,
  CUDADIAG_SEVERITY_WARNING = 1,
  CUDADIAG_SEVERITY_ERROR = 2
} cudadiag_severity;

/* A report's overall status: the worst severity among its findings (info counts as ok). */
typedef enum cudadiag_verdict {
  CUDADIAG_VERDICT_OK = 0,
  CUDADIAG_VERDICT_WARNING = 1,
  CUDADIAG_VERDICT_ERROR = 2
} cudadiag_verdict;

/* What automation does to clear a finding, least to most invasive (docs/findings.md "Repair
 * classes"): nothing; change a variable, search path or configuration file and restart the job;
 * install, upgrade or remove a package; restart the process; reset the GPU with no process on it;
 * reboot the node; take the GPU out of service for a person to inspect. The numbers never change; a
 * later release may add classes with higher numbers. */
typedef enum cudadiag_repair {
  CUDADIAG_REPAIR_NONE = 0,
  CUDADIAG_REPAIR_FIX_ENVIRONMENT = 1,
  CUDADIAG_REPAIR_REINSTALL_PACKAGE = 2,
  CUDADIAG_REPAIR_RESTART_PROCESS = 3,
  CUDADIAG_REPAIR_RESET_GPU = 4,
  CUDADIAG_REPAIR_REBOOT = 5,
  CUDADIAG_REPAIR_HARDWARE_INSPECTION = 6
} cudadiag_repair;

typedef enum cudadiag_log_level {
  CUDADIAG_LOG_DEBUG = 0,
  CUDADIAG_LOG_INFO = 1,
  CUDADIAG_LOG_WARNING = 2,
  CUDADIAG_LOG_ERROR = 3
} cudadiag_log_level;

typedef struct cudadiag_options
    cudadiag_options;                           /* what to examine and how; see cudadiag_options_from_json */
typedef struct cudadiag_report cudadiag_report; /* an immutable result */

/* ---- Version and errors ------------------------------------------------------------------------ */

/* The loaded library's version as CUDADIAG_VERSION_NUMBER encodes it (MAJOR * 10000 + MINOR * 100 + PATCH).
 */
CUDADIAG_API int cudadiag_version(void);
/* The loaded library's version as text, "0.1.0". Static storage. */
CUDADIAG_API const char* cudadiag_version_string(void);
/* What the last status-returning call on this thread reported: "" after success. Never NULL; valid
 * until the next cudadiag call on this thread. */
CUDADIAG_API const char* cudadiag_last_error(void);

/* ---- Logging ----------------------------------------------------------------------------------- */

/* Receives one line (no trailing newline) per message at or above the level set. May be called from
 * any thread that is inside a cudadiag call, several at once. It must not call cudadiag_set_log_callback. */
typedef void (*cudadiag_log_callback)(cudadiag_log_level level, const char* message, void* user_data);

/* Installs `callback` (NULL: none, the default — nothing is logged anywhere) for messages at
 * `min_level` or above. Process-wide. A message already being delivered on another thread may still
 * reach the previous callback after this returns. */
CUDADIAG_API void cudadiag_set_log_callback(cudadiag_log_callback callback, cudadiag_log_level min_level,
                                            void* user_data);

/* ---- Options ----------------------------------------------------------------------------------- */

/* New options with every setting at its default (whole catalog, no verification, no self-test). */
CUDADIAG_API cudadiag_status cudadiag_options_new(cudadiag_options** out);
/* Frees `options`; NULL is ignored. */
CUDADIAG_API void cudadiag_options_free(cudadiag_options* options);

/* Sets the options named in `json`, a JSON object; keys left out keep their current value. All or
 * nothing: on any error (malformed JSON, an unknown key, a wrong type, an unknown component or test
 * name, a timeout <= 0) the options are left unchanged and CUDADIAG_ERROR_INVALID_OPTIONS says which
 * key is wrong. Keys:
 *   "components":      ["nvrtc", "cuda", ...]  cuda-pathfinder names to examine; [] = all (default)
 *   "python":          "/path/to/python3"      ask this interpreter for its site-packages (runs it
 *                                              once); "" = find them without running Python (default)
 *   "ld_so_cache":     "/etc/ld.so.cache"      the loader cache to read; "" = the system's (default);
 *                                              under "root", a file inside the root
 *   "root":            "/srv/rootfs"           read another system from this directory: every path
 *                                              inside it, nothing of this machine's files, nothing
 *                                              loaded (no verification or self-test); not with
 *                                              "python" ("" = this machine, default; issue 48)
 *   "image":           "app.tar"               a container image read as "root" is: an OCI layout
 *                                              directory, a docker save archive (.tar, .tar.gz) or a
 *                                              rootfs directory; its config's Env is the environment
 *                                              ("environment" on top); not with "root" or "python"
 *                                              ("" = none, default; issue 48)
 *   "assume_driver":   "570.86.10"             under "root"/"image": the GPU host's driver the container
 *                                              findings are judged for ("" = this machine's, default)
 *   "assume_gpu":      "sm_90,brand=tesla"     and its GPU ("" = unknown, default; issue 48)
 *   "inherit_environment": true               false: start from an empty environment, "environment"
 *                                              is all of it (default true; issue 48)
 *   "fail_on":         "error" | "warning"     which severity makes the exit code 1 (default "error")
 *   "verify":          false                   cudadiag_report_new also loads the selected libraries,
 *                                              each in an isolated worker process (default false)
 *   "self_test":       false                   cudadiag_report_new also runs the GPU self-test
 *                                              (implies "verify"; default false)
 *   "self_test_level": "quick" | "full"        (default "quick")
 *   "self_tests":      ["jit", "reduce", ...]  test keys to run; [] = all (default)
 *   "device":          0 | null                CUDA ordinal for the self-test; null = every device
 *   "context":         "interactive" | "ci" | "fleet" | null
 *                                              where cudadiag runs (how loud gpu.busy is); null = from
 *                                              the environment: SLURM_JOB_ID or KUBERNETES_SERVICE_HOST
 *                                              -> fleet, CI=true -> ci, else interactive (default null)
 *   "exclusive":       false                   the self-test needs the GPU to itself: another process
 *                                              on it is an error-level gpu.busy (default false)
 *   "timeout_seconds": 15                      seconds each library verified may take (default 15)
 *   "load_check":      true                    with "verify": also load every dependency closure in a
 *                                              worker and compare its link map with the prediction
 *                                              (default true; a key added in 0.1, issue 52)
 *   "verify_record_hashes": false             also compare every library file of the primary Python
 *                                              environment's CUDA distributions with the SHA-256 in
 *                                              its dist-info RECORD (reads each file whole); sizes are
 *                                              always compared (default false; a key added in 0.1)
 *   "cache":           "read" | "read_write" | "off"
 *                                              the per-user cache of proven loads: "read" takes a proof
 *                                              of unchanged files instead of loading again and writes
 *                                              nothing; "read_write" also writes this run's proofs;
 *                                              CUDADIAG_CACHE=0 is "off" (default "read"; issue 52)
 *   "executable":      "/usr/bin/cudadiag"     the cudadiag executable the workers run; "" = the
 *                                              environment's CUDADIAG_EXECUTABLE, else the one installed
 *                                              with this library (default "")
 *   "environment":     {"CUDA_HOME": "/opt/cuda", "CUDA_PATH": null}
 *                                              overrides on this process's environment, as the search
 *                                              sees it: a string sets, null unsets (default {}) */
CUDADIAG_API cudadiag_status cudadiag_options_from_json(cudadiag_options* options, const char* json);

/* The options as a JSON object with every key above. Buffer rules as for cudadiag_report_json. */
CUDADIAG_API cudadiag_status cudadiag_options_to_json(const cudadiag_options* options, char* buffer,
                                                      size_t size, size_t* needed);

/* ---- Running --------------------------------------------------------------------------------- */

/* The full report: discovery, plus verification and the self-test when the options ask. `options`
 * NULL means defaults (discovery only: reads files, loads nothing, starts no process). On success
 * *out is a new report to free with cudadiag_report_free; on error *out is NULL. */
CUDADIAG_API cudadiag_status cudadiag_report_new(const cudadiag_options* options, cudadiag_report** out);

/* The startup check, meant to take a few milliseconds the first time and a fraction of one after (a
 * repeated call answers the kept report while every path its discovery read stats the same and the
 * options, environment, ids and host are equal; what the process has mapped is read every time;
 * docs/api.md "Contract"): what this process has mapped already plus what
 * it would load next (discovery), in this process, starting no process, loading nothing, launching no
 * kernel. "verify", "self_test" and "python" are ignored. Without "components" it covers the
 * libraries, header sets, bitcode and static libraries, not the toolkit's programs (nvcc, ...) nor
 * what importing torch or JAX would load nor their CUDA pins (cudadiag_report_new reports those). The
 * findings are those of severity warning or error: two copies of one library mapped (process.duplicate_lib),
 * the driver stub in use or first on the search path, no driver, unusable or blocking files, conflicting
 * CUDA_PATH/CUDA_HOME, ... */
CUDADIAG_API cudadiag_status cudadiag_quick_check(const cudadiag_options* options, cudadiag_report** out);

/* Checks `count` requirements (`requirements[0 .. count-1]`, NUL-terminated; NULL with count 0 is
 * none) against the report `options` ask for, made as cudadiag_report_new makes it (discovery, plus
 * verification and the self-test when the options ask). A requirement is written as after
 * `cudadiag --require` (docs/manual.md "CI gates": "nvrtc>=13", "driver>=580", "cccl",
 * "selftest.sort>=30Gkeys", "no-errors"); each unmet one is a policy.unmet finding (severity error,
 * naming the requirement and what was seen) in *out, counted in its verdict and exit code, whose
 * components are the ones the requirement names. A malformed or unknown requirement is
 * CUDADIAG_ERROR_INVALID_OPTIONS naming it, with *out NULL; a NULL string in the array, or
 * requirements NULL with count > 0, is CUDADIAG_ERROR_INVALID_ARGUMENT. Since 0.1. */
CUDADIAG_API cudadiag_status cudadiag_require(const cudadiag_options* options,
                                              const char* const* requirements, size_t count,
                                              cudadiag_report** out);

/* The CUDA libraries process `pid` has mapped (0: this process), with process.duplicate_lib and
 * driver.stub findings. The JSON is `cudadiag inspect --pid PID --json`'s document. */
CUDADIAG_API cudadiag_status cudadiag_inspect_process(int pid, cudadiag_report** out);

/* Frees `report`; NULL is ignored. */
CUDADIAG_API void cudadiag_report_free(cudadiag_report* report);

/* ---- Reading a report ---------------------------------------------------------------------------- */

/* The report as a JSON document (schema_version 1, docs/schema/report.schema.json; for
 * cudadiag_inspect_process, the inspect document), NUL-terminated, copied into `buffer`.
 *  - size >= the length + 1: copied, CUDADIAG_OK.
 *  - buffer NULL and size 0: a size query; CUDADIAG_OK, nothing copied.
 *  - otherwise CUDADIAG_ERROR_BUFFER_TOO_SMALL; buffer[0] is set to NUL when size > 0.
 * `needed`, when not NULL, receives the length + 1 in every case but an invalid handle; it is
 * required for a size query. A buffer NULL with size > 0 is CUDADIAG_ERROR_INVALID_ARGUMENT. */
CUDADIAG_API cudadiag_status cudadiag_report_json(const cudadiag_report* report, char* buffer, size_t size,
                                                  size_t* needed);
/* The same document, owned by the report; NULL (and the last error set) on an invalid handle. */
CUDADIAG_API const char* cudadiag_report_json_str(const cudadiag_report* report);

CUDADIAG_API cudadiag_status cudadiag_report_verdict(const cudadiag_report* report, cudadiag_verdict* out);
/* What `cudadiag` would exit with: 0, or 1 with a finding at or above the "fail_on" severity. */
CUDADIAG_API cudadiag_status cudadiag_report_exit_code(const cudadiag_report* report, int* out);
CUDADIAG_API cudadiag_status cudadiag_report_finding_count(const cudadiag_report* report, size_t* out);
/* Finding `index` (0 .. count - 1, in report order): its stable dotted id ("driver.stub", see
 * docs/findings.md), severity, one-line message naming the files involved, remedy, and repair class
 * (the JSON's "repair"). */
CUDADIAG_API cudadiag_status cudadiag_report_finding_id(const cudadiag_report* report, size_t index,
                                                        const char** out);
CUDADIAG_API cudadiag_status cudadiag_report_finding_severity(const cudadiag_report* report, size_t index,
                                                              cudadiag_severity* out);
CUDADIAG_API cudadiag_status cudadiag_report_finding_message(const cudadiag_report* report, size_t index,
                                                             const char** out);
CUDADIAG_API cudadiag_status cudadiag_report_finding_remedy(const cudadiag_report* report, size_t index,
                                                            const char** out);
/* Since 0.1.0 (an additive symbol: a program that calls it needs a libcudadiag.so.0 that has it). */
CUDADIAG_API cudadiag_status cudadiag_report_finding_repair(const cudadiag_report* report, size_t index,
                                                            cudadiag_repair* out);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* CUDADIAG_H */
