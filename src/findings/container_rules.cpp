#include "findings/container_rules.hpp"

#include "core/filesystem.hpp"
#include "elf/elf_note.hpp"
#include "findings/repair.hpp"
#include "loader/ld_so_conf.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <set>
#include <string_view>
#include <utility>

namespace cudadiag::findings {
namespace {

// The CUDA version each driver branch reports (cuDriverGetVersion), from the CUDA Toolkit release
// notes' "CUDA Toolkit and Corresponding Driver Versions" table (570.86.10: 12.8 GA, 575.51.03:
// 12.9, 580.65.06: 13.0) and the toolkit's compat notes (575.57.08: "CUDA Version" 12.9,
// 590.44.01: 13.1; NVIDIA/nvidia-container-toolkit cmd/nvidia-cdi-hook/cudacompat tests).
struct BranchCuda {
  int branch;
  std::string_view cuda;
};
constexpr std::array<BranchCuda, 12> k_branch_cuda = {{
    {525, "12.0"},
    {530, "12.1"},
    {535, "12.2"},
    {545, "12.3"},
    {550, "12.4"},
    {555, "12.5"},
    {560, "12.6"},
    {565, "12.7"},
    {570, "12.8"},
    {575, "12.9"},
    {580, "13.0"},
    {590, "13.1"},
}};

// NVML's brand numbers (nvmlBrandType_t), which the compat note's "Device" list holds.
struct BrandNumber {
  std::string_view name; // as NVIDIA_REQUIRE_* spells it (lower case)
  int number;
};
constexpr std::array<BrandNumber, 16> k_brands = {{
    {"quadro", 1},
    {"tesla", 2},
    {"nvs", 3},
    {"grid", 4},
    {"geforce", 5},
    {"titan", 6},
    {"vapps", 7},
    {"vpc", 8},
    {"vcs", 9},
    {"vws", 10},
    {"cloudgaming", 11},
    {"quadrortx", 12},
    {"nvidiartx", 13},
    {"nvidia", 14},
    {"geforcertx", 15},
    {"titanrtx", 16},
}};

constexpr std::string_view k_compat_dir = "/usr/local/cuda/compat";
constexpr std::string_view k_mismatch_803 =
    "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH (803): system has unsupported display "
    "driver / cuda driver combination";
constexpr std::string_view k_compat_804 = "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE (804): forward "
                                          "compatibility was attempted on non supported HW";

std::vector<std::string> split(std::string_view text, char separator) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= text.size()) {
    const auto end = std::min(text.find(separator, start), text.size());
    if (end > start) {
      out.emplace_back(text.substr(start, end - start));
    }
    start = end + 1;
  }
  return out;
}

// Dot-separated numbers; nullopt when a part is not a number.
std::optional<std::vector<long>> numbers(std::string_view text) {
  std::vector<long> out;
  for (const auto& part : split(text, '.')) {
    if (part.empty() || part.size() > 9 ||
        !std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return std::nullopt;
    }
    out.push_back(std::stol(part));
  }
  if (out.empty()) {
    return std::nullopt;
  }
  return out;
}

// <0, 0, >0 as dsl.c compares versions: numerically, part by part, missing parts as 0.
std::optional<int> compare_versions(std::string_view left, std::string_view right) {
  const auto a = numbers(left);
  const auto b = numbers(right);
  if (!a || !b) {
    return std::nullopt;
  }
  for (std::size_t i = 0; i < std::max(a->size(), b->size()); ++i) {
    const long x = i < a->size() ? (*a)[i] : 0;
    const long y = i < b->size() ? (*b)[i] : 0;
    if (x != y) {
      return x < y ? -1 : 1;
    }
  }
  return 0;
}

std::optional<int> branch_of(std::string_view version) {
  const auto parts = numbers(version);
  return parts ? std::optional<int>(static_cast<int>(parts->front())) : std::nullopt;
}

std::string lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

