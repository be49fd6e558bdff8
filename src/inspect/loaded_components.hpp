#pragma once
// What a process really loaded: the catalog libraries among the files a process has mapped, with
// the version each file carries (read from disk, never by loading it), and the findings only a
// running process shows — two copies of one library side by side, or the driver stub in use.
// `cudadiag inspect --pid PID` is inspect_process + render_inspection_text / inspection_to_json.

#include "core/expected.hpp"
#include "findings/findings.hpp"
#include "inspect/process_maps.hpp"
#include "probes/catalog.hpp"
#include "report/text_report.hpp"
#include "versions/version_sources.hpp"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudadiag::inspect {

// A mapped file that is a catalog library.
struct LoadedComponent {
  std::string name;     // catalog name ("nvrtc", "cuda", …); dynamic_lib components only
  std::string variant;  // "alt" for an alternative build (libnvrtc.alt.so.13), else ""
  std::string path;     // as mapped
  bool deleted = false; // removed or replaced on disk since it was mapped
  // nullopt when unresolvable, or when deleted (the path names another file now).
  std::optional<std::string> realpath;
  // As discovery reads it, without loading; from the file name alone when deleted or unresolvable.
  std::optional<versions::FoundVersion> version;
  bool is_stub = false; // the toolkit's link-time stub: discovery's rule (a stubs/ directory)
};

struct ProcessInspection {
  int pid = 0;                             // 0: this process
  std::vector<LoadedComponent> components; // in the order of the mapped files (maps: by address)
  std::vector<findings::Finding> findings; // process.duplicate_lib, driver.stub
};

// How a file name matches a catalog library: the component, the declared SONAME used to read a
// version from the name ("libnvrtc.so.13" for libnvrtc.so.13.0.88; for a variant, the variant's
// SONAME "libnvrtc.alt.so.13"), and the variant ("" or "alt").
struct LibraryMatch {
  const probes::ComponentSpec* spec = nullptr;
  std::string soname;
  std::string variant;
};

// Which catalog library a file is, judged by its base name only. For each declared SONAME of a
// dynamic_lib component, its stem is the SONAME up to and including ".so" ("libnvrtc.so" for
// "libnvrtc.so.13", "libcuda.so" for "libcuda.so.1"). A base name matches when it is the stem
// itself, or the stem, a dot and one or more dot-separated digit runs — any major, so
// libnvrtc.so.11.2 is nvrtc too. "lib<X>.alt.so[.digits]" matches the same component as variant
// "alt" (NVRTC ships libnvrtc.alt.so.13 as an alternative build of itself).
//   match:    libnvrtc.so.13  libnvrtc.so.13.0.88  libcuda.so.1  libcuda.so.580.95.05  libcuda.so
//             libnvvm.so  libnvrtc.alt.so.13 (nvrtc, "alt")
//   no match: libnvrtc-builtins.so.13.0  libcublasLt.so.13 (is cublasLt, not cublas)  libcudart_static.a
//             libcudadebugger.so.1  libcuda.so.1.bak  libcuda.so.  libnvrtc.so.13.  libcudart.so.13.0a
std::optional<LibraryMatch> match_library_file(std::string_view path);
// match_library_file(path)'s component, or nullptr.
const probes::ComponentSpec* component_for_file(std::string_view path);

// The catalog libraries among `files` and the findings they support. `pid` is only recorded and
// named in messages (0: this process). Files are told apart by device and inode where known,
// else by realpath, else by path; two different files of one component (a variant included:
// libnvrtc.so.13 beside libnvrtc.alt.so.13 is two NVRTCs) are a process.duplicate_lib error, a
// libcuda from a stubs/ directory a driver.stub error. Paths are resolved and versions read in
// cudadiag's own mount namespace: for a process in a container, run cudadiag in that container.
ProcessInspection inspect_mapped(const std::vector<MappedFile>& files, int pid);
// read_process_maps(pid), then inspect_mapped; read_process_maps's errors pass through.
Expected<ProcessInspection> inspect_process(int pid);
// loaded_in_this_process(), then inspect_mapped with pid 0.
ProcessInspection inspect_this_process();

// The schema_version of inspection_to_json (docs/schema/inspect.schema.json).
inline constexpr int k_inspect_schema_version = 1;
// {"schema_version": 1, "tool": {name, version}, "pid": N, "components": [{"name", "variant",
//  "path", "realpath", "deleted", "version", "version_source", "is_stub"}], "findings": [finding…]};
// every string valid UTF-8.
nlohmann::json inspection_to_json(const ProcessInspection& inspection);
// A heading, a NAME / VERSION / PATH table and the findings with their remedies.
std::string render_inspection_text(const ProcessInspection& inspection, report::TextStyle style = {});

} // namespace cudadiag::inspect
