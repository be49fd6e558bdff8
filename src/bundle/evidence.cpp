#include "bundle/evidence.hpp"

#include "core/command_capture.hpp"
#include "core/filesystem.hpp"
#include "core/json_fields.hpp"
#include "core/text.hpp"
#include "loader/ld_so_cache.hpp"
#include "probes/catalog.hpp"
#include "report/json_report.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <set>
#include <span>

namespace cudadiag::bundle {
namespace {

using nlohmann::json;

constexpr std::size_t k_max_small_file = std::size_t{256} * 1024;

// Variables listed by exact name, and by prefix (both compared upper-cased).
constexpr std::array<std::string_view, 14> k_relevant_names = {"PATH",
                                                               "HOME",
                                                               "CC",
                                                               "CXX",
                                                               "CPATH",
                                                               "LIBRARY_PATH",
                                                               "C_INCLUDE_PATH",
                                                               "CONTAINER",
                                                               "LOADEDMODULES",
                                                               "MODULEPATH",
                                                               "CPLUS_INCLUDE_PATH",
                                                               "KUBERNETES_SERVICE_HOST",
                                                               "CUDAHOSTCXX",
                                                               "SLURM_JOB_GPUS"};
constexpr std::array<std::string_view, 22> k_relevant_prefixes = {
    "CUDA",   "NV",   "LD_",   "PYTHON", "CONDA",   "VIRTUAL_ENV", "PYENV", "CUDNN",
    "NCCL",   "CUPY", "NUMBA", "TORCH",  "PYTORCH", "JAX",         "XLA",   "TF_",
    "TRITON", "PIP_", "UV_",   "HTTP_",  "HTTPS_",  "NO_PROXY"};

// Wheel distributions and conda packages worth listing: CUDA itself and what bundles CUDA.
constexpr std::array<std::string_view, 14> k_package_prefixes = {
    "nvidia", "cuda",       "cupy",     "torch",  "pytorch", "jax",   "numba",
    "triton", "tensorflow", "tensorrt", "pycuda", "cutlass", "libcu", "libnv"};
constexpr std::array<std::string_view, 3> k_conda_only_prefixes = {"cudnn", "nccl", "cutensor"};

std::string upper(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](char c) { return static_cast<char>(std::toupper(static_cast<unsigned char>(c))); });
  return out;
}

bool starts_with_any(std::string_view text, std::span<const std::string_view> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [text](std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; });
}

const json& array_at(const json& object, std::string_view key) {
  static const json empty = json::array();
  if (!object.is_object()) {
    return empty;
  }
  const auto it = object.find(key);
  return it != object.end() && it->is_array() ? *it : empty;
}

BundleFile environment_file(const Environment& env) {
  BundleFile file{"evidence/environment.txt", "", "", {}};
  file.content = "# Environment variables relevant to CUDA, Python and the loader, as cudadiag saw them.\n"
                 "# Values of variables whose names look secret are withheld.\n";
  int listed = 0;
  for (const auto& [name, value] : env.variables()) {
    if (!relevant_variable(name)) {
      continue;
    }
    ++listed;
    if (looks_secret(name)) {
      ++file.redacted.secret_values;
      file.content += name + "=<redacted>\n";
    } else {
      file.content += name + "=" + one_line(value) + "\n";
    }
  }
  file.source = "the process environment: " + std::to_string(listed) +
                " variables whose names are relevant (CUDA*, NV*, LD_*, PYTHON*, CONDA*, PATH, proxies, "
                "compilers, ...)";
  return file;
}

void add_system_file(Evidence& evidence, const std::string& path, std::string name, std::string_view what) {
  auto text = fs::read_file_prefix(path, k_max_small_file);
  if (!text) {
    evidence.not_collected.push_back({path, text.error().message});
    return;
  }
  evidence.files.push_back(
      {std::move(name), report::to_valid_utf8(*text), "read " + path + " (" + std::string(what) + ")", {}});
}

void add_nvidia_smi(Evidence& evidence, const Environment& env, const EvidenceSources& sources) {
  const auto tool = sources.nvidia_smi ? sources.nvidia_smi : find_on_path(env, "nvidia-smi");
  if (!tool || !fs::is_executable_file(*tool)) {
    evidence.not_collected.push_back(
        {"nvidia-smi -q", tool ? *tool + " is not an executable file" : "nvidia-smi is not on PATH"});
    return;
  }
  auto capture = capture_command(env, {*tool, "-q"}, sources.nvidia_smi_timeout);
  if (!capture) {
    evidence.not_collected.push_back({*tool + " -q", capture.error().message});
    return;
  }
  const auto outcome = capture->outcome(sources.nvidia_smi_timeout);
  std::string content = report::to_valid_utf8(capture->out);
  if (!capture->err.empty()) {
    content += "\n# stderr:\n" + report::to_valid_utf8(capture->err);
  }
  if (capture->truncated) {
    content += "\n# (output truncated)\n";
  }
  const auto seconds = std::to_string(sources.nvidia_smi_timeout.count() / 1000);
  evidence.files.push_back({"evidence/nvidia-smi-q.txt",
                            std::move(content),
                            "ran `" + *tool + " -q` with a " + seconds + " s timeout: " + outcome,
                            {}});
}