bool condition_holds(const std::string& condition, const TargetHost& host) {
  std::size_t key_end = 0;
  while (key_end < condition.size() && std::isalpha(static_cast<unsigned char>(condition[key_end])) != 0) {
    ++key_end;
  }
  const auto key = lower(condition.substr(0, key_end));
  std::string op;
  for (const std::string_view candidate : {">=", "<=", "!=", "=", "<", ">"}) {
    if (condition.compare(key_end, candidate.size(), candidate) == 0) {
      op = candidate;
      break;
    }
  }
  if (op.empty()) {
    return false; // libnvidia-container: "invalid expression"
  }
  const auto value = condition.substr(key_end + op.size());
  std::string actual;
  if (key == "cuda") {
    actual = cuda_version_of_driver(host.driver);
  } else if (key == "driver") {
    actual = host.driver;
  } else if (key == "arch") {
    actual = host.arch;
  } else if (key == "brand") {
    if (host.brand.empty()) {
      return true;
    }
    const bool same = lower(value) == lower(host.brand);
    return op == "=" ? same : op == "!=" ? !same : false;
  } else {
    return false;
  }
  if (actual.empty()) {
    return true; // unknown: satisfied, as a NULL property is
  }
  const auto order = compare_versions(actual, value);
  if (!order) {
    return false;
  }
  return op == "="    ? *order == 0
         : op == "!=" ? *order != 0
         : op == "<"  ? *order < 0
         : op == "<=" ? *order <= 0
         : op == ">"  ? *order > 0
                      : *order >= 0;
}

// Go's strconv.ParseBool, as the toolkit reads NVIDIA_DISABLE_REQUIRE.
bool parse_bool(const std::string& text) {
  return text == "1" || text == "t" || text == "T" || text == "true" || text == "TRUE" || text == "True";
}

// The layer that put `path` there: by the name, else by its real path (a file reached through
// /usr/local/cuda -> cuda-12.9 was written under the latter).
const image::Layer* layer_for(const image::Image* image, const std::string& path) {
  if (image == nullptr) {
    return nullptr;
  }
  if (const auto* layer = image->layer_of(path)) {
    return layer;
  }
  const auto real = fs::real_path(path);
  return real ? image->layer_of(*real) : nullptr;
}

// " (layer 2 of 3, sha256:…)" for a file an image's layer put there, "" otherwise.
std::string layer_words(const image::Image* image, const std::string& path) {
  const auto* layer = layer_for(image, path);
  if (layer == nullptr) {
    return "";
  }
  const auto index = static_cast<std::size_t>(layer - image->info.layers.data());
  return " (layer " + std::to_string(index + 1) + " of " + std::to_string(image->info.layers.size()) + ", " +
         layer->digest + ")";
}

std::string layer_digest(const image::Image* image, const std::string& path) {
  const auto* layer = layer_for(image, path);
  return layer == nullptr ? std::string() : layer->digest;
}

// Where a variable of the environment comes from, for a message.
std::string variable_source(const Environment& env, const image::Image* image, const std::string& name) {
  if (image != nullptr && image->info.has_config) {
    const auto prefix = name + "=";
    for (const auto& entry : image->info.config.env) {
      if (entry.rfind(prefix, 0) == 0 && env.get(name) == entry.substr(prefix.size())) {
        return "the image config's Env" +
               (image->info.config_digest.empty() ? std::string() : " (" + image->info.config_digest + ")");
      }
    }
  }
  return "the container's environment";
}

std::string host_words(const TargetHost& host) {
  const auto cuda = cuda_version_of_driver(host.driver);
  return "driver " + host.driver + (cuda.empty() ? std::string() : " (CUDA " + cuda + ")") + ", from " +
         host.source;
}

