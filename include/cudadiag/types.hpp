#pragma once
// The value types of the cudadiag C++ API; cudadiag.hpp declares the functions that produce them.
// (Kept apart so that the library's own sources can use these types next to the core's namespaces,
// one of which, cudadiag::verify, shares its name with the function cudadiag::verify().)

#include "cudadiag/export.h"

#if defined(__cplusplus) && __cplusplus < 201703L
#error "the cudadiag C++ API needs C++17 or later (the C API, cudadiag.h, needs only C99)"
#endif

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace cudadiag {

// What the API throws for a problem in its input or its environment; what() is one line for users.
class CUDADIAG_API Exception : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
  ~Exception() override;
};

enum class Severity { info, warning, error };
// What automation does to clear a finding, least to most invasive (docs/findings.md "Repair
// classes"); the C API's cudadiag_repair, value for value.
enum class Repair {
  none,                // nothing to repair
  fix_environment,     // change a variable, a search path or a configuration file; restart the job
  reinstall_package,   // install, upgrade or remove a package (driver, toolkit, wheel, conda)
  restart_process,     // the process (application or service) must start again
  reset_gpu,           // reset the GPU with no process on it (nvidia-smi -r)
  reboot,              // the node must reboot
  hardware_inspection, // drain the node; a person inspects the GPU, its board, slot, power, cooling
};
// The worst severity among a report's findings; info counts as ok.
enum class Verdict { ok, warning, error };
enum class SelfTestLevel { quick, full };
// Where cudadiag runs, which sets how loud some findings are: interactive (a terminal), ci (a CI
// job: CI=true), fleet (a node health check: under Slurm or in a Kubernetes pod).
enum class Context { interactive, ci, fleet };
// How verify/self_test use the per-user cache of proven loads ($XDG_CACHE_HOME/cudadiag, else
// ~/.cache/cudadiag): off, read (a closure proven before with every file unchanged is not loaded
// again), or read_write (and this run's proofs are written back). CUDADIAG_CACHE=0 in the
// environment turns it off whatever is set here.
enum class Cache { off, read, read_write };

struct Options {
  // cuda-pathfinder component names to examine ("cuda", "nvrtc", "cccl", ...; every component of
  // that name), or "KIND/NAME" for one ("headers/cudart", "static/cudadevrt", "bitcode/device",
  // "binary/nvcc"); empty: all of them.
  std::vector<std::string> components;
  // An interpreter to ask for its site-packages (runs it once); empty: found without running Python.
  // quick_check() ignores it.
  std::string python;
  std::string ld_so_cache;      // the loader cache to read; empty: /etc/ld.so.cache
  std::string ld_so_conf;       // the loader configuration remedies name files from; empty: /etc/ld.so.conf
  bool fail_on_warning = false; // exit_code 1 on warnings too (the CLI's --fail-on warning)
  double timeout_seconds = 15;  // verify/self_test: seconds each library may take to load and answer
  SelfTestLevel self_test_level = SelfTestLevel::quick;
  std::vector<std::string> self_tests; // self-test keys to run ("jit", "reduce", ...); empty: all
  std::optional<int> device;           // self-test device (CUDA ordinal); nullopt: every device
  // The context (see Context); nullopt: from the environment (SLURM_JOB_ID or KUBERNETES_SERVICE_HOST:
  // fleet, else CI=true: ci, else interactive).
  std::optional<Context> context;
  bool exclusive =
      false; // the self-test needs the GPU to itself: another process on it is an error (gpu.busy)
  // verify/self_test also load every closure in a worker and compare its link map with the
  // prediction (the load check); false: verification without it.
  bool load_check = true;
  // Compare every library file of the primary Python environment's CUDA distributions with the
  // SHA-256 its dist-info RECORD lists, not only its size (reads each file whole; the CLI's
  // --verify-record-hashes).
  bool verify_record_hashes = false;
  Cache cache = Cache::read; // the embedded API reads proven loads and writes only when asked
  // verify/self_test run every library in an isolated worker: this cudadiag executable re-run.
  // Empty: $CUDADIAG_EXECUTABLE, else the `cudadiag` installed with this library.
  std::string executable;
  // Overrides on this process's environment as the search sees it: a value sets, nullopt unsets.
  std::map<std::string, std::optional<std::string>> environment;
  // false: the run starts from an empty environment and `environment` holds all of it (the CLI's
  // --env-file and --env); true: from this process's.
  bool inherit_environment = true;
  // A directory holding another system's files (a container's root file system): every path the
  // run reads is read inside it (absolute symbolic links and ".." stay in it), nothing of this
  // machine's files leaks in, and nothing is loaded (its glibc and loader are not this machine's:
  // verification, the load check and the self-test are off). Empty: this machine. Cannot be combined
  // with `python` (it would run on this machine).
  std::string root;
  // A container image read as `root` is: an OCI image layout directory, a `docker save` archive
  // (.tar or .tar.gz) or an unpacked root file system, its layers applied into a temporary directory
  // removed after the run. The environment is then the image config's Env (with `environment` on top,
  // as `docker run -e` adds to it), the working directory its WorkingDir. Not with `root` or `python`.
  std::string image;
  // Under `root` or `image`: the GPU host the container is judged for (NVIDIA_REQUIRE_*, forward
  // compatibility, baked driver libraries): its driver version ("570.86.10"); empty: this machine's
  // (/proc/driver/nvidia/version), if it has one.
  std::string assume_driver;
  // And its GPU, "sm_90,brand=tesla" (either part may be left out); empty: unknown.
  std::string assume_gpu;
};

