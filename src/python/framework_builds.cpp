#include "python/framework_builds.hpp"

#include "core/filesystem.hpp"
#include "versions/tool_binary_version.hpp"

#include <algorithm>
#include <array>
#include <optional>

namespace cudadiag::python {

namespace {

constexpr std::size_t k_max_python_file_bytes = 1U << 20U;

bool is_space(char c) {
  return c == ' ' || c == '\t';
}

std::string_view skip_spaces(std::string_view text) {
  while (!text.empty() && is_space(text.front())) {
    text.remove_prefix(1);
  }
  return text;
}

// The first regular file `relative` names under the site directories (Python's import order); "" when none.
std::string file_in_sites(const std::vector<std::string>& site_dirs, std::string_view relative) {
  for (const auto& site : site_dirs) {
    if (auto path = fs::join(site, relative); fs::is_regular_file(path)) {
      return path;
    }
  }
  return "";
}

// The first existing `relative` file under the site directories, read (bounded).
std::optional<std::pair<std::string, std::string>> read_in_sites(const std::vector<std::string>& site_dirs,
                                                                 const std::string& relative) {
  for (const auto& site : site_dirs) {
    const auto path = fs::join(site, relative);
    if (auto text = fs::read_file_prefix(path, k_max_python_file_bytes)) {
      return std::make_pair(path, std::move(*text));
    }
  }
  return std::nullopt;
}

// "12" from "cupy-cuda12x", "13" from "jax-cuda13-plugin"; "" when the name has no cudaNN.
std::string major_in_name(std::string_view name) {
  const auto at = name.find("cuda");
  if (at == std::string_view::npos) {
    return "";
  }
  std::string digits;
  for (std::size_t i = at + 4; i < name.size() && name[i] >= '0' && name[i] <= '9' && digits.size() < 3;
       ++i) {
    digits += name[i];
  }
  return digits;
}

// The ptxas binaries Triton runs, with the variable that replaces each: ptxas for every GPU, and
// from Triton 3.4 on ptxas-blackwell for compute capability 10.0 and newer. Triton 2.x kept ptxas
// in third_party/cuda/bin.
struct TritonPtxas {
  std::string_view bundled;
  std::string_view legacy; // "" when there is none
  std::string_view variable;
};
constexpr std::array<TritonPtxas, 2> k_triton_ptxas{{
    {"triton/backends/nvidia/bin/ptxas", "triton/third_party/cuda/bin/ptxas", "TRITON_PTXAS_PATH"},
    {"triton/backends/nvidia/bin/ptxas-blackwell", "", "TRITON_PTXAS_BLACKWELL_PATH"},
}};

// The release of each ptxas Triton would run (the override where it names a file, else the bundled
// one); a binary without a readable version string is left out (unknown, not guessed).
void add_triton_ptxas(const std::vector<std::string>& site_dirs, const Distribution& triton,
                      const Environment& env, std::vector<FrameworkBuild>& out) {
  for (const auto& binary : k_triton_ptxas) {
    std::string path;
    std::string how;
    if (const auto overridden = env.non_empty(binary.variable);
        overridden && fs::is_regular_file(*overridden)) {
      path = *overridden;
      how = std::string(binary.variable) + "=" + path;
    } else {
      // The first site directory holding either layout: the triton package Python imports.
      for (const auto& site : site_dirs) {
        for (const auto relative : {binary.bundled, binary.legacy}) {
          if (path.empty() && !relative.empty() && fs::is_regular_file(fs::join(site, relative))) {
            path = fs::join(site, relative);
          }
        }
      }
      how = path;
    }
    if (path.empty()) {
      continue;
    }
    if (const auto release = versions::cuda_tool_release(path)) {
      out.push_back({triton.name, triton.version, release.value().release,
                     how + " (its version string: V" + release.value().version + ")",
                     std::string(binary.bundled.substr(binary.bundled.rfind('/') + 1))});
    }
  }
}

} // namespace

namespace {

// What follows `key`'s `=`, `:` (a dict literal) or `,` (a quoted key opening a pair) on the first
// line that assigns it, spaces skipped; nullopt when no line does.
std::optional<std::string_view> value_of_key(std::string_view text, std::string_view key) {
  std::size_t from = 0;
  while (from < text.size()) {
    const auto end = text.find('\n', from);
    std::string_view line = skip_spaces(text.substr(from, end == std::string_view::npos ? end : end - from));
    from = end == std::string_view::npos ? text.size() : end + 1;
    // Every place the key appears on the line, bare or quoted (dict literals hold several keys).
    for (std::size_t at = line.find(key); at != std::string_view::npos; at = line.find(key, at + 1)) {
      const bool quoted = at > 0 && (line[at - 1] == '\'' || line[at - 1] == '"');
      const bool bare = at == 0;
      if (!quoted && !bare) {
        continue;
      }
      auto rest = line.substr(at + key.size());
      if (quoted) {
        if (rest.empty() || rest.front() != line[at - 1]) {
          continue;
        }
        rest = skip_spaces(rest.substr(1));
        const bool pair = at > 1 && skip_spaces(line.substr(0, at - 1)).ends_with('(');
        if (rest.empty() || (rest.front() != ':' && !(pair && rest.front() == ','))) {
          continue;
        }
      } else {
        rest = skip_spaces(rest);
        if (!rest.empty() && rest.front() == ':') { // an annotation: "cuda: Optional[str] = ..."
          const auto equals = rest.find('=');
          if (equals == std::string_view::npos) {
            continue;
          }
          rest = rest.substr(equals);
        }
        if (rest.empty() || rest.front() != '=') {
          continue;
        }
      }
      return skip_spaces(rest.substr(1));
    }
  }
  return std::nullopt;
}

// The string literal `rest` starts with, and what follows it; nullopt when it starts with none.
std::optional<std::pair<std::string, std::string_view>> leading_string(std::string_view rest) {
  if (rest.empty() || (rest.front() != '\'' && rest.front() != '"')) {
    return std::nullopt;
  }
  const char quote = rest.front();
  const auto close = rest.find(quote, 1);
  if (close == std::string_view::npos) {
    return std::nullopt;
  }
  return std::make_pair(std::string(rest.substr(1, close - 1)), rest.substr(close + 1));
}

} // namespace

std::optional<std::string> python_string_assignment(std::string_view text, std::string_view key) {
  const auto rest = value_of_key(text, key);
  if (!rest) {
    return std::nullopt;
  }
  auto literal = leading_string(*rest);
  if (!literal) {
    return std::nullopt; // None, or something that is not a string literal
  }
  return std::move(literal->first);
}

std::optional<std::vector<std::string>> python_string_list_assignment(std::string_view text,
                                                                      std::string_view key) {
  auto rest = value_of_key(text, key);
  if (!rest || rest->empty() || rest->front() != '[') {
    return std::nullopt;
  }
  std::vector<std::string> items;
  std::string_view tail = skip_spaces(rest->substr(1));
  while (!tail.empty() && tail.front() != ']') {
    auto literal = leading_string(tail);
    if (!literal) {
      return std::nullopt;
    }
    items.push_back(std::move(literal->first));
    tail = skip_spaces(literal->second);
    if (!tail.empty() && tail.front() == ',') {
      tail = skip_spaces(tail.substr(1));
    }
  }
  if (tail.empty()) {
    return std::nullopt; // the list does not close on its line
  }
  return items;
}

std::optional<elf::GpuCode> gpu_code_from_name(std::string_view name) {
  elf::GpuCode code;
  if (name.starts_with("sm_")) {
    code.kind = elf::GpuCodeKind::sass;
    name.remove_prefix(3);
  } else if (name.starts_with("compute_")) {
    code.kind = elf::GpuCodeKind::ptx;
    name.remove_prefix(8);
  } else {
    return std::nullopt;
  }
  if (!name.empty() && (name.back() == 'a' || name.back() == 'f')) {
    code.variant = name.back();
    name.remove_suffix(1);
  }
  if (name.size() < 2 || name.size() > 3 ||
      !std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  code.arch = std::stoi(std::string(name));
  return code;
}

void read_framework_gpu_code(std::vector<FrameworkBuild>& frameworks) {
  for (auto& build : frameworks) {
    if (build.gpu_code || build.gpu_code_source.empty()) {
      continue;
    }
    auto read = elf::read_gpu_code(build.gpu_code_source);
    if (!read) {
      build.gpu_code_problem = read.error().message;
      continue;
    }
    build.gpu_code_problem = read->problem.value_or("");
    build.gpu_code = std::move(read->codes);
  }
}

std::vector<FrameworkBuild> framework_builds(const std::vector<std::string>& site_dirs,
                                             const std::vector<Distribution>& installed,
                                             const Environment& env) {
  std::vector<FrameworkBuild> out;
  for (const auto& distribution : installed) {
    const auto& name = distribution.canonical_name;
    if (name == "torch") {
      if (const auto file = read_in_sites(site_dirs, "torch/version.py")) {
        if (auto cuda = python_string_assignment(file->second, "cuda"); cuda && !cuda->empty()) {
          FrameworkBuild build{distribution.name, distribution.version, std::move(*cuda), file->first, ""};
          // Beside version.py: torch/lib/libtorch_cuda.so holds the kernels (read when a GPU is known).
          const auto library = fs::join(fs::parent(file->first), "lib/libtorch_cuda.so");
          if (fs::is_regular_file(library)) {
            build.gpu_code_source = library;
          }
          out.push_back(std::move(build));
        }
      }
    } else if (name == "tensorflow") {
      if (const auto file = read_in_sites(site_dirs, "tensorflow/python/platform/build_info.py")) {
        if (auto cuda = python_string_assignment(file->second, "cuda_version"); cuda && !cuda->empty()) {
          FrameworkBuild build{distribution.name, distribution.version, std::move(*cuda), file->first, ""};
          if (const auto names = python_string_list_assignment(file->second, "cuda_compute_capabilities")) {
            std::vector<elf::GpuCode> codes;
            for (const auto& code_name : *names) {
              if (const auto code = gpu_code_from_name(code_name)) {
                codes.push_back(*code);
              }
            }
            if (!codes.empty()) {
              build.gpu_code = std::move(codes);
              build.gpu_code_source = file->first;
            }
          }
          out.push_back(std::move(build));
        }
      }
    } else if (name == "triton") {
      add_triton_ptxas(site_dirs, distribution, env, out);
    } else if (name == "cuda-bindings" || name == "cuda-python") {
      // cuda-bindings' major is the CUDA major it binds (its conda packages depend on
      // cuda-version >=MAJOR,<MAJOR+1; cuda-python MAJOR pulls cuda-bindings MAJOR): 13.x needs a
      // CUDA 13 driver, R580+ (NVIDIA/cutlass#2866: "13.0+ cuda-python requires 580+ driver").
      // cuda-core and numba-cuda run on either major, through the cuda-bindings installed.
      const auto major = distribution.version.substr(0, distribution.version.find('.'));
      if (major == "11" || major == "12" || major == "13") {
        out.push_back(
            {distribution.name, distribution.version, major, "the distribution's major version", ""});
      }
    } else if (name.starts_with("jax-cuda") || name.starts_with("cupy-cuda")) {
      if (auto major = major_in_name(name); !major.empty()) {
        FrameworkBuild build{distribution.name, distribution.version, major, "the distribution's name", ""};
        // JAX's PJRT plugin holds XLA's own kernels (read when a GPU is known); CuPy compiles its
        // kernels at run time (NVRTC), so its GPU code stays unknown.
        if (name.ends_with("-pjrt")) {
          build.gpu_code_source =
              file_in_sites(site_dirs, "jax_plugins/xla_cuda" + major + "/xla_cuda_plugin.so");
        }
        out.push_back(std::move(build));
      }
    }
  }
  return out;
}

} // namespace cudadiag::python