// The integers of the JSON array after "key": in the note's descriptor ("Driver":[535,550]).
std::vector<int> note_numbers(std::string_view json, std::string_view key) {
  std::vector<int> out;
  const auto at = json.find("\"" + std::string(key) + "\"");
  if (at == std::string_view::npos) {
    return out;
  }
  const auto open = json.find('[', at);
  const auto close = json.find(']', open == std::string_view::npos ? at : open);
  if (open == std::string_view::npos || close == std::string_view::npos) {
    return out;
  }
  for (const auto& item : split(json.substr(open + 1, close - open - 1), ',')) {
    const auto trimmed = item.substr(
        item.find_first_not_of(" \t\n") == std::string::npos ? item.size() : item.find_first_not_of(" \t\n"));
    if (const auto value = numbers(trimmed.substr(0, trimmed.find_last_not_of(" \t\n") + 1));
        value && value->size() == 1) {
      out.push_back(static_cast<int>(value->front()));
    }
  }
  return out;
}

std::optional<int> brand_number(const std::string& brand) {
  for (const auto& row : k_brands) {
    if (row.name == lower(brand)) {
      return row.number;
    }
  }
  return std::nullopt;
}

void requirement_findings(const Environment& env, const image::Image* image, const TargetHost& host,
                          std::vector<Finding>& out) {
  if (parse_bool(env.get("NVIDIA_DISABLE_REQUIRE").value_or(""))) {
    return;
  }
  std::vector<std::pair<std::string, std::string>> requirements; // variable, value
  for (const auto& [name, value] : env.variables()) {
    if (name.rfind("NVIDIA_REQUIRE_", 0) == 0 && name.rfind("NVIDIA_REQUIRE_JETPACK", 0) != 0) {
      requirements.emplace_back(name, value);
    }
  }
  const auto cuda_version = env.non_empty("CUDA_VERSION");
  if (cuda_version && !env.non_empty("NVIDIA_REQUIRE_CUDA")) {
    if (const auto parts = numbers(*cuda_version); parts && parts->size() >= 2) {
      requirements.emplace_back("CUDA_VERSION",
                                "cuda>=" + std::to_string((*parts)[0]) + "." + std::to_string((*parts)[1]));
    }
  }
  for (const auto& [variable, requirement] : requirements) {
    const auto unmet = unmet_requirement(requirement, host);
    if (!unmet) {
      continue;
    }
    const auto error =
        "nvidia-container-cli: requirement error: unsatisfied condition: " + *unmet +
        (unmet->rfind("cuda>=", 0) == 0
             ? ", please update your driver to a newer version, or use an earlier cuda container"
             : "");
    auto finding = make_finding(
        "container.requirement_unmet",
        "`docker run --gpus` (the NVIDIA Container Toolkit's legacy hook) refuses to start this image on " +
            host_words(host) + ": \"" + error + "\"; " + variable + "=\"" + requirement + "\" comes from " +
            variable_source(env, image, variable) +
            ". The nvidia runtime's default jit-cdi mode (toolkit 1.18 and later) does not check it: there "
            "the "
            "container starts and CUDA fails inside it (35, CUDA driver version is insufficient for CUDA "
            "runtime "
            "version) unless a forward-compatibility libcuda carries it",
        {"cuda"},
        {{"variable", variable},
         {"requirement", requirement},
         {"unmet", *unmet},
         {"error", error},
         {"host_driver", host.driver},
         {"host_cuda", cuda_version_of_driver(host.driver)},
         {"mode", "legacy"}});
    out.push_back(std::move(finding));
  }
}

bool same_directory(const std::string& a, const std::string& b) {
  if (fs::lexically_normal(a) == fs::lexically_normal(b)) {
    return true;
  }
  const auto real_a = fs::real_path(a);
  const auto real_b = fs::real_path(b);
  return real_a && real_b && *real_a == *real_b;
}

// What puts `directory` on the loader's path inside the container: "LD_LIBRARY_PATH", or the
// ld.so.conf.d file that lists it (the toolkit's ldcache update reads the image's configuration);
// "" when nothing does.
std::string forced_by(const Environment& env, const std::string& directory) {
  for (const auto& entry : split_search_path(env.get("LD_LIBRARY_PATH").value_or(""))) {
    if (!entry.empty() && same_directory(entry, directory)) {
      return "LD_LIBRARY_PATH";
    }
  }
  const auto conf = loader::read_ld_so_conf("/etc/ld.so.conf");
  for (const auto& entry : conf.entries) {
    if (same_directory(entry.directory, directory)) {
      return entry.file + ":" + std::to_string(entry.line);
    }
  }
  return "";
}

