#include "findings/install_rules.hpp"

#include "core/filesystem.hpp"
#include "core/text.hpp"
#include "python/pep508.hpp"
#include "versions/version_sources.hpp"

#include <algorithm>
#include <map>
#include <set>

namespace cudadiag::findings {

namespace {

using discovery::Candidate;
using discovery::ComponentResult;
using python::RecordClaim;
using python::RecordedFile;

// At most this many files are named in a message; the evidence lists them all.
constexpr std::size_t k_files_in_message = 3;

std::string real_or_same(const std::string& path) {
  const auto real = fs::real_path(path);
  return real ? *real : path;
}

// The catalog components that list `path` (compared by real path) among their candidates.
std::vector<std::string> components_with_file(const discovery::DiscoveryResult& result,
                                              const std::string& path) {
  const auto real = real_or_same(path);
  std::vector<std::string> names;
  for (const auto& component : result.components) {
    for (const auto& candidate : component.candidates) {
      if (candidate.realpath.value_or(candidate.first.path) == real &&
          std::find(names.begin(), names.end(), component.spec->name) == names.end()) {
        names.emplace_back(component.spec->name);
      }
    }
  }
  return names;
}

std::string claimant(const RecordClaim& claim) {
  return claim.distribution + " " + claim.version;
}

std::string size_text(const std::optional<std::uint64_t>& size) {
  return size ? std::to_string(*size) + " bytes" : std::string("no size");
}

// The distributions the environment's frameworks pin (their CUDA requirements, met or not), by
// PEP 503 name, with the framework that pins each.
std::map<std::string, std::string> pinned_by_frameworks(const discovery::DiscoveryResult& result) {
  std::map<std::string, std::string> pinned;
  for (const auto& requirement : result.framework_requirements) {
    pinned.emplace(python::canonical_name(requirement.dependency),
                   requirement.framework + " " + requirement.framework_version);
  }
  return pinned;
}

Evidence::List claims_evidence(const RecordedFile& file) {
  Evidence::List claims = Evidence::List();
  for (const auto& claim : file.claims) {
    claims.push_back({{"distribution", claim.distribution},
                      {"version", claim.version},
                      {"dist_info", claim.dist_info},
                      {"record_size", claim.size},
                      {"record_sha256", claim.sha256},
                      {"size_matches", claim.size_matches},
                      {"hash_matches", claim.hash_matches}});
  }
  return claims;
}

Finding overwritten(const RecordedFile& file, const discovery::DiscoveryResult& result, bool hashes,
                    const std::map<std::string, std::string>& pinned, const std::string& python) {
  std::vector<const RecordClaim*> matching;
  std::vector<std::string> names;
  for (const auto& claim : file.claims) {
    names.push_back(claimant(claim));
    if (claim.matches()) {
      matching.push_back(&claim);
    }
  }
  // The claimant to keep: the one a framework here pins, else the one whose file is on disk.
  const RecordClaim* keep = nullptr;
  std::string why;
  for (const auto& claim : file.claims) {
    if (const auto at = pinned.find(claim.distribution); at != pinned.end() && keep == nullptr) {
      keep = &claim;
      why = at->second + " pins it";
    }
  }
  if (keep == nullptr && matching.size() == 1) {
    keep = matching.front();
    why = "its file is the one on disk";
  }
  std::string message = file.relative + " (" + file.path + ") is installed by " + join(names, " and ") + ": ";
  if (!file.size) {
    message += "the file is missing, so neither distribution's file is there";
  } else if (matching.size() == 1) {
    message += "the file on disk (" + size_text(file.size) + ") is " + claimant(*matching.front()) +
               "'s (its RECORD's size" + (hashes ? " and SHA-256" : "") + "); the other dist-info" +
               (file.claims.size() > 2 ? "s describe" : " describes") +
               " a file that is no longer there, and the version read from it is not the file's";
  } else if (matching.empty()) {
    message += "the file on disk (" + size_text(file.size) + ") matches none of their RECORDs";
  } else {
    message += "the file on disk (" + size_text(file.size) + ") has the size each RECORD gives" +
               (hashes ? " and a digest more than one matches"
                       : "; --verify-record-hashes compares the SHA-256 to tell which one it is");
  }
  // An error when a pinned claimant's own file is not the one on disk: the framework loads the
  // other release's file.
  const bool pinned_loses = keep != nullptr && pinned.count(keep->distribution) != 0 && !keep->matches();
  if (pinned_loses) {
    message += "; " + why + " but gets " +
               (matching.size() == 1 ? claimant(*matching.front()) + "'s file" : std::string("another file"));
  }
  message += ". Uninstalling either removes the file the other still lists";
  Evidence evidence = {{"path", file.path},
                       {"relative", file.relative},
                       {"size", file.size},
                       {"sha256", file.sha256},
                       {"claims", claims_evidence(file)},
                       {"matches",
                        [&] {
                          std::vector<std::string> out;
                          for (const auto* claim : matching) {
                            out.push_back(claim->distribution);
                          }
                          return out;
                        }()},
                       {"keep", keep != nullptr ? keep->distribution : std::string()}};
  auto finding =
      make_finding("python.file_overwritten", message, components_with_file(result, file.path),
                   std::move(evidence), pinned_loses ? std::optional(Severity::error) : std::nullopt);
  std::vector<std::string> others;
  for (const auto& claim : file.claims) {
    if (keep == nullptr || claim.distribution != keep->distribution) {
      others.push_back(claim.distribution);
    }
  }
  if (keep != nullptr) {
    finding.remedy = "Keep " + keep->distribution + " (" + why + "): first `" + python +
                     " -m pip uninstall -y " + join(others, " ") +
                     "` (uninstalling removes the shared file whichever distribution wrote it), then `" +
                     python + " -m pip install --force-reinstall " + keep->distribution +
                     "==" + keep->version + "` restores its file.";
  } else {
    finding.remedy = "Keep the one your programs need (nothing here pins either): uninstall the others first "
                     "(`" +
                     python + " -m pip uninstall -y NAME`: it removes the shared file), then `" + python +
                     " -m pip install --force-reinstall NAME==VERSION` for the one kept (" +
                     join(names, ", ") + ").";
  }
  return finding;
}

std::vector<Finding> mismatched(const python::RecordCheck& records, const discovery::DiscoveryResult& result,
                                const std::string& python) {
  // One finding per distribution, its files in RECORD order.
  std::vector<std::pair<const RecordClaim*, std::vector<const RecordedFile*>>> groups;
  for (const auto& file : records.differing) {
    const auto& claim = file.claims.front();
    auto at = std::find_if(groups.begin(), groups.end(),
                           [&](const auto& group) { return group.first->dist_info == claim.dist_info; });
    if (at == groups.end()) {
      groups.push_back({&claim, {}});
      at = std::prev(groups.end());
    }
    at->second.push_back(&file);
  }
  std::vector<Finding> out;
  for (const auto& [claim, files] : groups) {
    std::vector<std::string> missing;
    std::vector<std::string> differ;
    Evidence::List listed = Evidence::List();
    std::vector<std::string> components;
    for (const auto* file : files) {
      const auto& own = file->claims.front();
      if (!file->size) {
        missing.push_back(file->relative);
      } else if (own.size && !own.size_matches) {
        differ.push_back(file->relative + " is " + size_text(file->size) + ", its RECORD says " +
                         size_text(own.size));
      } else {
        differ.push_back(file->relative + " has another SHA-256 than its RECORD (" + file->sha256 + ", not " +
                         own.sha256 + ")");
      }
      listed.push_back({{"path", file->path},
                        {"relative", file->relative},
                        {"size", file->size},
                        {"record_size", own.size},
                        {"sha256", file->sha256},
                        {"record_sha256", own.sha256}});
      for (auto& name : components_with_file(result, file->path)) {
        if (std::find(components.begin(), components.end(), name) == components.end()) {
          components.push_back(std::move(name));
        }
      }
    }
    const auto shown = [](const std::vector<std::string>& items) {
      std::vector<std::string> head(items.begin(), items.begin() + static_cast<std::ptrdiff_t>(std::min(
                                                                       items.size(), k_files_in_message)));
      auto text = join(head, "; ");
      if (items.size() > head.size()) {
        text += "; and " + std::to_string(items.size() - head.size()) + " more";
      }
      return text;
    };
    std::string message = claimant(*claim) + " (" + claim->dist_info + "): ";
    if (!missing.empty()) {
      message += std::to_string(missing.size()) + " librar" + (missing.size() == 1 ? "y" : "ies") +
                 " its RECORD lists " + (missing.size() == 1 ? "is" : "are") + " missing (" + shown(missing) +
                 "): whatever loads " + (missing.size() == 1 ? "it" : "them") + " fails";
    }
    if (!differ.empty()) {
      message += std::string(missing.empty() ? "" : "; ") + shown(differ) +
                 ": not the file this distribution installed, so the version " + claim->version +
                 " read from its dist-info is not the file's";
    }
    auto finding = make_finding("python.record_mismatch", message, components,
                                {{"distribution", claim->distribution},
                                 {"version", claim->version},
                                 {"dist_info", claim->dist_info},
                                 {"hashes", records.hashes},
                                 {"files", listed}},
                                missing.empty() ? std::nullopt : std::optional(Severity::error));
    finding.remedy = "`" + python + " -m pip install --force-reinstall " + claim->distribution +
                     "==" + claim->version +
                     "` restores the files its RECORD lists (or uninstall it if nothing needs it).";
    out.push_back(std::move(finding));
  }
  return out;
}

// The first usable copy of `result` in a root `variable` names (a sighting by that variable).
std::pair<const Candidate*, const discovery::Sighting*> root_copy(const ComponentResult& result,
                                                                  std::string_view variable) {
  for (const auto& candidate : result.candidates) {
    if (!candidate.usable() || candidate.is_stub) {
      continue;
    }
    if (candidate.first.found_via == variable) {
      return {&candidate, &candidate.first};
    }
    for (const auto& other : candidate.also_found_as) {
      if (other.found_via == variable) {
        return {&candidate, &other};
      }
    }
  }
  return {nullptr, nullptr};
}

std::string searched(const discovery::Sighting& sighting) {
  return sighting.file_name.empty() ? fs::basename(sighting.path) : sighting.file_name;
}

struct RootCopy {
  std::string variable;
  std::string root;
  std::string path;    // the copy in the root, as found
  std::string real;    // its real path
  std::string version; // its release
};

Finding root_finding(const RootCopy& copy, const ComponentResult& result, const Candidate& loaded) {
  const auto& via = result.loader->via;
  const auto soname = searched(via);
  const auto order = versions::compare_versions(copy.version, loaded.version->version);
  const bool newer = order > 0;
  const auto relation = newer ? "newer than" : order == 0 ? "the same release as" : "older than";
  std::string message = copy.variable + "=" + copy.root + " holds " + soname + " " + copy.version + " (" +
                        copy.path + "), " + relation + " the " + loaded.version->version +
                        " the loader binds (" + via.path + ", via " + via.found_via + ")";
  message += newer ? ": a program built against " + copy.variable +
                         " gets the older copy at run time and fails on "
                         "what " +
                         copy.version + " added (an undefined symbol)"
                   : ": a program built against it runs with the loaded copy";
  auto finding = make_finding("env.root_release_differs", message, {std::string(result.spec->name)},
                              {{"variable", copy.variable},
                               {"root", copy.root},
                               {"soname", soname},
                               {"root_path", copy.path},
                               {"root_version", copy.version},
                               {"loaded_path", via.path},
                               {"loaded_version", loaded.version->version},
                               {"loaded_via", via.found_via}},
                              newer ? std::nullopt : std::optional(Severity::info));
  const auto dir = fs::parent(copy.path);
  finding.remedy = newer ? "Run what was built against " + copy.variable + " with the root's copy: prepend " +
                               dir + " to its LD_LIBRARY_PATH (or link it with -Wl,-rpath," + dir +
                               "); or bring the copy the loader "
                               "binds (" +
                               via.path + ", via " + via.found_via + ") up to " + copy.version + "."
                         : "Nothing breaks: a program built against the older release runs with the newer "
                           "one the loader binds. "
                           "Point " +
                               copy.variable + " at the loaded release to build against what runs.";
  finding.repair = newer ? Repair::fix_environment : Repair::none;
  return finding;
}

// TRITON_LIBCUDA_PATH's copy of the driver: the directory's libcuda.so.1, else libcuda.so, with the
// driver version its real file name carries.
std::optional<RootCopy> triton_libcuda(const std::string& dir) {
  for (const auto* name : {"libcuda.so.1", "libcuda.so"}) {
    const auto path = fs::join(dir, name);
    if (!fs::is_regular_file(path)) {
      continue;
    }
    const auto real = real_or_same(path);
    const auto version = versions::version_from_file_name(fs::basename(real), "libcuda.so.1");
    if (!version || real.find("/stubs/") != std::string::npos) {
      return std::nullopt; // a stub or an unversioned copy: linking against it is what it is for
    }
    return RootCopy{"TRITON_LIBCUDA_PATH", dir, path, real, *version};
  }
  return std::nullopt;
}

} // namespace

const std::vector<RootVariable>& root_variables() {
  // clang-format off
  static const std::vector<RootVariable> table = {
    {"NCCL_HOME",           "an NCCL build or installation (include/, lib/ or build/lib/): nccl-tests, Horovod and source builds link against it"},
    {"CUDNN_PATH",          "a cuDNN installation: TensorFlow's and source builds' cuDNN"},
    {"CUDA_PATH",           "a CUDA Toolkit: what CMake's FindCUDAToolkit and cuda-pathfinder's fallback use"},
    {"CUDA_HOME",           "a CUDA Toolkit: what nvcc-built programs and torch's cpp_extension build against"},
    {"TRITON_LIBCUDA_PATH", "the directory whose libcuda.so Triton links its kernel launchers against"},
  };
  // clang-format on
  return table;
}

bool root_compared_with_loader(const ComponentResult& result, const discovery::Sighting& sighting) {
  return result.loader && result.loader->loads() && searched(result.loader->via) == searched(sighting);
}

std::vector<Finding> evaluate_records(const discovery::DiscoveryResult& result) {
  std::vector<Finding> out;
  const auto& records = result.records;
  if (records.shared.empty() && records.differing.empty()) {
    return out;
  }
  const auto python = primary_python(result);
  const auto pinned = pinned_by_frameworks(result);
  for (const auto& file : records.shared) {
    out.push_back(overwritten(file, result, records.hashes, pinned, python));
  }
  for (auto& finding : mismatched(records, result, python)) {
    out.push_back(std::move(finding));
  }
  return out;
}

std::vector<Finding> evaluate_variable_roots(const discovery::DiscoveryResult& discovered,
                                             const Environment& env) {
  std::vector<Finding> out;
  std::set<std::pair<std::string, std::string>> said; // (component, the root copy's real path)
  for (const auto& variable : root_variables()) {
    const auto root = env.non_empty(variable.name);
    if (!root) {
      continue;
    }
    for (const auto& result : discovered.components) {
      if (result.spec->kind != probes::ComponentKind::dynamic_lib || !result.loader ||
          !result.loader->loads()) {
        continue;
      }
      const auto* loaded = result.loader_candidate();
      if (loaded == nullptr || !loaded->version || loaded->is_stub) {
        continue;
      }
      std::optional<RootCopy> copy;
      if (variable.name == "TRITON_LIBCUDA_PATH") {
        // Both driver versions come from the file names (libcuda.so.580.95.05): one numbering.
        if (result.spec->name == "cuda") {
          copy = triton_libcuda(*root);
        }
      } else if (const auto [candidate, sighting] = root_copy(result, variable.name);
                 candidate != nullptr && candidate->version && !version_in_other_numbering(*candidate) &&
                 !version_in_other_numbering(*loaded) && root_compared_with_loader(result, *sighting)) {
        copy = RootCopy{std::string(variable.name), *root, sighting->path,
                        candidate->realpath.value_or(sighting->path), candidate->version->version};
      }
      if (!copy || copy->real == loaded->realpath.value_or(loaded->first.path) ||
          !said.insert({std::string(result.spec->name), copy->real}).second) {
        continue;
      }
      out.push_back(root_finding(*copy, result, *loaded));
    }
  }
  return out;
}

} // namespace cudadiag::findings
