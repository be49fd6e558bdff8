#include "report/report.hpp"

#include "core/filesystem.hpp"

#include <sys/utsname.h>

namespace cudadiag::report {

std::string_view to_string(SummaryStatus status) {
  switch (status) {
  case SummaryStatus::ok: return "ok";
  case SummaryStatus::warning: return "warning";
  case SummaryStatus::error: return "error";
  }
  return "error";
}

std::optional<SummaryStatus> parse_summary_status(std::string_view text) {
  for (const auto status : {SummaryStatus::ok, SummaryStatus::warning, SummaryStatus::error}) {
    if (to_string(status) == text) {
      return status;
    }
  }
  return std::nullopt;
}

SummaryStatus Summary::status() const {
  if (errors > 0) {
    return SummaryStatus::error;
  }
  return warnings > 0 ? SummaryStatus::warning : SummaryStatus::ok;
}

namespace {

bool plausible_node_name(std::string_view name) {
  if (name.empty() || name.size() > 253) {
    return false;
  }
  for (const char c : name) {
    if (c <= ' ' || c > '~') {
      return false;
    }
  }
  return true;
}

} // namespace

HostInfo read_host_info(const Environment& environment) {
  HostInfo host;
  for (const std::string_view variable : {"CUDADIAG_NODE_NAME", "SLURMD_NODENAME"}) {
    if (const auto value = environment.non_empty(variable); value && plausible_node_name(*value)) {
      host.node_name = *value;
      host.node_name_source = std::string(variable);
      break;
    }
  }
  struct utsname names {};
  if (::uname(&names) == 0) {
    host.os = names.sysname;
    host.kernel = names.release;
    host.machine = names.machine;
    host.hostname = names.nodename;
  }
  if (auto text = fs::read_file_prefix("/etc/os-release", 64 * 1024)) {
    std::string_view rest(*text);
    while (!rest.empty()) {
      const auto end = rest.find('\n');
      auto line = rest.substr(0, end);
      rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
      if (line.rfind("PRETTY_NAME=", 0) == 0) {
        line.remove_prefix(12);
        if (line.size() >= 2 && line.front() == '"' && line.back() == '"') {
          line = line.substr(1, line.size() - 2);
        }
        host.distro = std::string(line);
      }
    }
  }
  return host;
}

Summary summarize(const std::vector<findings::Finding>& found, FailOn fail_on) {
  Summary summary;
  for (const auto& finding : found) {
    switch (finding.severity) {
    case findings::Severity::error: ++summary.errors; break;
    case findings::Severity::warning: ++summary.warnings; break;
    case findings::Severity::info: ++summary.infos; break;
    }
  }
  summary.fail_on = fail_on;
  const bool fails = summary.errors > 0 || (fail_on == FailOn::warning && summary.warnings > 0);
  summary.exit_code = fails ? 1 : 0;
  return summary;
}

const std::vector<std::string_view>& reported_variables() {
  static const std::vector<std::string_view> names = {
      "CUDA_PATH", "CUDA_HOME", "LD_LIBRARY_PATH", "LD_PRELOAD", "CONDA_PREFIX", "VIRTUAL_ENV", "PATH",
      "PYENV_VERSION", "PYENV_ROOT", "PYTHONPATH", "PYTHONNOUSERSITE", "PYTHONUSERBASE", "CUDNN_PATH",
      "NCCL_HOME", "CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES", "CUDA_MODULE_LOADING", "LIBRARY_PATH",
      // What changes where the frameworks look or what they check:
      "CONDA_OVERRIDE_CUDA", "JAX_SKIP_CUDA_CONSTRAINTS_CHECK", "TRITON_PTXAS_PATH",
      "TRITON_PTXAS_BLACKWELL_PATH", "TRITON_CUOBJDUMP_PATH", "TRITON_NVDISASM_PATH", "TRITON_LIBCUDA_PATH",
      "CUPY_CUDA_PATH", "CUPY_CUDA_LIB_PATH", "NVIDIA_DISABLE_REQUIRE"};
  return names;
}

} // namespace cudadiag::report