// Library-name prefixes the loader cache listing keeps: every catalog library's base name
// ("libnvrtc" from "libnvrtc.so.13") and the driver's other libraries.
std::vector<std::string> cuda_library_prefixes() {
  std::set<std::string> out = {"libnvidia-", "libcuda", "libnvrtc", "libnvJitLink", "libnvvm"};
  for (const auto& spec : probes::catalog()) {
    if (spec.kind != probes::ComponentKind::dynamic_lib) {
      continue;
    }
    for (const auto name : spec.file_names) {
      out.insert(std::string(name.substr(0, name.find(".so"))));
    }
  }
  return {out.begin(), out.end()};
}

void add_ld_so_cache(Evidence& evidence, const json& report) {
  const auto path =
      json_fields::string_or(report.value("environment", json::object()).value("ld_so_cache", json::object()),
                             "path", std::string(loader::k_default_ld_so_cache_path));
  auto cache = loader::read_ld_so_cache(path);
  if (!cache) {
    evidence.not_collected.push_back({path, cache.error().message});
    return;
  }
  const auto prefixes = cuda_library_prefixes();
  std::string content = "# Entries of " + path +
                        " for CUDA and NVIDIA libraries, in file order (the loader takes\n"
                        "# the first entry of this machine's architecture).\n";
  int kept = 0;
  for (const auto& entry : cache->entries()) {
    const bool wanted = std::any_of(prefixes.begin(), prefixes.end(), [&entry](const std::string& prefix) {
      return entry.soname.compare(0, prefix.size(), prefix) == 0;
    });
    if (!wanted) {
      continue;
    }
    ++kept;
    content += one_line(entry.soname) + " => " + one_line(entry.path) + " (" + entry.arch_label() +
               (entry.hwcap != 0 ? ", hwcap" : "") + (entry.matches_host() ? "" : ", not for this machine") +
               ")\n";
  }
  evidence.files.push_back({"evidence/ld-so-cache.txt",
                            std::move(content),
                            "parsed " + path + ": " + std::to_string(kept) + " of " +
                                std::to_string(cache->entries().size()) +
                                " entries name CUDA or NVIDIA libraries",
                            {}});
}

void list_matching(std::string& content, const std::string& dir, std::string_view suffix, bool conda) {
  auto entries = fs::list_directory(dir);
  if (!entries) {
    content += dir + ": " + entries.error().message + "\n";
    return;
  }
  std::string listed;
  for (const auto& entry : *entries) {
    const auto name = to_lower(entry);
    const bool right_suffix = name.size() > suffix.size() && name.ends_with(suffix);
    if (right_suffix && (starts_with_any(name, k_package_prefixes) ||
                         (conda && starts_with_any(name, k_conda_only_prefixes)))) {
      listed += "  " + one_line(entry) + "\n";
    }
  }
  content += dir + ":\n" + (listed.empty() ? "  (none)\n" : listed);
}

void add_python_packages(Evidence& evidence, const json& report, const Environment& env) {
  std::string content =
      "# CUDA-related wheel distributions (*.dist-info) in every site-packages directory of the\n"
      "# report's Python environments, and conda-meta records of the conda prefixes.\n";
  std::set<std::string> site_dirs;
  std::set<std::string> prefixes;
  const auto environment = report.value("environment", json::object());
  for (const auto& python : array_at(environment, "python_environments")) {
    for (const auto& dir : array_at(python, "site_dirs")) {
      if (dir.is_string()) {
        site_dirs.insert(dir.get<std::string>());
      }
    }
    const auto prefix = json_fields::string_or(python, "prefix");
    if (!prefix.empty()) {
      prefixes.insert(prefix);
    }
  }
  if (const auto conda = env.non_empty("CONDA_PREFIX")) {
    prefixes.insert(*conda);
  }
  content += "\n## wheels\n";
  for (const auto& dir : site_dirs) {
    list_matching(content, dir, ".dist-info", false);
  }
  content += "\n## conda-meta\n";
  int conda_prefixes = 0;
  for (const auto& prefix : prefixes) {
    const auto meta = fs::join(prefix, "conda-meta");
    if (fs::is_directory(meta)) {
      ++conda_prefixes;
      list_matching(content, meta, ".json", true);
    }
  }
  if (conda_prefixes == 0) {
    content += "(no conda prefix)\n";
  }
  evidence.files.push_back({"evidence/python-packages.txt",
                            std::move(content),
                            "listed " + std::to_string(site_dirs.size()) + " site-packages directories and " +
                                std::to_string(conda_prefixes) + " conda-meta directories (names only)",
                            {}});
}