void compat_findings(const Environment& env, const image::Image* image, const TargetHost& host,
                     std::vector<Finding>& out) {
  const std::string directory(k_compat_dir);
  auto names = fs::list_directory(directory);
  if (!names || host.driver.empty()) {
    return;
  }
  std::vector<std::string> copies;
  for (const auto& name : *names) {
    const auto path = directory + "/" + name;
    if (name.rfind("libcuda.so.", 0) == 0 && name.find('.', 11) != std::string::npos &&
        !fs::is_symlink(path) && fs::is_regular_file(path)) {
      copies.push_back(name);
    }
  }
  if (copies.size() != 1) {
    return; // the toolkit's hook does nothing unless exactly one libcuda.so.*.* is there
  }
  const auto path = directory + "/" + copies.front();
  const auto version = copies.front().substr(11);
  const auto newer = compare_versions(version, host.driver);
  const auto host_branch = branch_of(host.driver);
  const auto compat_branch = branch_of(version);
  if (!newer || !host_branch || !compat_branch) {
    return;
  }
  const auto note = elf::read_section_note(path, ".note.cuda.fwd_compatibility");
  const bool has_note = note && note.value().has_value();
  const auto drivers = has_note ? note_numbers(note.value()->desc, "Driver") : std::vector<int>{};
  const auto devices = has_note ? note_numbers(note.value()->desc, "Device") : std::vector<int>{};
  const bool branch_listed = std::find(drivers.begin(), drivers.end(), *host_branch) != drivers.end();
  const bool toolkit_uses = has_note ? branch_listed && *newer > 0 : *compat_branch > *host_branch;
  const auto forced = forced_by(env, directory);
  if (!toolkit_uses && forced.empty()) {
    return;
  }
  const auto where = path + layer_words(image, path);
  const auto how = !forced.empty()
                       ? "forced onto the loader's path by " + forced
                       : std::string("chosen by the NVIDIA Container Toolkit (1.19 and later: ") +
                             (has_note ? "its .note.cuda.fwd_compatibility lists the host's branch " +
                                             std::to_string(*host_branch) + " and it is newer"
                                       : "no .note.cuda.fwd_compatibility, and its major is newer") +
                             ")";
  Evidence evidence{{"path", path},
                    {"compat_version", version},
                    {"host_driver", host.driver},
                    {"how", how},
                    {"layer", layer_digest(image, path)},
                    {"note", has_note ? EvidenceValue(note.value()->desc) : EvidenceValue(nullptr)}};
  const auto brand = brand_number(host.brand);
  std::string failure;
  if (*newer < 0 || (has_note && !branch_listed && !forced.empty())) {
    failure = std::string(k_mismatch_803);
    evidence.set("code", 803);
  } else if (has_note && brand && std::find(devices.begin(), devices.end(), *brand) == devices.end()) {
    failure = std::string(k_compat_804);
    evidence.set("code", 804);
  }
  if (failure.empty()) {
    out.push_back(make_finding(
        "driver.forward_compat",
        "in the container the image's forward-compatibility libcuda " + version + " (" + where +
            ") takes over from " + host_words(host) + ", " + how +
            ": it works only on the GPU brands its note lists" +
            (host.brand.empty() ? " (the host's brand is not known: --assume-gpu brand=...)" : "") +
            "; on others cuInit fails with " + std::string(k_compat_804),
        {"cuda"}, std::move(evidence)));
    return;
  }
  evidence.set("predicted", true);
  evidence.set("name", *newer < 0 ? "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"
                                  : "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE");
  evidence.set("description", failure);
  auto finding = make_finding(
      "driver.init_failed",
      "in the container cuInit will fail with " + failure + ": the image's forward-compatibility libcuda " +
          version + " (" + where + ") is " + how + ", on " + host_words(host) +
          (*newer < 0 ? " — an older copy than the host's driver, which it cannot drive"
           : !host.brand.empty()
               ? " — the host's GPU brand (" + host.brand + ") is not in its note's Device list"
               : ""),
      {"cuda"}, std::move(evidence));
  finding.repair = Repair::fix_environment;
  finding.remedy =
      !forced.empty() && forced != "LD_LIBRARY_PATH"
          ? "Remove " + forced.substr(0, forced.rfind(':')) +
                " from the image (let the NVIDIA Container Toolkit decide when the compat libraries apply), "
                "or give the image a compat package at least as new as the host driver"
          : "Remove " + directory +
                " from LD_LIBRARY_PATH in the image (let the NVIDIA Container Toolkit "
                "decide when the compat libraries apply), or run it on a supported GPU";
  out.push_back(std::move(finding));
}

