#include "discovery/candidate.hpp"

#include "core/read_record.hpp"
#include "core/system_root.hpp"
#include "discovery/candidate_inspection.hpp"
#include "probes/search_strategies.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sys/stat.h>

namespace cudadiag::discovery {

namespace {

using probes::ComponentKind;
using probes::ComponentSpec;

// The identity used to merge sightings: the file's device and inode when it can be stat'ed,
// else its lexically normalised path (broken links and loops stay distinct).
struct Identity {
  std::optional<fs::FileId> id;
  std::string normal_path;
  bool operator==(const Identity& other) const {
    return id && other.id ? *id == *other.id : (!id && !other.id && normal_path == other.normal_path);
  }
};

Identity identity_of(const std::string& path, const probes::DirectoryCache* dirs) {
  return {dirs != nullptr ? dirs->file_id(path) : fs::file_id(path), fs::lexically_normal(path)};
}

bool has_path_component(const std::string& path, std::string_view component) {
  std::string needle = "/" + std::string(component) + "/";
  return ("/" + path + "/").find(needle) != std::string::npos;
}

} // namespace

namespace {

// A driver library's SONAME with no dependencies: what a stub looks like before its size is asked.
bool stub_shaped(const elf::ElfInfo& elf) {
  const bool driver_soname =
      elf.soname && (*elf.soname == "libcuda.so.1" || *elf.soname == "libnvidia-ml.so.1");
  return driver_soname && elf.needed.empty();
}

} // namespace

bool stub_by_elf_facts(const elf::ElfInfo& elf, std::uintmax_t file_size) {
  return stub_shaped(elf) && file_size < k_stub_max_bytes;
}

bool looks_like_stub(const std::string& path, const std::string& realpath, const elf::ElfInfo* elf) {
  if (has_path_component(path, "stubs") || has_path_component(realpath, "stubs")) {
    return true;
  }
  const auto& file = realpath.empty() ? path : realpath;
  std::optional<elf::ElfInfo> read;
  if (elf == nullptr) {
    if (auto info = elf::read_elf_info(file)) {
      read = std::move(*info);
      elf = &*read;
    } else {
      return false;
    }
  }
  struct stat st {}; // the size only for a driver library that could be a stub
  fs::note_path(file);
  return stub_shaped(*elf) && ::stat(fs::HostPath(file).c_str(), &st) == 0 &&
         stub_by_elf_facts(*elf, static_cast<std::uintmax_t>(st.st_size));
}

namespace {

std::string unresolvable_reason(const std::string& path, const Error& error) {
  if (fs::is_symlink(path)) {
    return error.message == std::strerror(ELOOP) ? "symlink loop" : "broken symlink (" + error.message + ")";
  }
  return "cannot resolve path: " + error.message;
}

void inspect_library(Candidate& candidate) {
  auto info = elf::read_elf_info(*candidate.realpath); // a regular file's facts, or why not
  // cuda-pathfinder asks os.path.isfile() and passes over a directory; glibc's dlopen opens it and
  // stops with "cannot read file data: Is a directory".
  if (!info && !fs::is_regular_file(*candidate.realpath)) {
    candidate.rejected =
        fs::is_directory(*candidate.realpath) ? "a directory, not a file" : "not a regular file";
    candidate.pathfinder_skips = true;
    return;
  }
  // A file shorter than its headers say: what glibc does with it (fails or dies), in its words.
  if (auto truncated = elf::truncated_load(*candidate.realpath)) {
    candidate.rejected = truncated->reason;
    candidate.crashes = truncated->crashes;
    return;
  }
  if (!info) {
    candidate.rejected = "not a loadable library: " + info.error().message;
    return;
  }
  if (auto why = elf::incompatibility_with_host(*info)) {
    candidate.rejected = *why;
    candidate.loader_skips = true;
  }
  candidate.elf = std::move(*info);
  candidate.is_stub = looks_like_stub(candidate.first.path, *candidate.realpath, &*candidate.elf);
}

void inspect_headers(const ComponentSpec& spec, Candidate& candidate) {
  const auto anchor = fs::join(*candidate.realpath, spec.file_names.front());
  if (!fs::is_regular_file(anchor)) {
    candidate.rejected = std::string(spec.file_names.front()) + " is not a readable regular file";
    candidate.pathfinder_skips = true;
    return;
  }
  if (spec.name == "cccl") {
    candidate.features["cub"] = fs::is_directory(fs::join(*candidate.realpath, "cub"));
    candidate.features["thrust"] = fs::is_directory(fs::join(*candidate.realpath, "thrust"));
  }
}

// Static archives and LLVM bitcode: cuda-pathfinder only asks os.path.isfile(); what is inside
// decides whether linking it works. Reads the first 8 bytes.
void inspect_link_input(ComponentKind kind, Candidate& candidate) {
  if (!fs::is_regular_file(*candidate.realpath)) {
    candidate.rejected =
        fs::is_directory(*candidate.realpath) ? "a directory, not a file" : "not a regular file";
    candidate.pathfinder_skips = true;
    return;
  }
  const auto head = fs::read_file_prefix(*candidate.realpath, 8);
  if (!head) {
    candidate.rejected = "unreadable: " + head.error().message;
    return;
  }
  if (head->empty()) {
    candidate.rejected = "empty file";
    return;
  }
  if (kind == ComponentKind::static_lib) {
    if (*head != "!<arch>\n") {
      candidate.rejected = "not an ar archive (no !<arch> header)";
    }
    return;
  }
  // LLVM bitcode: 'B' 'C' 0xC0 0xDE, or the bitcode wrapper 0x0B17C0DE (little-endian).
  const auto byte = [&](std::size_t i) {
    return i < head->size() ? static_cast<unsigned char>((*head)[i]) : 0U;
  };
  const bool raw = byte(0) == 'B' && byte(1) == 'C' && byte(2) == 0xC0 && byte(3) == 0xDE;
  const bool wrapped = byte(0) == 0xDE && byte(1) == 0xC0 && byte(2) == 0x17 && byte(3) == 0x0B;
  if (!raw && !wrapped) {
    candidate.rejected = "not LLVM bitcode (no BC 0xC0DE magic)";
  }
}

void inspect_binary(Candidate& candidate) {
  if (!fs::is_regular_file(*candidate.realpath)) {
    candidate.rejected = "not a regular file";
  } else if (!fs::is_executable_file(*candidate.realpath)) {
    candidate.rejected = "not executable";
  }
  candidate.pathfinder_skips = candidate.rejected.has_value(); // isfile() and os.access(X_OK)
}

Candidate inspect(const ComponentSpec& spec, const Sighting& sighting, const SystemLayout& layout,
                  const versions::PackageDatabase* packages, const probes::DirectoryCache* dirs,
                  bool packages_when_read) {
  Candidate candidate;
  candidate.first = sighting;
  auto resolved = dirs != nullptr ? dirs->real_path(sighting.path) : fs::real_path(sighting.path);
  if (!resolved) {
    candidate.rejected = unresolvable_reason(sighting.path, resolved.error());
    candidate.loader_skips = true;
    candidate.pathfinder_skips = true;
    return candidate;
  }
  candidate.realpath = *resolved;
  switch (spec.kind) {
  case ComponentKind::dynamic_lib: inspect_library(candidate); break;
  case ComponentKind::headers: inspect_headers(spec, candidate); break;
  case ComponentKind::binary: inspect_binary(candidate); break;
  case ComponentKind::static_lib:
  case ComponentKind::bitcode_lib: inspect_link_input(spec.kind, candidate); break;
  }
  // Asked later (complete_versions) when the database is still being read and the sources before
  // it give no version or only the file name's, which the database's would replace.
  const bool later = packages_when_read && packages != nullptr && !packages->lists_read();
  candidate.version =
      find_version(spec, sighting, candidate.realpath, layout, later ? nullptr : packages, dirs);
  candidate.version_awaits_packages =
      later && (!candidate.version || candidate.version->source == versions::VersionSource::file_name);
  return candidate;
}

// The site-packages directory a wheel file lives in: the last directory of `path` named
// site-packages or dist-packages (nvidia/..., cutensor/..., cuquantum/..., nvpl/... below it).
std::optional<std::string> wheel_site_dir(const std::string& path) {
  for (const std::string_view name : {"/site-packages/", "/dist-packages/"}) {
    const auto at = path.rfind(name);
    if (at != std::string::npos) {
      return path.substr(0, at + name.size() - 1);
    }
  }
  return std::nullopt;
}

// A toolkit or conda root above a file: lib/, lib64/, targets/<triple>/lib*, include/, bin/, nvvm/lib64.
std::optional<std::string> root_above(const std::string& path, ComponentKind kind) {
  if (kind == ComponentKind::bitcode_lib) {
    const auto dir = fs::parent(path);
    if (fs::basename(dir) == "libdevice" && fs::basename(fs::parent(dir)) == "nvvm") {
      return fs::parent(fs::parent(dir));
    }
    return probes::derive_toolkit_root(path);
  }
  if (kind == ComponentKind::static_lib) {
    return probes::derive_toolkit_root(path);
  }
  if (kind == ComponentKind::dynamic_lib) {
    if (auto root = probes::derive_toolkit_root(path)) {
      return root;
    }
    const auto dir = fs::parent(path);
    if (fs::basename(dir) == "lib64" && fs::basename(fs::parent(dir)) == "nvvm") {
      return fs::parent(fs::parent(dir));
    }
    if (fs::basename(dir) == "lib64" && fs::basename(fs::parent(dir)) == "CUPTI") {
      return fs::parent(fs::parent(fs::parent(dir)));
    }
    return std::nullopt;
  }
  // headers: the directory itself is include/ or include/cccl; binaries: bin/<name>.
  std::string dir = kind == ComponentKind::headers ? path : fs::parent(path);
  if (fs::basename(dir) == "cccl") {
    dir = fs::parent(dir);
  }
  const auto name = fs::basename(dir);
  if (name != "include" && name != "bin") {
    return std::nullopt;
  }
  auto root = fs::parent(dir);
  if (fs::basename(fs::parent(root)) == "targets") {
    root = fs::parent(fs::parent(root));
  }
  return root;
}

// The wheel distributions that can own a file at `path`, most likely first: CUDA 13 wheels put
// files under nvidia/cu13/, CUDA 12 wheels (named *-cu12) under per-component directories, and
// CUDA 11 wheels (*-cu11) in those same directories under their older SONAMEs (libcudart.so.11.0);
// a site-packages dir may hold several, so the layout and the file's name decide which metadata to
// read first.
std::vector<std::string_view> wheel_distributions_for(const ComponentSpec& spec, const std::string& path) {
  const bool cu13_layout = path.find("/cu13/") != std::string::npos; // nvidia/cu13/, nvidia/cublasmp/cu13/
  const auto file_name = fs::basename(path);
  const bool older_soname =
      std::find(spec.older_sonames.begin(), spec.older_sonames.end(), file_name) != spec.older_sonames.end();
  const auto rank = [&](std::string_view name) {
    const bool cu12_name = name.ends_with("-cu12");
    const bool cu11_name = name.ends_with("-cu11");
    if (cu13_layout) {
      return cu12_name || cu11_name ? 1 : 0;
    }
    if (older_soname) {
      return cu11_name ? 0 : cu12_name ? 1 : 2;
    }
    return cu12_name ? 0 : cu11_name ? 2 : 1;
  };
  std::vector<std::string_view> names(spec.wheel_distributions.begin(), spec.wheel_distributions.end());
  std::stable_sort(names.begin(), names.end(),
                   [&](std::string_view a, std::string_view b) { return rank(a) < rank(b); });
  return names;
}

template <class T> std::span<const std::string_view> as_span(const T& list) {
  return {list.data(), list.size()};
}

} // namespace

std::optional<versions::FoundVersion> find_version(const ComponentSpec& spec, const Sighting& sighting,
                                                   const std::optional<std::string>& realpath,
                                                   const SystemLayout&,
                                                   const versions::PackageDatabase* packages,
                                                   const probes::DirectoryCache* dirs) {
  if (!realpath) {
    return std::nullopt;
  }
  // The name it was found under is the SONAME the search asked for (libnvrtc.so.13); the real
  // file may extend it (libnvrtc.so.13.0.88). A suffix that does not extend the SONAME's own
  // number is another numbering (libcupti.so.13 -> libcupti.so.2025.3.1; the driver's
  // libcuda.so.1 -> .580.95.05): packaging metadata is preferred, the suffix is the fallback.
  std::optional<versions::FoundVersion> from_file_name;
  if (spec.kind == ComponentKind::dynamic_lib) {
    const auto soname = fs::basename(sighting.path);
    if (auto version = versions::version_from_file_name(fs::basename(*realpath), soname)) {
      from_file_name = versions::FoundVersion{*version, versions::VersionSource::file_name, *realpath};
      const auto soname_number =
          soname.substr(soname.rfind(".so.") == std::string::npos ? soname.size() : soname.rfind(".so.") + 4);
      if (!soname_number.empty() && version->rfind(soname_number + ".", 0) == 0) {
        return from_file_name;
      }
    }
  }
  // A copy vendored in a framework wheel under a hashed name (libnvrtc-3a20f2b6.so.11.1): no
  // packaging metadata describes it, its name's numbers are its version.
  if (spec.kind == ComponentKind::dynamic_lib && sighting.found_via == "vendored") {
    const auto name = fs::basename(*realpath);
    if (const auto so = name.find(".so."); so != std::string::npos && so + 4 < name.size()) {
      return versions::FoundVersion{name.substr(so + 4), versions::VersionSource::file_name, *realpath};
    }
  }
  if (spec.kind == ComponentKind::headers) {
    const auto from_headers = [&]() -> std::optional<versions::FoundVersion> {
      if (spec.name == "cccl") {
        return versions::cccl_version_from_headers(*realpath);
      }
      if (spec.name == "cudart") {
        return versions::cuda_version_from_header(*realpath, "cuda_runtime_api.h", "CUDART_VERSION");
      }
      if (spec.version_macros) {
        const auto& macros = *spec.version_macros;
        return versions::version_from_macros(*realpath, macros.header, macros.major, macros.minor,
                                             macros.patch);
      }
      return std::nullopt;
    };
    if (auto found =
            dirs != nullptr ? dirs->header_version(*realpath, spec.name, from_headers) : from_headers()) {
      return found;
    }
  }
  for (const auto& path : {sighting.path, *realpath}) {
    if (auto site = wheel_site_dir(path)) {
      const auto names = wheel_distributions_for(spec, path);
      if (auto found = dirs != nullptr ? dirs->dist_info_version(*site, as_span(names))
                                       : versions::version_from_dist_info(*site, as_span(names), nullptr)) {
        return found;
      }
    }
  }
  for (const auto& path : {sighting.path, *realpath}) {
    const auto root = root_above(path, spec.kind);
    if (!root) {
      continue;
    }
    // Every component found under a root asks about the same three places: read once per run.
    const auto keys = as_span(spec.toolkit_json_keys);
    if (auto found = dirs != nullptr
                         ? versions::version_from_toolkit_json(*root, dirs->toolkit_version_json(*root), keys)
                         : versions::version_from_toolkit_json(*root, keys)) {
      return found;
    }
    const auto dist_info = fs::join(*root, "dist-info");
    if (auto found = dirs != nullptr ? dirs->dist_info_version(dist_info, as_span(spec.wheel_distributions))
                                     : versions::version_from_dist_info(
                                           dist_info, as_span(spec.wheel_distributions), nullptr)) {
      found->source = versions::VersionSource::toolkit_dist_info;
      return found;
    }
    const auto conda_meta = fs::join(*root, "conda-meta");
    if (auto found = versions::version_from_conda_meta(*root, as_span(spec.conda_packages),
                                                       dirs != nullptr ? dirs->names_if_complete(conda_meta)
                                                                       : nullptr)) {
      return found;
    }
  }
  if (packages != nullptr) {
    // A header set is a directory: its anchor file is what a package lists.
    const bool directory = spec.kind == ComponentKind::headers;
    const auto listed = directory ? fs::join(sighting.path, spec.file_names.front()) : sighting.path;
    const auto real = directory ? fs::join(*realpath, spec.file_names.front()) : *realpath;
    if (auto found = packages->version_of_file(listed, real)) {
      return found;
    }
  }
  return from_file_name;
}

std::vector<Candidate> build_candidates(const ComponentSpec& spec, const std::vector<Sighting>& sightings,
                                        const SystemLayout& layout, const versions::PackageDatabase* packages,
                                        const probes::DirectoryCache* dirs, bool packages_when_read) {
  std::vector<Candidate> candidates;
  std::vector<Identity> identities;
  for (const auto& sighting : sightings) {
    const auto identity = identity_of(sighting.path, dirs);
    bool merged = false;
    for (std::size_t i = 0; i < identities.size(); ++i) {
      if (identities[i] == identity) {
        candidates[i].also_found_as.push_back(sighting);
        merged = true;
        break;
      }
    }
    if (!merged) {
      identities.push_back(identity);
      candidates.push_back(inspect(spec, sighting, layout, packages, dirs, packages_when_read));
    }
  }
  return candidates;
}

void complete_versions(const ComponentSpec& spec, std::vector<Candidate>& candidates,
                       const SystemLayout& layout, const versions::PackageDatabase* packages,
                       const probes::DirectoryCache* dirs) {
  for (auto& candidate : candidates) {
    if (candidate.version_awaits_packages) {
      candidate.version = find_version(spec, candidate.first, candidate.realpath, layout, packages, dirs);
      candidate.version_awaits_packages = false;
    }
  }
}

} // namespace cudadiag::discovery