std::string present(const std::string& path) {
  return path + ": " + (fs::exists(path) ? "present" : "absent") + "\n";
}

std::string first_line(const std::string& path) {
  auto text = fs::read_file_prefix(path, 4096);
  if (!text) {
    return "unreadable";
  }
  return one_line(std::string_view(*text).substr(0, text->find('\n')));
}

void add_os(Evidence& evidence, const json& report, const Environment& env, const EvidenceSources& sources) {
  const auto host = report.value("host", json::object());
  std::string content = "uname: " + json_fields::string_or(host, "os") + " " +
                        json_fields::string_or(host, "kernel") + " " +
                        json_fields::string_or(host, "machine") + "\n";
  content += "\n## " + sources.os_release + "\n";
  auto release = fs::read_file_prefix(sources.os_release, k_max_small_file);
  content += release ? report::to_valid_utf8(*release) : release.error().message + "\n";

  content += "\n## container hints\n";
  for (const auto& marker : sources.container_markers) {
    content += present(marker);
  }
  content += "container variable: " + one_line(env.get("container").value_or("(unset)")) + "\n";
  content +=
      "KUBERNETES_SERVICE_HOST: " + std::string(env.get("KUBERNETES_SERVICE_HOST") ? "set" : "unset") + "\n";
  auto cgroup = fs::read_file_prefix(sources.init_cgroup, 4096);
  content +=
      sources.init_cgroup + ":\n" + (cgroup ? report::to_valid_utf8(*cgroup) : cgroup.error().message + "\n");

  content += "\n## virtual machine hints\n";
  auto cpuinfo = fs::read_file_prefix(sources.cpuinfo, 1U << 20U);
  const bool hypervisor = cpuinfo && cpuinfo->find(" hypervisor") != std::string::npos;
  content +=
      sources.cpuinfo + " hypervisor flag: " + (cpuinfo ? (hypervisor ? "yes" : "no") : "unreadable") + "\n";
  for (const auto* field : {"sys_vendor", "product_name"}) {
    const auto path = fs::join(sources.dmi_dir, field);
    content += path + ": " + first_line(path) + "\n";
  }
  const auto version = first_line(sources.proc_version);
  const bool wsl = to_lower(version).find("microsoft") != std::string::npos;
  content += sources.proc_version + ": " + version + (wsl ? "  (WSL)" : "") + "\n";
  content += present(fs::join(sources.dev_dir, "dxg"));

  content += "\n## NVIDIA device nodes and kernel driver\n";
  std::string nodes;
  if (auto entries = fs::list_directory(sources.dev_dir)) {
    for (const auto& entry : *entries) {
      if (entry.rfind("nvidia", 0) == 0) {
        nodes += " " + one_line(entry);
      }
    }
  }
  content += sources.dev_dir + "/nvidia*:" + (nodes.empty() ? std::string(" none") : nodes) + "\n";
  auto gpus = fs::list_directory(sources.proc_driver_gpus);
  content += sources.proc_driver_gpus + ": ";
  if (!gpus) {
    content += gpus.error().message + "\n";
  } else {
    for (const auto& gpu : *gpus) {
      content += one_line(gpu) + " ";
    }
    content += "\n";
  }
  evidence.files.push_back({"evidence/os.txt",
                            std::move(content),
                            "uname (from the report), " + sources.os_release +
                                ", container and VM marker files, /dev and /proc/driver/nvidia listings",
                            {}});
}

} // namespace

bool relevant_variable(std::string_view name) {
  const auto key = upper(name);
  return std::find(k_relevant_names.begin(), k_relevant_names.end(), key) != k_relevant_names.end() ||
         starts_with_any(key, k_relevant_prefixes) || key == "ALL_PROXY";
}

std::string one_line(std::string_view text) {
  const auto valid = report::to_valid_utf8(text);
  std::string out;
  out.reserve(valid.size());
  constexpr std::string_view k_hex = "0123456789abcdef";
  for (const char c : valid) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (byte < 0x20 || byte == 0x7f) {
      out += "\\x";
      out += k_hex[byte >> 4U];
      out += k_hex[byte & 0x0fU];
    } else {
      out += c;
    }
  }
  return out;
}

Evidence collect_evidence(const json& report, const Environment& env, const EvidenceSources& sources) {
  Evidence evidence;
  evidence.files.push_back(environment_file(env));
  add_system_file(evidence, sources.proc_driver_version, "evidence/proc-driver-nvidia-version.txt",
                  "the NVIDIA kernel module's version");
  add_nvidia_smi(evidence, env, sources);
  add_ld_so_cache(evidence, report);
  add_python_packages(evidence, report, env);
  add_os(evidence, report, env, sources);
  return evidence;
}

} // namespace cudadiag::bundle