// libcuda.so.<version> or libnvidia-ml.so.<version> (two or three numbers): a driver's own file.
std::optional<std::string> driver_file_version(std::string_view name) {
  for (const std::string_view prefix : {"libcuda.so.", "libnvidia-ml.so."}) {
    if (name.rfind(prefix, 0) == 0) {
      const auto version = name.substr(prefix.size());
      const auto parts = numbers(version);
      if (parts && parts->size() >= 2 && parts->size() <= 3 && parts->front() >= 300) {
        return std::string(version);
      }
    }
  }
  return std::nullopt;
}

void baked_driver_findings(const Environment& env, const image::Image* image, const TargetHost& host,
                           std::vector<Finding>& out) {
  if (host.driver.empty()) {
    return;
  }
  std::set<std::string> files;
  if (image != nullptr && !image->origin.empty()) {
    for (const auto& [path, layer] : image->origin) {
      files.insert(path);
    }
  } else {
    std::vector<std::string> dirs = {"/usr/lib/x86_64-linux-gnu",
                                     "/usr/lib/aarch64-linux-gnu",
                                     "/usr/lib64",
                                     "/usr/lib",
                                     "/lib/x86_64-linux-gnu",
                                     "/lib64",
                                     "/usr/local/nvidia/lib64",
                                     "/usr/local/nvidia/lib"};
    for (const auto& dir : dirs) {
      if (auto names = fs::list_directory(dir)) {
        for (const auto& name : *names) {
          files.insert(dir + "/" + name);
        }
      }
    }
  }
  const auto on_path = split_search_path(env.get("LD_LIBRARY_PATH").value_or(""));
  Evidence::List baked;
  std::string first;
  std::string newest;
  for (const auto& path : files) {
    if (path.find("/compat/") != std::string::npos || path.find("/stubs/") != std::string::npos) {
      continue;
    }
    const auto version = driver_file_version(fs::basename(path));
    if (!version || *version == host.driver || fs::is_symlink(path) || !fs::is_regular_file(path)) {
      continue;
    }
    const auto order = compare_versions(*version, host.driver);
    const bool listed = std::any_of(on_path.begin(), on_path.end(), [&path](const std::string& entry) {
      return !entry.empty() && same_directory(entry, fs::parent(path));
    });
    if (!order || (*order < 0 && !listed)) {
      continue; // older, in a directory only ldconfig orders: the host's injected copy is newer and wins
    }
    baked.emplace_back(path + layer_words(image, path));
    if (first.empty()) {
      first = path + layer_words(image, path);
      newest = *version;
    }
  }
  if (baked.empty()) {
    return;
  }
  auto finding = make_finding(
      "driver.init_failed",
      "in the container the driver's user-space libraries baked into the image win over the host's: " +
          first + (baked.size() > 1 ? " and " + std::to_string(baked.size() - 1) + " more" : std::string()) +
          ", version " + newest + ", on " + host_words(host) + ": cuInit fails with " +
          std::string(k_mismatch_803) +
          " and nvidia-smi with \"Failed to initialize NVML: Driver/library version mismatch\"",
      {"cuda"},
      {{"path", first},
       {"files", std::move(baked)},
       {"code", 803},
       {"name", "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH"},
       {"description", std::string(k_mismatch_803)},
       {"host_driver", host.driver},
       {"predicted", true}});
  finding.repair = Repair::reinstall_package;
  finding.remedy =
      "Rebuild the image without the driver's libraries (the NVIDIA Container Toolkit injects the host's "
      "at start): do not install a driver package in it, and do not build it on a host whose Docker "
      "default runtime is nvidia";
  out.push_back(std::move(finding));
}

