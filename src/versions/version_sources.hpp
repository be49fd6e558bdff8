#pragma once
// Version numbers of CUDA components read from what lies on disk next to them — file names, wheel
// metadata, a toolkit's version.json, conda-meta records and header macros — never by loading or
// running anything. Every reader is bounded (it reads a few KiB to 1 MiB per file, lists each
// directory once) and returns nullopt, never throws, on missing, unreadable, huge or garbled input.

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace cudadiag::versions {

// Where a version was read from; the JSON field "version_source" uses to_string's spelling.
enum class VersionSource {
  file_name,            // the suffix of a real file name beyond its SONAME (libnvrtc.so.13.0.88)
  wheel_metadata,       // <site-packages>/<dist>-<version>.dist-info/METADATA of a pip wheel
  toolkit_version_json, // <toolkit>/version.json of an NVIDIA installer toolkit
  conda_meta,           // <prefix>/conda-meta/<name>-<version>-<build>.json
  header_macro,         // a #define in a header (CUDA_VERSION, CCCL_VERSION, THRUST_VERSION…)
  toolkit_dist_info,    // <toolkit>/dist-info/<dist>-<version>.dist-info of a toolkit built from wheels
  dpkg_status,          // the Debian package that installed the file (info/*.list, then status)
  rpm_db,               // the RPM package that installed the file (rpmdb.sqlite)
};

// "file_name", "wheel_metadata", "toolkit_version_json", "conda_meta", "header_macro",
// "toolkit_dist_info", "dpkg_status", "rpm_db".
std::string_view to_string(VersionSource source);
// Every source, in the order the JSON schema's enum lists them (a unit test compares the two).
inline constexpr VersionSource k_version_sources[] = {
    VersionSource::file_name,   VersionSource::wheel_metadata, VersionSource::toolkit_version_json,
    VersionSource::conda_meta,  VersionSource::header_macro,   VersionSource::toolkit_dist_info,
    VersionSource::dpkg_status, VersionSource::rpm_db,
};

struct FoundVersion {
  std::string version;
  VersionSource source = VersionSource::file_name;
  // The file the version was read from (or the file name it was parsed out of), with a note in
  // parentheses when a fallback was taken, e.g. "… (version from the directory name: …)".
  std::string evidence;
};

// The version a real file name carries beyond its SONAME, when the file name extends the SONAME's
// "libX.so." stem with dotted digits: ("libnvrtc.so.13.0.88", "libnvrtc.so.13") -> "13.0.88",
// ("libcuda.so.580.95.05", "libcuda.so.1") -> "580.95.05". Nullopt when the suffix says no more than
// the SONAME ("libnvrtc.so.13" for "libnvrtc.so.13"), when the stems differ, or when the suffix is
// anything but dotted digits. With an empty `soname` the file name's own "libX.so." stem is used and
// a single number is taken for a SONAME major and not reported ("libX.so.13" -> nullopt,
// "libnvrtc-builtins.so.13.0" -> "13.0"). Directory parts of either argument are ignored.
std::optional<std::string> version_from_file_name(std::string_view file_name, std::string_view soname);

// The version of the first of `distribution_names` that has a `<dist>-<version>.dist-info` directory
// in `dir` (a site-packages directory, or a wheel-assembled toolkit's dist-info/ folder). Names are
// compared after PEP 503 normalisation (case-insensitive; runs of '-', '_', '.' are equivalent), so
// "nvidia-cuda-nvrtc" finds nvidia_cuda_nvrtc-13.0.88.dist-info and "nvidia-cuda-nvrtc" does not
// find nvidia_cuda_nvrtc_cu12-…. The version is METADATA's "Version:" header (first 64 KiB, headers
// only); if METADATA is missing or has no usable Version, the directory name's version is used and
// the evidence says so. Several dist-info directories for one name (a broken upgrade) give the
// newest. Source is toolkit_dist_info when `dir` is itself named "dist-info", else wheel_metadata.
// `listing`, when given, is `dir`'s entry names (a run's shared listing), so that the directory is
// not listed again for every candidate.
std::optional<FoundVersion> version_from_dist_info(const std::string& dir,
                                                   std::span<const std::string_view> distribution_names,
                                                   const std::vector<std::string_view>* listing = nullptr);

// The "version" string of the first of `keys` present as an object in <toolkit_root>/version.json
// (e.g. {"cuda_nvrtc"}). Nullopt if the file is missing, over 1 MiB or not valid JSON.
std::optional<FoundVersion> version_from_toolkit_json(const std::string& toolkit_root,
                                                      std::span<const std::string_view> keys);
// What <toolkit_root>/version.json says: each top-level key whose value is an object with a string
// "version" (e.g. "cuda_nvrtc" -> "13.0.88"); empty when the file is missing, over 1 MiB or not JSON.
using ToolkitVersions = std::map<std::string, std::string, std::less<>>;
ToolkitVersions read_toolkit_version_json(const std::string& toolkit_root);
// The same answer as above from a version.json already read (read_toolkit_version_json).
std::optional<FoundVersion> version_from_toolkit_json(const std::string& toolkit_root,
                                                      const ToolkitVersions& versions,
                                                      std::span<const std::string_view> keys);

// The toolkit's overall version: version.json's "cuda" entry; else, in <toolkit_root>/dist-info, the
// cuda-toolkit meta-package, then the CUDA runtime wheel (nvidia-cuda-runtime, -cu12/-cu11), whose
// version is the runtime's (13.0.96), not the release's (13.0.2); else CUDART_VERSION from
// <toolkit_root>/include/cuda_runtime_api.h (major.minor only).
std::optional<FoundVersion> toolkit_version(const std::string& toolkit_root);

// The version of the first of `package_names` with a record in <prefix>/conda-meta. Records are
// matched by file name ("<name>-<version>-<build>.json"; the name may contain '-', version and build
// do not) before any is read; the matching record's JSON "name" and "version" are checked when it is
// under 4 MiB (a record naming another package is skipped; one that does not parse is trusted by
// its file name, and the evidence says so).
// `listing`, when given, is <prefix>/conda-meta's entry names (a run's shared listing).
std::optional<FoundVersion> version_from_conda_meta(const std::string& prefix,
                                                    std::span<const std::string_view> package_names,
                                                    const std::vector<std::string_view>* listing = nullptr);

// CCCL's version from the headers under `include_dir` (the directory holding cuda/std/version, e.g.
// <toolkit>/include/cccl on CUDA 13, <toolkit>/include on CUDA 12): CCCL_VERSION (MMMmmmppp,
// 3000001 -> "3.0.1"), else literal CCCL_MAJOR/MINOR/PATCH_VERSION, in <cuda/version>,
// <cuda/std/version> or <cuda/std/__cccl/version.h>; else THRUST_VERSION from <thrust/version.h>,
// else CUB_VERSION from <cub/version.cuh> (both MMMmmmpp: major*100000 + minor*100 + subminor,
// 300001 -> "3.0.1"). Only `#define NAME <decimal>` lines are read; nothing is compiled.
std::optional<FoundVersion> cccl_version_from_headers(const std::string& include_dir);

// A CUDA version macro from <include_dir>/<header_name>, encoded major*1000 + minor*10:
// ("cuda.h", "CUDA_VERSION") with "#define CUDA_VERSION 13000" -> "13.0"; likewise
// ("cuda_runtime_api.h", "CUDART_VERSION"). NVRTC's header has no version macro.
std::optional<FoundVersion> cuda_version_from_header(const std::string& include_dir,
                                                     std::string_view header_name, std::string_view macro);

// A library's version from literal macros in <include_dir>/<header_name>: `#define MAJOR n`,
// `#define MINOR n` and, when `patch` is not empty and defined, `#define PATCH n` ->
// "9.19.0" (CUDNN_MAJOR/CUDNN_MINOR/CUDNN_PATCHLEVEL in cudnn_version.h, NCCL_MAJOR/..., CUBLAS_VER_*).
// Nullopt unless MAJOR and MINOR are both there. The header is read as any other: bounded, and a
// FIFO, directory or device is not read.
std::optional<FoundVersion> version_from_macros(const std::string& include_dir, std::string_view header_name,
                                                std::string_view major, std::string_view minor,
                                                std::string_view patch);

// "13", "13.0.88", "580.95.05": one or more digit runs separated by single dots (bounded length).
bool is_dotted_digits(std::string_view text);

// Compares dotted versions component by component, numerically (any length of digits), missing
// components counting as 0: ("13.0.88", "13.0.9") > 0, ("12.4", "12.4.0") == 0. A component with a
// non-numeric tail ("0rc1") sorts before the same number without one. Returns -1, 0 or 1.
int compare_versions(std::string_view a, std::string_view b);

// The first two components as ints ("13.0.88" -> {13, 0}); nullopt unless both are plain numbers
// that fit an int ("13" and "x.1" -> nullopt).
std::optional<std::pair<int, int>> major_minor(std::string_view version);

} // namespace cudadiag::versions
