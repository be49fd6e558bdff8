#include "findings/verification_rules.hpp"

#include "core/filesystem.hpp"
#include "verify/facts_codec.hpp"
#include "verify/nvrtc_builtins_preload.hpp"
#include "versions/version_sources.hpp"

#include <array>
#include <charconv>
#include <string>
#include <tuple>

namespace cudadiag::findings {
namespace {

using MajorMinor = std::pair<int, int>;

struct PtxIsaRow {
  MajorMinor cuda;
  MajorMinor isa;
};

// PTX ISA per CUDA release. A driver JITs PTX up to its own release's ISA.
constexpr std::array<PtxIsaRow, 12> k_ptx_isa = {{
    {{12, 0}, {8, 0}},
    {{12, 1}, {8, 1}},
    {{12, 2}, {8, 2}},
    {{12, 3}, {8, 3}},
    {{12, 4}, {8, 4}},
    {{12, 5}, {8, 5}},
    {{12, 6}, {8, 5}},
    {{12, 8}, {8, 7}},
    {{12, 9}, {8, 8}},
    {{13, 0}, {9, 0}},
    {{13, 1}, {9, 1}},
    {{13, 2}, {9, 2}},
}};

// The minimum driver branch per CUDA major (minor-version compatibility within a major).
struct DriverBranchRow {
  int cuda_major;
  int driver_branch;
};
constexpr std::array<DriverBranchRow, 2> k_minimum_driver = {{{13, 580}, {12, 525}}};

// Remedies for the cuInit results users hit most, keyed by CUresult, with the repair class each
// remedy is (driver.init_failed's default, reinstall_package, for any other code).
struct InitRemedy {
  int code;
  const char* remedy;
  Repair repair;
};
constexpr std::array<InitRemedy, 7> k_init_remedies = {{
    {35,
     "The driver is older than this CUDA runtime: upgrade the driver or use libraries built for an older "
     "CUDA.",
     Repair::reinstall_package},
    {100,
     "No CUDA-capable device is visible: check CUDA_VISIBLE_DEVICES / NVIDIA_VISIBLE_DEVICES, the "
     "container's GPU "
     "access (--gpus), and that nvidia-smi lists the GPU.",
     Repair::fix_environment},
    {101, "CUDA_VISIBLE_DEVICES names a device that does not exist; fix or unset it.",
     Repair::fix_environment},
    {803,
     "The user-mode driver (libcuda) and the kernel module are different versions: reboot after a "
     "driver upgrade, "
     "or remove the stale libcuda copy (often a container image shipping its own driver libraries).",
     Repair::reboot},
    {804,
     "A forward-compatibility libcuda (cuda-compat) is loaded on hardware or a kernel driver it does "
     "not support: "
     "remove the compat directory from LD_LIBRARY_PATH.",
     Repair::fix_environment},
    {999,
     "Unknown error: usually a driver or GPU fault. Check dmesg for Xid errors and nvidia-smi; a driver "
     "reload or "
     "reboot often clears it.",
     Repair::reboot},
    {3,
     "The driver did not initialise (no /dev/nvidia* access?): check device node permissions and the "
     "container's GPU access.",
     Repair::fix_environment},
}};

std::optional<MajorMinor> parse_major_minor(const std::string& text) {
  return versions::major_minor(text);
}

// 13000 -> (13, 0)
MajorMinor from_cuda_int(std::int64_t version) {
  return {static_cast<int>(version / 1000), static_cast<int>((version % 1000) / 10)};
}

std::string to_text(MajorMinor version) {
  return std::to_string(version.first) + "." + std::to_string(version.second);
}

const discovery::ComponentResult* library(const discovery::DiscoveryResult& discovery,
                                          std::string_view name) {
  for (const auto& component : discovery.components) {
    if (component.spec->name == name && component.spec->kind == probes::ComponentKind::dynamic_lib) {
      return &component;
    }
  }
  return nullptr;
}

const discovery::ComponentResult* headers(const discovery::DiscoveryResult& discovery,
                                          std::string_view name) {
  for (const auto& component : discovery.components) {
    if (component.spec->name == name && component.spec->kind == probes::ComponentKind::headers) {
      return &component;
    }
  }
  return nullptr;
}

// The version discovery read from the files of the copy the worker loaded.
std::optional<std::string> file_version(const discovery::DiscoveryResult& discovery,
                                        const verify::LibraryStep& step) {
  const auto* component = library(discovery, step.id);
  if (component == nullptr) {
    return std::nullopt;
  }
  for (const auto* choice : {&component->selected, &component->loader}) {
    if (*choice && (*choice)->via.path == step.path) {
      const auto& candidate = component->candidates[(*choice)->candidate];
      if (candidate.version) {
        return candidate.version->version;
      }
    }
  }
  return std::nullopt;
}

// What a library says its version is, through its API: cudart's runtime version, NVRTC's and
// nvJitLink's "13.0".
std::optional<MajorMinor> reported_version(const verify::ProbeFacts& facts) {
  if (const auto* cudart = std::get_if<verify::CudartFacts>(&facts)) {
    return cudart->runtime_version ? std::optional(from_cuda_int(*cudart->runtime_version)) : std::nullopt;
  }
  std::optional<std::string> text;
  if (const auto* nvrtc = std::get_if<verify::NvrtcFacts>(&facts)) {
    text = nvrtc->version;
  } else if (const auto* nvjitlink = std::get_if<verify::NvJitLinkFacts>(&facts)) {
    text = nvjitlink->version;
  }
  return text ? parse_major_minor(*text) : std::nullopt;
}

// ["a","b"], as the names appear in the message.
// "3 symbols: cuA, cuB, cuC": words a terminal can wrap between (the evidence keeps the list).
std::string symbol_list(const std::vector<std::string>& names) {
  std::string out = std::to_string(names.size()) + (names.size() == 1 ? " symbol: " : " symbols: ");
  for (std::size_t i = 0; i < names.size(); ++i) {
    out += (i == 0 ? "" : ", ") + names[i];
  }
  return out;
}

// The version of a library as it says itself, else as its files say.
std::optional<MajorMinor> effective_version(const discovery::DiscoveryResult& discovery,
                                            const verify::Verification& verification, std::string_view name) {
  const auto* step = verification.step(name);
  if (step != nullptr && step->status == worker::StepStatus::ok) {
    if (auto reported = reported_version(step->facts)) {
      return reported;
    }
  }
  if (step != nullptr) {
    if (auto version = file_version(discovery, *step)) {
      return parse_major_minor(*version);
    }
  }
  // Not loaded (--no-load or not planned): what discovery read for the selection.
  if (const auto* component = library(discovery, name)) {
    const auto* candidate = component->selected_candidate() != nullptr ? component->selected_candidate()
                                                                       : component->loader_candidate();
    if (candidate != nullptr && candidate->version) {
      return parse_major_minor(candidate->version->version);
    }
  }
  return std::nullopt;
}

// The remedies when the driver itself crashes or hangs, and when another library's worker dies the
// same way while the driver does: NVRTC (13) and nvJitLink load libcuda themselves, so the driver
// is the cause and reinstalling them would not help.
constexpr const char* k_driver_crash_remedy = "The driver library (libcuda) crashed: check dmesg for Xid "
                                              "errors and nvidia-smi, make sure the user-mode driver "
                                              "matches the kernel module (reboot after a driver upgrade), "
                                              "and reinstall the NVIDIA driver if it persists.";
constexpr const char* k_driver_hang_remedy = "The driver library (libcuda) hung: check the GPU and driver "
                                             "health (nvidia-smi, dmesg: Xid errors); a hung cuInit "
                                             "usually needs a driver reload or a reboot.";

void check_steps(const discovery::DiscoveryResult& discovery, const verify::Verification& verification,
                 std::vector<Finding>& out) {
  const auto* driver_step = verification.step("cuda");
  const bool driver_crashed = driver_step != nullptr && (driver_step->status == worker::StepStatus::crashed ||
                                                         driver_step->status == worker::StepStatus::error);
  const bool driver_hung = driver_step != nullptr && driver_step->status == worker::StepStatus::timeout;
  // One cause, one finding: a driver that crashes (hangs) is one verify.crashed (verify.timeout) on
  // `cuda` whose message lists the other workers that died the same way (they load libcuda), and
  // whose components and evidence keep every one of them.
  std::optional<std::size_t> driver_finding;
  for (const auto& step : verification.steps) {
    const Evidence evidence = {{"path", step.path},
                               {"status", std::string(worker::to_string(step.status))},
                               {"phase", step.last_phase},
                               {"signal", step.signal},
                               {"stderr_tail", step.stderr_tail}};
    const bool is_driver = step.id == "cuda";
    const bool crashed =
        step.status == worker::StepStatus::crashed || step.status == worker::StepStatus::error;
    if (crashed || step.status == worker::StepStatus::timeout) {
      if (!is_driver && (crashed ? driver_crashed : driver_hung)) {
        continue; // folded into the driver's finding below
      }
      auto finding = make_finding(crashed ? "verify.crashed" : "verify.timeout", step.id + ": " + step.detail,
                                  {step.id}, evidence);
      if (is_driver) {
        finding.message =
            std::string("the driver library libcuda ") + (crashed ? "crashed: " : "hung: ") + step.detail;
        finding.remedy = crashed ? k_driver_crash_remedy : k_driver_hang_remedy;
        driver_finding = out.size();
      }
      out.push_back(std::move(finding));
      continue;
    }
    const auto* facts = verify::load_facts(step.facts);
    if (facts == nullptr || !facts->loaded) {
      const auto error = facts != nullptr ? facts->dlopen_error : std::nullopt;
      out.push_back(
          make_finding("verify.load_failed",
                       step.id + ": dlopen(\"" + step.path + "\") failed: " + error.value_or("unknown error"),
                       {step.id}, {{"path", step.path}, {"dlopen_error", error.value_or("")}}));
      continue;
    }
    if (!facts->missing_symbols.empty()) {
      out.push_back(make_finding("verify.missing_symbols",
                                 step.id + ": " + step.path + " lacks " + symbol_list(facts->missing_symbols),
                                 {step.id},
                                 {{"path", step.path}, {"missing_symbols", facts->missing_symbols}}));
    }
    // What the API says against what the files say (major.minor).
    if (step.id == "nvrtc" || step.id == "nvJitLink" || step.id == "cudart") {
      const auto api = reported_version(step.facts);
      const auto files = file_version(discovery, step);
      const auto files_mm = files ? parse_major_minor(*files) : std::nullopt;
      if (api && files_mm && *api != *files_mm) {
        out.push_back(
            make_finding("lib.version_disagrees",
                         step.id + ": the library reports " + to_text(*api) + " but its files say " + *files,
                         {step.id}, {{"path", step.path}, {"api", to_text(*api)}, {"files", *files}}));
      }
    }
  }
  if (driver_finding) {
    auto& finding = out[*driver_finding];
    const bool crashed = driver_crashed;
    Evidence::List broke = Evidence::List();
    std::string names;
    for (const auto& step : verification.steps) {
      const bool same =
          crashed ? (step.status == worker::StepStatus::crashed || step.status == worker::StepStatus::error)
                  : step.status == worker::StepStatus::timeout;
      if (step.id == "cuda" || !same) {
        continue;
      }
      finding.components.push_back(step.id);
      names += (names.empty() ? "" : ", ") + step.id;
      broke.push_back(
          {{"component", step.id}, {"path", step.path}, {"phase", step.last_phase}, {"detail", step.detail}});
    }
    if (!names.empty()) {
      finding.message += std::string("; it also ") + (crashed ? "crashed" : "hung") + " the workers of " +
                         names + " (they load libcuda)";
      finding.evidence.set("also_broke", broke);
    }
  }
}

void check_driver(const discovery::DiscoveryResult& discovery, const verify::Verification& verification,
                  std::vector<Finding>& out) {
  const auto* step = verification.step("cuda");
  const auto* driver = verification.driver();
  if (step == nullptr || driver == nullptr) {
    return;
  }
  if (step->path.find("/compat/") != std::string::npos) {
    out.push_back(make_finding("driver.forward_compat",
                               "the loaded libcuda " + step->path + " is a forward-compatibility copy",
                               {"cuda"}, {{"path", step->path}}));
  }
  if (!driver->init) {
    return;
  }
  const auto code = driver->init->code;
  if (code == 0) {
    return;
  }
  const auto name = driver->init->name.value_or("CUresult " + std::to_string(code));
  const auto description = driver->init->description.value_or("");
  const Evidence evidence = {
      {"path", step->path}, {"code", code}, {"name", name}, {"description", description}};
  if (code == 34) {
    bool already = false;
    for (const auto& finding : out) {
      already = already || finding.id == "driver.stub";
    }
    if (!already) {
      out.push_back(make_finding("driver.stub",
                                 "cuInit returned CUDA_ERROR_STUB_LIBRARY (34): " + step->path +
                                     " is the toolkit's stub, not the driver",
                                 {"cuda"}, evidence));
    }
    return;
  }
  auto finding =
      make_finding("driver.init_failed",
                   "cuInit(0) failed with " + name + " (" + std::to_string(code) + ")" +
                       (description.empty() ? "" : ": " + description) + " — libcuda " + step->path,
                   {"cuda"}, evidence);
  for (const auto& row : k_init_remedies) {
    if (row.code == code) {
      finding.remedy = row.remedy;
      finding.repair = row.repair;
    }
  }
  out.push_back(std::move(finding));
  (void)discovery;
}

// The driver's CUDA version (cuDriverGetVersion, else NVML's) and its branch (NVML's driver
// version, else the libcuda file name: libcuda.so.580.95.05 -> 580).
struct DriverVersions {
  std::optional<MajorMinor> cuda;
  std::optional<int> branch;
  std::string evidence_path;
};

DriverVersions driver_versions(const discovery::DiscoveryResult& discovery,
                               const verify::Verification& verification) {
  DriverVersions facts;
  const auto* driver = verification.driver();
  const auto* nvml = verification.nvml();
  if (driver != nullptr && driver->driver_version && *driver->driver_version > 0) {
    facts.cuda = from_cuda_int(*driver->driver_version);
  } else if (nvml != nullptr && nvml->cuda_driver_version && *nvml->cuda_driver_version > 0) {
    facts.cuda = from_cuda_int(*nvml->cuda_driver_version);
  }
  std::optional<std::string> branch_text = nvml != nullptr ? nvml->driver_version : std::nullopt;
  if (!branch_text) {
    if (const auto* cuda = library(discovery, "cuda");
        cuda != nullptr && cuda->loader_candidate() != nullptr && cuda->loader_candidate()->version &&
        !cuda->loader_candidate()->is_stub) {
      branch_text = cuda->loader_candidate()->version->version;
      facts.evidence_path = cuda->loader->via.path;
    }
  }
  if (branch_text) {
    if (auto parsed = versions::major_minor(*branch_text)) {
      facts.branch = parsed->first;
    }
  }
  return facts;
}

// The version of the file a route loads: what the library said when the worker loaded that very
// path, else what its files and packaging say.
std::optional<MajorMinor> version_of_choice(const discovery::ComponentResult& component,
                                            const discovery::Choice& choice,
                                            const verify::Verification& verification) {
  const auto& candidate = component.candidates[choice.candidate];
  const auto* step = verification.step(component.spec->name);
  const auto loaded_real =
      step != nullptr ? fs::real_path(step->path) : Expected<std::string>(Error{"not loaded"});
  const bool same_file =
      step != nullptr && (step->path == choice.via.path ||
                          (loaded_real && candidate.realpath && *loaded_real == *candidate.realpath));
  if (same_file) {
    if (auto reported = reported_version(step->facts)) {
      return reported;
    }
  }
  return candidate.version ? parse_major_minor(candidate.version->version) : std::nullopt;
}

void check_nvjitlink_pairs(const discovery::DiscoveryResult& discovery,
                           const verify::Verification& verification, std::vector<Finding>& out) {
  const auto* nvrtc = library(discovery, "nvrtc");
  const auto* nvjitlink = library(discovery, "nvJitLink");
  if (nvrtc == nullptr || nvjitlink == nullptr) {
    return;
  }
  struct Pair {
    std::string route;
    const discovery::Choice* nvrtc;
    const discovery::Choice* nvjitlink;
    MajorMinor nvrtc_version;
    MajorMinor nvjitlink_version;
  };
  std::vector<Pair> mismatched;
  for (const auto& [route, a, b] :
       {std::tuple{std::string("CUDA Python"), &nvrtc->selected, &nvjitlink->selected},
        std::tuple{std::string("native programs"), &nvrtc->loader, &nvjitlink->loader}}) {
    if (!*a || !*b || (*a)->fails || (*b)->fails) {
      continue;
    }
    const auto nvrtc_version = version_of_choice(*nvrtc, **a, verification);
    const auto nvjitlink_version = version_of_choice(*nvjitlink, **b, verification);
    if (!nvrtc_version || !nvjitlink_version ||
        (nvjitlink_version->first == nvrtc_version->first &&
         nvjitlink_version->second >= nvrtc_version->second)) {
      continue;
    }
    if (!mismatched.empty() && mismatched.back().nvjitlink->via.path == (*b)->via.path &&
        mismatched.back().nvrtc->via.path == (*a)->via.path) {
      mismatched.back().route += " and " + route;
      continue;
    }
    mismatched.push_back({route, &**a, &**b, *nvrtc_version, *nvjitlink_version});
  }
  for (const auto& pair : mismatched) {
    const bool other_major = pair.nvjitlink_version.first != pair.nvrtc_version.first;
    auto finding = make_finding("nvjitlink.version_mismatch",
                                pair.route + " would pair nvJitLink " + to_text(pair.nvjitlink_version) +
                                    " (" + pair.nvjitlink->via.path + ", " + pair.nvjitlink->via.found_via +
                                    ") with NVRTC " + to_text(pair.nvrtc_version) + " (" +
                                    pair.nvrtc->via.path + "): it cannot link NVRTC's LTO-IR (" +
                                    (other_major ? "another major" : "older") + ")",
                                {"nvJitLink", "nvrtc"},
                                {{"route", pair.route},
                                 {"nvjitlink", to_text(pair.nvjitlink_version)},
                                 {"nvrtc", to_text(pair.nvrtc_version)},
                                 {"nvjitlink_path", pair.nvjitlink->via.path},
                                 {"nvrtc_path", pair.nvrtc->via.path},
                                 {"nvjitlink_found_via", pair.nvjitlink->via.found_via}});
    const auto wanted = pair.nvrtc_version.first >= 13
                            ? std::string("nvidia-nvjitlink")
                            : "nvidia-nvjitlink-cu" + std::to_string(pair.nvrtc_version.first);
    const auto spec = wanted + ">=" + to_text(pair.nvrtc_version);
    const auto& nvjitlink_via = pair.nvjitlink->via;
    std::vector<Plan> plans;
    // A wheel's NVRTC (or a wheel's nvJitLink) is one environment's: the matching nvJitLink wheel
    // in that environment, through its own pip, fixes it there and touches nothing else.
    const auto* wheel_path = pair.nvrtc->via.found_via == "site-packages" ? &pair.nvrtc->via.path
                             : nvjitlink_via.found_via == "site-packages" ? &nvjitlink_via.path
                                                                          : nullptr;
    // Not where native programs bind nvJitLink of another major: the wheel would add a second major
    // of nvJitLink to this machine's routes (the simulation's lib.python_native_differ warning); the
    // prose remedy stands then.
    const auto* native_nvjitlink =
        nvjitlink->loader && !nvjitlink->loader->fails ? nvjitlink->loader_candidate() : nullptr;
    const auto native_release = native_nvjitlink != nullptr && native_nvjitlink->version
                                    ? versions::major_minor(native_nvjitlink->version->version)
                                    : std::nullopt;
    const bool second_major = native_release && native_release->first != pair.nvrtc_version.first;
    if (wheel_path != nullptr && !second_major) {
      if (const auto python = environment_python(*wheel_path, discovery)) {
        Plan plan{"install the nvJitLink wheel of NVRTC's release in the environment NVRTC comes from", {}};
        if (nvjitlink_via.found_via == "site-packages") {
          if (const auto owner = owning_wheel_distribution(nvjitlink_via.path); owner && *owner != wanted) {
            plan.actions.push_back(pip_uninstall(*python, *owner)); // another distribution's file
          }
        }
        plan.actions.push_back(pip_install(*python, spec));
        plans.push_back(std::move(plan));
      }
    }
    // An older copy on LD_LIBRARY_PATH shadows the toolkit's: drop its entry (this user's shell).
    if (nvjitlink_via.found_via == "LD_LIBRARY_PATH" &&
        pair.nvrtc->via.search_dir != nvjitlink_via.search_dir) {
      plans.push_back({"stop LD_LIBRARY_PATH from reaching the older nvJitLink",
                       {remove_path_entry("LD_LIBRARY_PATH", nvjitlink_via.search_dir)}});
    }
    set_plans(finding, std::move(plans));
    if (finding.fix.empty()) {
      finding.remedy =
          "Install nvJitLink " + std::to_string(pair.nvrtc_version.first) + ".x not older than NVRTC " +
          to_text(pair.nvrtc_version) + " where NVRTC comes from (" + pair.nvrtc->via.found_via + ": " +
          pair.nvrtc->via.path + "); in a Python environment `python -m pip install \"" + spec +
          "\"`, never by changing the host's loader configuration for one environment's problem.";
    }
    finding.repair = nvjitlink_via.found_via == "LD_LIBRARY_PATH" && wheel_path == nullptr
                         ? Repair::fix_environment
                         : Repair::reinstall_package;
    out.push_back(std::move(finding));
  }
}

void check_versions(const discovery::DiscoveryResult& discovery, const verify::Verification& verification,
                    std::vector<Finding>& out) {
  const auto driver = driver_versions(discovery, verification);
  const auto nvrtc = effective_version(discovery, verification, "nvrtc");
  const auto cudart = effective_version(discovery, verification, "cudart");

  // driver.too_old: the CUDA major of what will be loaded against the driver.
  for (const auto& [name, version] : {std::pair{"cudart", cudart}, std::pair{"nvrtc", nvrtc}}) {
    if (!version) {
      continue;
    }
    std::optional<int> needed_branch;
    for (const auto& row : k_minimum_driver) {
      if (row.cuda_major == version->first) {
        needed_branch = row.driver_branch;
      }
    }
    const bool cuda_too_old = driver.cuda && driver.cuda->first < version->first;
    const bool branch_too_old = driver.branch && needed_branch && *driver.branch < *needed_branch;
    if (cuda_too_old || branch_too_old) {
      out.push_back(make_finding(
          "driver.too_old",
          std::string(name) + " " + to_text(*version) + " needs a CUDA " + std::to_string(version->first) +
              " driver" + (needed_branch ? " (>= " + std::to_string(*needed_branch) + ")" : "") +
              "; the driver is " +
              (driver.cuda ? "CUDA " + to_text(*driver.cuda) : std::string("unknown CUDA")) +
              (driver.branch ? ", branch " + std::to_string(*driver.branch) : ""),
          {"cuda", name},
          {{"component", name},
           {"component_version", to_text(*version)},
           {"driver_cuda", driver.cuda ? EvidenceValue(to_text(*driver.cuda)) : EvidenceValue()},
           {"driver_branch", driver.branch}}));
      // The driver is the host's; the alternative (libraries of the driver's major) is prose.
      set_plans(out.back(),
                {{"upgrade the driver to one that supports CUDA " + std::to_string(version->first),
                  {install_driver(needed_branch ? std::to_string(*needed_branch)
                                                : "CUDA " + std::to_string(version->first))}}});
      out.back().remedy +=
          " Or install the " + std::string(name) +
          " build of the driver's CUDA major (e.g. pip install the -cu12 wheels for a CUDA 12 "
          "driver).";
      break;
    }
  }

  // framework.driver_too_old: a framework built for a newer CUDA major than the driver runs, or
  // below that major's driver branch floor (torch: "The NVIDIA driver on your system is too old").
  for (const auto& build : discovery.frameworks) {
    const auto major_text = build.cuda.substr(0, build.cuda.find('.'));
    int major = 0;
    if (std::from_chars(major_text.data(), major_text.data() + major_text.size(), major).ec != std::errc() ||
        major <= 0) {
      continue;
    }
    std::optional<int> needed_branch;
    for (const auto& row : k_minimum_driver) {
      if (row.cuda_major == major) {
        needed_branch = row.driver_branch;
      }
    }
    const bool cuda_too_old = driver.cuda && driver.cuda->first < major;
    const bool branch_too_old = driver.branch && needed_branch && *driver.branch < *needed_branch;
    if (!cuda_too_old && !branch_too_old) {
      continue;
    }
    out.push_back(make_finding(
        "framework.driver_too_old",
        build.framework + " " + build.version + " is built for CUDA " + build.cuda + " (" + build.source +
            "), which needs a CUDA " + std::to_string(major) + " driver" +
            (needed_branch ? " (branch >= " + std::to_string(*needed_branch) + ")" : "") +
            "; the driver is " +
            (driver.cuda ? "CUDA " + to_text(*driver.cuda) : std::string("of an unknown CUDA version")) +
            (driver.branch ? ", branch " + std::to_string(*driver.branch) : "") +
            (build.framework == "triton" ? ": every kernel Triton compiles with that ptxas fails to load"
                                         : ": it fails at its first CUDA call"),
        {"cuda"},
        {{"framework", build.framework},
         {"framework_version", build.version},
         {"framework_cuda", build.cuda},
         {"source", build.source},
         {"driver_cuda", driver.cuda ? EvidenceValue(to_text(*driver.cuda)) : EvidenceValue()},
         {"driver_branch", driver.branch}}));
  }

  // nvrtc.ptx_newer_than_driver: the PTX ISA NVRTC emits against the one the driver JITs.
  if (nvrtc && driver.cuda) {
    const auto nvrtc_isa = ptx_isa_for_cuda(nvrtc->first, nvrtc->second);
    const auto driver_isa = ptx_isa_for_cuda(driver.cuda->first, driver.cuda->second);
    const bool newer = nvrtc_isa && driver_isa ? *nvrtc_isa > *driver_isa : *nvrtc > *driver.cuda;
    if (newer) {
      out.push_back(make_finding(
          "nvrtc.ptx_newer_than_driver",
          "NVRTC " + to_text(*nvrtc) + " emits PTX ISA " + (nvrtc_isa ? to_text(*nvrtc_isa) : "newer") +
              " but the driver (CUDA " + to_text(*driver.cuda) + ") JITs PTX up to ISA " +
              (driver_isa ? to_text(*driver_isa) : "older") + "; loading it fails with error 222",
          {"nvrtc", "cuda"},
          {{"nvrtc", to_text(*nvrtc)},
           {"driver_cuda", to_text(*driver.cuda)},
           {"nvrtc_ptx_isa", nvrtc_isa ? EvidenceValue(to_text(*nvrtc_isa)) : EvidenceValue()},
           {"driver_ptx_isa", driver_isa ? EvidenceValue(to_text(*driver_isa)) : EvidenceValue()}}));
    }
  }

  // nvjitlink.version_mismatch: same major, and not older than NVRTC, per route (CUDA Python's
  // pair, a native program's pair), naming the files and the remedy for how nvJitLink was reached.
  check_nvjitlink_pairs(discovery, verification, out);

  // cccl.version_mismatch: CCCL 3.x belongs to CUDA 13, 2.x to CUDA 12.
  if (const auto* cccl = headers(discovery, "cccl"); cccl != nullptr && nvrtc) {
    const auto* candidate = cccl->selected_candidate();
    if (candidate != nullptr && candidate->version &&
        candidate->version->source == versions::VersionSource::header_macro) {
      if (auto cccl_version = versions::major_minor(candidate->version->version);
          cccl_version && cccl_version->first + 10 != nvrtc->first) {
        out.push_back(make_finding("cccl.version_mismatch",
                                   "CCCL " + candidate->version->version + " headers (" +
                                       cccl->selected->via.path + ") belong to CUDA " +
                                       std::to_string(cccl_version->first + 10) + ", but NVRTC is " +
                                       to_text(*nvrtc),
                                   {"cccl", "nvrtc"},
                                   {{"cccl", candidate->version->version},
                                    {"cccl_path", cccl->selected->via.path},
                                    {"nvrtc", to_text(*nvrtc)}}));
      }
    }
  }
}

constexpr std::string_view k_builtin_operation_failure = "NVRTC_ERROR_BUILTIN_OPERATION_FAILURE";

// nvrtc.builtins_not_on_search_path: the builtins beside NVRTC load by their path, yet the compile
// check (which runs first, so nothing of this probe's answered NVRTC's search) failed to open them:
// NVRTC asks the loader by name, and its search does not reach NVRTC's directory. A warning when
// CUDA Python preloads that very file (it works; programs that load NVRTC alone do not), an error
// when it does not (every compilation fails, CUDA Python's too).
void check_builtins_search(const discovery::DiscoveryResult& discovery, const verify::NvrtcFacts& nvrtc,
                           std::vector<Finding>& out) {
  const auto& builtins = *nvrtc.builtins;
  const auto& check = nvrtc.compile_check;
  if (!builtins.loadable || !builtins.path || !check || check->ok ||
      check->name.value_or("") != k_builtin_operation_failure) {
    return;
  }
  const std::string directory = fs::parent(*builtins.path);
  const auto preload = verify::cuda_python_builtins_preload(discovery, nvrtc.library);
  // Both name a file in the directory of NVRTC's real file: the same text is the same file.
  const bool cuda_python_works = preload == builtins.path;
  out.push_back(make_finding(
      "nvrtc.builtins_not_on_search_path",
      "NVRTC (" + nvrtc.library + ") cannot open " + builtins.expected +
          " by name: the loader's search does not reach " + directory +
          ", where it is (it loads by its path): " +
          (cuda_python_works ? "NVRTC loaded by its path alone fails every compilation with "
                             : "every compilation fails with ") +
          std::string(k_builtin_operation_failure) +
          (cuda_python_works ? "; CUDA Python preloads it (cuda-pathfinder 1.9 and later) and works"
                             : ", CUDA Python's too (cuda-pathfinder preloads no builtins for this NVRTC)"),
      {"nvrtc"},
      {{"builtins",
        {{"expected", builtins.expected}, {"path", builtins.path}, {"loadable", builtins.loadable}}},
       {"directory", directory},
       {"cuda_python_preload", preload},
       {"compile_check",
        {{"step", check->step}, {"code", check->code}, {"name", check->name}, {"log", check->log}}}},
      cuda_python_works ? std::nullopt : std::optional(Severity::error)));
  out.back().remedy =
      "Tell the loader about " + directory +
      " (a file in /etc/ld.so.conf.d/ naming it, then `ldconfig`; "
      "or LD_LIBRARY_PATH), or have the program dlopen " +
      *builtins.path + " before its first compilation" +
      (cuda_python_works ? "."
                         : " (cuda-pathfinder derives the builtins' name from NVRTC's real file "
                           "name, libnvrtc.so.MAJOR.MINOR.PATCH, and this one has none).");
}

// nvrtc.builtins_missing: the builtins matching NVRTC's version do not load from its directory.
void check_builtins_missing(const verify::NvrtcFacts& nvrtc, std::vector<Finding>& out) {
  // Evidence decides the severity: when the same report's compile check succeeded, NVRTC found a
  // builtins library elsewhere (ld.so.cache, LD_LIBRARY_PATH): compilations work here, but depend
  // on that other copy (a warning); only a failed or unknown compile means every compilation fails.
  const auto& builtins = *nvrtc.builtins;
  const bool compiled = nvrtc.compile_check && nvrtc.compile_check->ok;
  const auto used = builtins.used.value_or("");
  out.push_back(make_finding("nvrtc.builtins_missing",
                             builtins.expected + " is not loadable next to " + nvrtc.library + ": " +
                                 builtins.error.value_or("not found"),
                             {"nvrtc"},
                             {{"builtins",
                               {{"expected", builtins.expected},
                                {"path", builtins.path},
                                {"loadable", builtins.loadable},
                                {"error", builtins.error},
                                {"used", builtins.used}}},
                              {"compile_check_ok", compiled}},
                             compiled ? std::optional(Severity::warning) : std::nullopt));
  if (compiled) {
    out.back().message +=
        "; the compile check still succeeded" +
        (used.empty() ? std::string(" (NVRTC found a builtins library elsewhere)") : " through " + used);
    out.back().remedy =
        "NVRTC works here only through another copy of its builtins" +
        (used.empty() ? std::string() : " (" + used + ")") +
        ", which breaks when that copy changes: reinstall the NVRTC package so that the builtins sit "
        "next to libnvrtc.so, or load NVRTC from the directory that has both.";
  }
}

// nvrtc.compile_failed: NVRTC's compile of an empty kernel failed and no builtins finding explains it.
void check_compile_failed(const verify::NvrtcFacts& nvrtc, std::vector<Finding>& out) {
  const auto& check = *nvrtc.compile_check;
  const auto name = check.name.value_or("nvrtcResult");
  const auto first_line = check.log.substr(0, check.log.find('\n'));
  out.push_back(make_finding(
      "nvrtc.compile_failed",
      "NVRTC (" + nvrtc.library + ") failed to compile an empty kernel: " + check.step + " returned " + name +
          " (" + std::to_string(check.code) + ")" + (first_line.empty() ? std::string() : ": " + first_line),
      {"nvrtc"},
      {{"compile_check",
        {{"step", check.step}, {"code", check.code}, {"name", check.name}, {"log", check.log}}}}));
}

// NVRTC's builtins and its compile check: a failed compile is explained by one finding, the
// builtins' when they explain it, else nvrtc.compile_failed.
void check_nvrtc(const discovery::DiscoveryResult& discovery, const verify::Verification& verification,
                 std::vector<Finding>& out) {
  const auto* nvrtc = verification.nvrtc();
  if (nvrtc == nullptr) {
    return;
  }
  const auto before = out.size();
  if (nvrtc->builtins && nvrtc->builtins->loadable) {
    check_builtins_search(discovery, *nvrtc, out);
  } else if (nvrtc->builtins) {
    check_builtins_missing(*nvrtc, out);
  }
  if (nvrtc->compile_check && !nvrtc->compile_check->ok && out.size() == before) {
    check_compile_failed(*nvrtc, out);
  }
}

} // namespace

std::optional<std::pair<int, int>> ptx_isa_for_cuda(int major, int minor) {
  for (const auto& row : k_ptx_isa) {
    if (row.cuda == MajorMinor{major, minor}) {
      return row.isa;
    }
  }
  return std::nullopt;
}

std::vector<Finding> evaluate_verification(const discovery::DiscoveryResult& discovery,
                                           const verify::Verification& verification) {
  std::vector<Finding> out;
  check_steps(discovery, verification, out);
  check_driver(discovery, verification, out);
  check_nvrtc(discovery, verification, out);
  check_versions(discovery, verification, out);
  return out;
}

} // namespace cudadiag::findings