void capability_findings(const Environment& env, const image::Image* image, std::vector<Finding>& out) {
  const bool legacy_image = env.non_empty("CUDA_VERSION") && !env.non_empty("NVIDIA_REQUIRE_CUDA");
  const auto value = env.get("NVIDIA_DRIVER_CAPABILITIES");
  if (!value || (value->empty() && legacy_image)) {
    return; // unset: utility,compute (a legacy image: all)
  }
  const auto capabilities =
      value->empty() ? std::vector<std::string>{"utility", "compute"} : split(*value, ',');
  if (std::find(capabilities.begin(), capabilities.end(), "all") != capabilities.end()) {
    return;
  }
  std::vector<std::string> missing;
  for (const std::string needed : {"utility", "compute"}) {
    if (std::find(capabilities.begin(), capabilities.end(), needed) == capabilities.end()) {
      missing.push_back(needed);
    }
  }
  if (missing.empty()) {
    return;
  }
  std::string what;
  Evidence::List list;
  for (const auto& capability : missing) {
    list.emplace_back(capability);
    what += what.empty() ? "" : "; ";
    what += capability == "utility"
                ? "no utility: nvidia-smi and libnvidia-ml are not injected (\"nvidia-smi: not "
                  "found\", \"NVIDIA-SMI couldn't find libnvidia-ml.so library in your system\")"
                : "no compute: libcuda is not injected (CUDA finds no driver)";
  }
  out.push_back(make_finding("container.capability_missing",
                             "NVIDIA_DRIVER_CAPABILITIES=\"" + *value + "\" (from " +
                                 variable_source(env, image, "NVIDIA_DRIVER_CAPABILITIES") +
                                 ") in the legacy mode (docker run --gpus): " + what +
                                 ". The CDI and jit-cdi modes inject every driver library whatever it says",
                             {"cuda"},
                             {{"variable", "NVIDIA_DRIVER_CAPABILITIES"},
                              {"value", *value},
                              {"missing", std::move(list)},
                              {"mode", "legacy"}}));
}

} // namespace

std::string cuda_version_of_driver(const std::string& driver) {
  const auto branch = branch_of(driver);
  if (!branch) {
    return "";
  }
  std::string_view found;
  for (const auto& row : k_branch_cuda) {
    if (row.branch <= *branch) {
      found = row.cuda;
    }
  }
  return std::string(found);
}

std::optional<std::string> unmet_requirement(const std::string& requirement, const TargetHost& host) {
  const auto alternatives = split(requirement, ' ');
  if (alternatives.empty()) {
    return std::nullopt;
  }
  for (const auto& alternative : alternatives) {
    const auto conditions = split(alternative, ',');
    if (std::all_of(conditions.begin(), conditions.end(),
                    [&host](const std::string& condition) { return condition_holds(condition, host); })) {
      return std::nullopt;
    }
  }
  return alternatives.front();
}

std::vector<Finding> evaluate_container(const Environment& env, const image::Image* image,
                                        const TargetHost& host) {
  std::vector<Finding> out;
  if (!host.driver.empty()) {
    requirement_findings(env, image, host, out);
  }
  compat_findings(env, image, host, out);
  baked_driver_findings(env, image, host, out);
  capability_findings(env, image, out);
  return out;
}

} // namespace cudadiag::findings
