#include "inspect/loaded_components.hpp"

#include "core/filesystem.hpp"
#include "core/read_record.hpp"
#include "discovery/candidate_inspection.hpp"
#include "report/json_report.hpp"

#include <algorithm>
#include <cctype>
#include <ctime>
#include <mutex>
#include <unordered_map>

namespace cudadiag::inspect {
namespace {

using nlohmann::json;
using probes::ComponentKind;
using probes::ComponentSpec;

constexpr std::string_view k_so = ".so";
constexpr std::string_view k_alt = ".alt";

// The "libX.so" stem of a SONAME ("libnvrtc.so" for "libnvrtc.so.13"); empty if it has none.
std::string_view stem_of(std::string_view soname) {
  if (soname.ends_with(k_so)) {
    return soname;
  }
  const auto at = soname.rfind(".so.");
  return at == std::string_view::npos ? std::string_view{} : soname.substr(0, at + k_so.size());
}

// "libnvrtc.so…" -> "libnvrtc.alt.so…".
std::string alt_form(std::string_view soname, std::string_view stem) {
  return std::string(stem.substr(0, stem.size() - k_so.size())) + std::string(k_alt) + std::string(k_so) +
         std::string(soname.substr(stem.size()));
}

// Whether `base` is `stem` or `stem` + "." + dotted digits.
bool extends_stem(std::string_view base, std::string_view stem) {
  if (!base.starts_with(stem)) {
    return false;
  }
  const auto rest = base.substr(stem.size());
  return rest.empty() || (rest.front() == '.' && versions::is_dotted_digits(rest.substr(1)));
}

// The declared SONAME (in the variant's spelling) that `base` equals or extends with ".digits";
// else the newest declared SONAME with `stem`, whose number then is another numbering or major.
std::string version_soname(const ComponentSpec& spec, std::string_view stem, std::string_view base,
                           bool alt) {
  std::string fallback;
  for (const auto soname : spec.file_names) {
    if (stem_of(soname) != stem) {
      continue;
    }
    auto spelled = alt ? alt_form(soname, stem) : std::string(soname);
    if (base == spelled || (base.starts_with(spelled) && base.substr(spelled.size()).starts_with('.'))) {
      return spelled;
    }
    if (fallback.empty()) {
      fallback = std::move(spelled);
    }
  }
  return fallback;
}

std::optional<versions::FoundVersion>
version_from_name_only(const std::string& path, const std::string& soname, std::string_view note) {
  auto version = versions::version_from_file_name(fs::basename(path), soname);
  if (!version) {
    return std::nullopt;
  }
  return versions::FoundVersion{*version, versions::VersionSource::file_name, path + std::string(note)};
}

// The version discovery would report for this file, read without loading it. A deleted or
// unresolvable file has only its name to go by: whatever lies at its path now is another file.
std::optional<versions::FoundVersion> version_of(const LibraryMatch& match, const MappedFile& file,
                                                 const std::optional<std::string>& realpath) {
  if (file.deleted) {
    return version_from_name_only(file.path, match.soname, " (deleted since it was mapped)");
  }
  if (!realpath) {
    return version_from_name_only(file.path, match.soname, "");
  }
  // Discovery reads the SONAME a search asked for from the sighting's name; a mapping is the
  // file behind that SONAME, so present it as a sighting of the SONAME in the same directory.
  discovery::Sighting sighting;
  sighting.path = fs::join(fs::parent(file.path), match.soname);
  sighting.found_via = "mapped";
  sighting.search_dir = fs::parent(file.path);
  return discovery::find_version(*match.spec, sighting, realpath, SystemLayout{});
}

std::int64_t realtime_ns() {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

// What a mapped library's file says of itself: its version and whether it is a stub.
struct FileFacts {
  std::optional<versions::FoundVersion> version;
  bool is_stub = false;
};

FileFacts read_file_facts(const LibraryMatch& match, const MappedFile& file,
                          const std::optional<std::string>& realpath) {
  return {version_of(match, file, realpath), discovery::looks_like_stub(file.path, realpath.value_or(""))};
}

// read_file_facts() for this process's own mappings, remembered while the file is unchanged: an
// application that calls quick_check() at every start of a task maps the same few dozen CUDA
// libraries each time (after `import torch`: cuDNN's, cuBLAS's, NCCL's...), and reading their ELF
// headers again was most of a repeated call. Keyed by what the facts depend on: the component,
// the SONAME it matched, the mapped path and its resolution, and the resolved file's identity
// (stat: device, inode, size, mtime, ctime); a replaced or rewritten file is read afresh, and one
// changed within the timestamps' granularity is not remembered. Bounded: emptied at k_limit entries.
class FileFactsMemo {
public:
  FileFacts facts(const LibraryMatch& match, const MappedFile& file,
                  const std::optional<std::string>& realpath) {
    if (file.deleted || !realpath) {
      return read_file_facts(match, file, realpath);
    }
    const auto identity = fs::followed_identity(*realpath);
    if (identity.error != 0 || fs::recently_changed(identity, realtime_ns())) {
      return read_file_facts(match, file, realpath);
    }
    auto key = std::string(match.spec->name) + '\0' + match.soname + '\0' + file.path + '\0' + *realpath +
               '\0' + std::to_string(identity.device) + ':' + std::to_string(identity.inode) + ':' +
               std::to_string(identity.size) + ':' + std::to_string(identity.mtime_ns) + ':' +
               std::to_string(identity.ctime_ns);
    {
      const std::lock_guard lock(m_mutex);
      if (const auto found = m_facts.find(key); found != m_facts.end()) {
        return found->second;
      }
    }
    auto facts = read_file_facts(match, file, realpath);
    const std::lock_guard lock(m_mutex);
    if (m_facts.size() >= k_limit) {
      m_facts.clear();
    }
    m_facts.emplace(std::move(key), facts);
    return facts;
  }

private:
  static constexpr std::size_t k_limit = 4096;
  std::mutex m_mutex;
  std::unordered_map<std::string, FileFacts> m_facts;
};

FileFactsMemo& file_facts_memo() {
  static FileFactsMemo memo;
  return memo;
}

// Two mappings are the same file when device and inode agree; without an inode, when the
// resolved (else the mapped) paths agree.
std::string identity_of(const MappedFile& file, const std::optional<std::string>& realpath) {
  if (file.inode != 0) {
    return "inode:" + file.device + ":" + std::to_string(file.inode);
  }
  return "path:" + realpath.value_or(file.path);
}

std::string process_label(int pid) {
  return pid == 0 ? "this process" : "process " + std::to_string(pid);
}

std::string text(std::string_view value) {
  return report::to_valid_utf8(value);
}

json optional_text(const std::optional<std::string>& value) {
  return value ? json(text(*value)) : json(nullptr);
}

std::string version_label(const LoadedComponent& component) {
  return component.version ? component.version->version : "unknown version";
}

EvidenceValue optional_evidence_text(const std::optional<std::string>& value) {
  return value ? EvidenceValue(text(*value)) : EvidenceValue();
}

EvidenceValue copy_evidence(const LoadedComponent& component) {
  return {{"path", text(component.path)},
          {"realpath", optional_evidence_text(component.realpath)},
          {"version", component.version ? EvidenceValue(text(component.version->version)) : EvidenceValue()},
          {"variant", component.variant.empty() ? EvidenceValue() : EvidenceValue(component.variant)},
          {"deleted", component.deleted}};
}

findings::Finding duplicate_finding(int pid, const std::string& name,
                                    const std::vector<const LoadedComponent*>& copies) {
  std::string message = process_label(pid) + " has " + std::to_string(copies.size()) +
                        " different copies of " + name + " mapped:";
  Evidence::List evidence_copies;
  for (std::size_t i = 0; i < copies.size(); ++i) {
    message += (i == 0 ? " " : ", ") + copies[i]->path + " (" + version_label(*copies[i]) +
               (copies[i]->variant.empty() ? "" : ", " + copies[i]->variant + " variant") + ")";
    evidence_copies.push_back(copy_evidence(*copies[i]));
  }
  auto finding = findings::make_finding("process.duplicate_lib", std::move(message), {name},
                                        {{"pid", pid}, {"component", name}, {"copies", evidence_copies}});
  // About a running process: more specific than the reference remedy.
  finding.remedy =
      "Load one copy per process: find which package brings each copy (e.g. a pip wheel and a system "
      "toolkit, or wheels of two CUDA majors), keep one and remove the other or its directory from "
      "LD_LIBRARY_PATH; code that dlopens a library by absolute path bypasses the copy already loaded.";
  return finding;
}

findings::Finding stub_finding(int pid, const LoadedComponent& component) {
  auto finding = findings::make_finding(
      "driver.stub",
      process_label(pid) + " has the CUDA Toolkit's link-time stub " + component.path +
          " mapped as libcuda: every CUDA driver call in it fails with CUDA_ERROR_STUB_LIBRARY (34)",
      {component.name},
      {{"pid", pid},
       {"path", text(component.path)},
       {"realpath", optional_evidence_text(component.realpath)}});
  // About a running process: it must be restarted once the stub is out of its way.
  finding.remedy =
      "Remove the toolkit's stubs/ directory from LD_LIBRARY_PATH (it is only for linking), make sure "
      "the real driver library is installed, and restart the process.";
  return finding;
}

} // namespace

std::optional<LibraryMatch> match_library_file(std::string_view path) {
  const auto slash = path.rfind('/');
  const auto base = slash == std::string_view::npos ? path : path.substr(slash + 1);
  for (const auto& spec : probes::catalog()) {
    if (spec.kind != ComponentKind::dynamic_lib) {
      continue;
    }
    for (const auto soname : spec.file_names) {
      const auto stem = stem_of(soname);
      if (stem.empty()) {
        continue;
      }
      for (const bool alt : {false, true}) {
        const auto spelled_stem = alt ? alt_form(stem, stem) : std::string(stem);
        if (extends_stem(base, spelled_stem)) {
          return LibraryMatch{&spec, version_soname(spec, stem, base, alt), alt ? "alt" : ""};
        }
      }
    }
  }
  return std::nullopt;
}

const ComponentSpec* component_for_file(std::string_view path) {
  const auto match = match_library_file(path);
  return match ? match->spec : nullptr;
}

ProcessInspection inspect_mapped(const std::vector<MappedFile>& files, int pid) {
  ProcessInspection inspection;
  inspection.pid = pid;
  std::vector<std::string> identities;
  for (const auto& file : files) {
    const auto match = match_library_file(file.path);
    if (!match) {
      continue;
    }
    LoadedComponent component;
    component.name = std::string(match->spec->name);
    component.variant = match->variant;
    component.path = file.path;
    component.deleted = file.deleted;
    if (!file.deleted) {
      if (auto resolved = fs::real_path(file.path)) {
        component.realpath = std::move(*resolved);
      }
    }
    // Another process's mappings are read as they are; this process's are remembered (above).
    auto facts = pid == 0 ? file_facts_memo().facts(*match, file, component.realpath)
                          : read_file_facts(*match, file, component.realpath);
    component.version = std::move(facts.version);
    component.is_stub = facts.is_stub;
    identities.push_back(identity_of(file, component.realpath));
    inspection.components.push_back(std::move(component));
  }

  // process.duplicate_lib: per component (in mapping order), the distinct files mapped.
  std::vector<std::string> names_done;
  for (const auto& first : inspection.components) {
    if (std::find(names_done.begin(), names_done.end(), first.name) != names_done.end()) {
      continue;
    }
    names_done.push_back(first.name);
    std::vector<const LoadedComponent*> copies;
    std::vector<std::string> copy_identities;
    for (std::size_t i = 0; i < inspection.components.size(); ++i) {
      const auto& component = inspection.components[i];
      if (component.name == first.name &&
          std::find(copy_identities.begin(), copy_identities.end(), identities[i]) == copy_identities.end()) {
        copy_identities.push_back(identities[i]);
        copies.push_back(&component);
      }
    }
    if (copies.size() > 1) {
      inspection.findings.push_back(duplicate_finding(pid, first.name, copies));
    }
  }
  for (const auto& component : inspection.components) {
    if (component.name == "cuda" && component.is_stub) {
      inspection.findings.push_back(stub_finding(pid, component));
    }
  }
  return inspection;
}

Expected<ProcessInspection> inspect_process(int pid) {
  auto files = read_process_maps(pid);
  if (!files) {
    return files.error();
  }
  return inspect_mapped(*files, pid);
}

ProcessInspection inspect_this_process() {
  return inspect_mapped(loaded_in_this_process(), 0);
}

json inspection_to_json(const ProcessInspection& inspection) {
  json components = json::array();
  for (const auto& component : inspection.components) {
    components.push_back(
        {{"name", component.name},
         {"variant", component.variant.empty() ? json(nullptr) : json(component.variant)},
         {"path", text(component.path)},
         {"realpath", optional_text(component.realpath)},
         {"deleted", component.deleted},
         {"version", component.version ? json(text(component.version->version)) : json(nullptr)},
         {"version_source", component.version
                                ? json(std::string(versions::to_string(component.version->source)))
                                : json(nullptr)},
         {"is_stub", component.is_stub}});
  }
  json found = json::array();
  for (const auto& finding : inspection.findings) {
    found.push_back(report::finding_to_json(finding));
  }
  return {{"schema_version", k_inspect_schema_version},
          {"tool", {{"name", "cudadiag"}, {"version", CUDADIAG_VERSION}}},
          {"pid", inspection.pid},
          {"components", components},
          {"findings", found}};
}

using report::k_bold;
using report::k_dim;
using report::k_red;
using report::k_yellow;
using report::pad;
using report::paint;
using report::severity_color;

std::string render_inspection_text(const ProcessInspection& inspection, report::TextStyle style) {
  auto who = process_label(inspection.pid);
  who.front() = static_cast<char>(std::toupper(static_cast<unsigned char>(who.front())));
  std::string out;
  if (inspection.components.empty()) {
    out += paint(style, k_bold, who) + ": no CUDA libraries mapped\n";
  } else {
    out += paint(style, k_bold, who) + ": " + std::to_string(inspection.components.size()) + " CUDA librar" +
           (inspection.components.size() == 1 ? "y" : "ies") + " mapped\n";
    out += "  " + pad("NAME", 12) + pad("VERSION", 14) + "PATH\n";
    for (const auto& component : inspection.components) {
      const auto name =
          component.variant.empty() ? component.name : component.name + " (" + component.variant + ")";
      std::string where = text(component.path);
      if (component.deleted) {
        where += paint(style, k_yellow, "  [deleted]");
      }
      if (component.is_stub) {
        where += paint(style, k_red, "  [stub]");
      }
      out += "  " + pad(name, 12) + pad(component.version ? text(component.version->version) : "-", 14) +
             where + "\n";
      if (component.realpath && *component.realpath != component.path) {
        out += "  " + pad("", 12 + 14) + paint(style, k_dim, "-> " + text(*component.realpath)) + "\n";
      }
    }
  }
  out += "\n" + paint(style, k_bold, "Findings") + "\n";
  if (inspection.findings.empty()) {
    out += "  none\n";
  }
  for (const auto& finding : inspection.findings) {
    std::string label(findings::to_string(finding.severity));
    std::transform(label.begin(), label.end(), label.begin(),
                   [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
    out += "  " + paint(style, severity_color(finding.severity), pad(label, 8)) +
           paint(style, k_bold, finding.id) + "\n    " + text(finding.message) +
           "\n    remedy: " + text(finding.remedy) + "\n";
  }
  return report::escape_controls(out, style);
}

} // namespace cudadiag::inspect