// Where one answer for a component points.
struct Location {
  std::string path;           // as found (search dir + file name)
  std::string realpath;       // resolved; empty when unresolvable
  std::string found_via;      // "site-packages", "LD_LIBRARY_PATH", "ld.so.cache", "CUDA_HOME", ...
  std::string version;        // read without loading; empty when unknown
  std::string version_source; // "file_name", "dist_info", "version_json", "header", ...
  std::string fails;          // why loading this answer does not succeed; empty: it loads
  std::string outcome; // "loads" | "fails" | "crashes" (SIGBUS: a truncated file) | "hangs" (observed only)
};

struct Component {
  std::string name;                 // "nvrtc"
  std::string kind;                 // "dynamic_lib" | "headers" | "binary" | "static_lib" | "bitcode_lib"
  std::string status;               // "found" | "not_found" | "error"
  std::optional<Location> selected; // what CUDA Python (cuda-pathfinder) loads
  std::optional<Location> loader;   // what dlopen("libX.so.N") resolves (PATH lookup for binaries)
  std::size_t candidates = 0;       // every copy seen, usable or not
  // Libraries, when `selected` is empty although CUDA Python tried a file: the file its system
  // search's dlopen("libX.so.N") failed to load (`fails` says why) before cuda-pathfinder raised
  // "not found". CUDA Python cannot load the library then (status "error"), whatever `loader` says.
  std::optional<Location> python_failed;
};

struct Finding {
  std::string id; // stable, dotted ("driver.stub"); docs/findings.md
  Severity severity = Severity::info;
  std::string message;                 // one line naming the files involved
  std::string remedy;                  // what to do about it
  std::vector<std::string> components; // the component names it concerns
  Repair repair = Repair::none;        // its repair class (the JSON's "repair")
};

// A GPU as verification saw it (driver API, merged with NVML by UUID).
struct Device {
  std::optional<int> ordinal; // nullopt: NVML sees it, CUDA does not (CUDA_VISIBLE_DEVICES, cuInit failed)
  std::string name, uuid, pci_bus_id;
  std::string compute_capability; // "9.0"; empty when unknown
  std::optional<int> sm_count;
  std::optional<std::uint64_t> total_memory_bytes;
  std::optional<double> peak_bandwidth_gbps;
};

struct Metric {
  std::string name;
  double value = 0;
  std::string unit; // "GB/s", "Gkeys/s", "ms", "us", "fraction", "count"
};

// One self-test on one device.
struct TestResult {
  std::string key;           // "jit", "ptx", "reduce", "sort", "ipc", "green_ctx"
  std::optional<int> device; // nullopt for a run with no device
  std::string status;        // "pass" | "fail" | "skip" | "error"
  std::string reason;        // why, for everything but a plain pass
  double wall_ms = 0;
  std::optional<Metric> primary; // the headline figure
};

// A catalog library mapped into a process.
struct LoadedLibrary {
  std::string name;     // catalog name ("cudart")
  std::string variant;  // "alt" for an alternative build (libnvrtc.alt.so.13), else ""
  std::string path;     // as mapped
  std::string realpath; // empty when unresolvable or deleted
  std::string version;  // read from disk; empty when unknown
  bool deleted = false; // replaced or removed on disk since it was mapped
  bool is_stub = false; // the toolkit's link-time stub libcuda
};

namespace detail {
struct ReportData;
struct InspectionData;
struct Access;
} // namespace detail

// One run's result. Produced by the functions below; a default-constructed Report is empty and
// renders as "{}" through to_json().
struct Report {
  Verdict verdict = Verdict::ok;
  int exit_code = 0;             // what `cudadiag` would exit with: 0, or 1 (see Options::fail_on_warning)
  std::vector<Finding> findings; // in rule order
  std::vector<Component> components; // in catalog order
  std::vector<LoadedLibrary> loaded; // quick_check(): what this process has mapped; else empty
  bool verified = false;             // the selected libraries were loaded (in workers)
  std::string verification_skipped;  // why not, when !verified
  std::vector<Device> devices;       // verify(), self_test()
  std::vector<TestResult> tests;     // self_test()
  std::optional<double> score;       // self_test(): 0..100, nullopt when no benchmark ran
  double elapsed_ms = 0;

private:
  friend struct detail::Access;
  std::shared_ptr<const detail::ReportData> m_data; // what to_json renders
};

struct ProcessInspection {
  int pid = 0; // 0: this process
  Verdict verdict = Verdict::ok;
  std::vector<LoadedLibrary> libraries; // in the order of the mapped files
  std::vector<Finding> findings;        // process.duplicate_lib, driver.stub

private:
  friend struct detail::Access;
  std::shared_ptr<const detail::InspectionData> m_data;
};

enum class LogLevel { debug, info, warning, error };
using LogHandler = std::function<void(LogLevel level, const std::string& message)>;

} // namespace cudadiag
