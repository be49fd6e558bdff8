#pragma once
// The raw evidence a support bundle carries next to the report: what an engineer would otherwise
// ask for, one text file each. Only text: file listings, a few small system files, and command
// output — never the contents of a library. Each collector says how it obtained its file (for the
// manifest), or why it could not.

#include "bundle/redaction.hpp"
#include "core/environment.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace cudadiag::bundle {

// One file of a bundle.
struct BundleFile {
  std::string name; // path inside the bundle directory, e.g. "evidence/nvidia-smi-q.txt"
  std::string content;
  std::string source;       // how it was obtained, in words (for the manifest)
  RedactionCounts redacted; // what was withheld while it was made (more is added by the redaction pass)
};

// Evidence that could not be collected, and why ("nvidia-smi is not on PATH").
struct NotCollected {
  std::string what;
  std::string why;
};

struct Evidence {
  std::vector<BundleFile> files;
  std::vector<NotCollected> not_collected;
};

// Where evidence is read from. The defaults describe this machine; tests point them elsewhere.
struct EvidenceSources {
  std::string proc_driver_version = "/proc/driver/nvidia/version";
  std::string proc_driver_gpus = "/proc/driver/nvidia/gpus";
  std::string os_release = "/etc/os-release";
  std::string proc_version = "/proc/version";
  std::string cpuinfo = "/proc/cpuinfo";
  std::string init_cgroup = "/proc/1/cgroup";
  std::vector<std::string> container_markers = {"/.dockerenv", "/run/.containerenv"};
  std::string dmi_dir = "/sys/class/dmi/id";
  std::string dev_dir = "/dev";
  // nvidia-smi: the executable to run; nullopt = the first `nvidia-smi` on the snapshot's PATH.
  std::optional<std::string> nvidia_smi;
  std::chrono::milliseconds nvidia_smi_timeout{10000};
};

// Whether an environment variable is relevant to a CUDA support case (CUDA*, NV*, LD_*, PYTHON*,
// CONDA*, PATH, proxies, compilers, ...): those, and only those, are listed in the bundle.
bool relevant_variable(std::string_view name);

// Collects every evidence file, in a fixed order:
//   evidence/environment.txt          relevant variables; secret-looking values withheld
//   evidence/proc-driver-nvidia-version.txt   the kernel module's version file
//   evidence/nvidia-smi-q.txt         `nvidia-smi -q` when the tool exists (killed at the timeout)
//   evidence/ld-so-cache.txt          the loader cache's entries for CUDA and NVIDIA libraries
//   evidence/python-packages.txt      nvidia/cuda (and framework) wheel dist-infos, conda-meta records
//   evidence/os.txt                   uname, os-release, container and VM hints, NVIDIA device nodes
// `report` is the report's JSON document: site dirs, prefixes and the cache path come from it.
Evidence collect_evidence(const nlohmann::json& report, const Environment& env,
                          const EvidenceSources& sources);

// `text` on one line: invalid UTF-8 and control characters as \xNN, newline as \n, tab as \t.
std::string one_line(std::string_view text);

} // namespace cudadiag::bundle
