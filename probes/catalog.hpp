#pragma once
// The catalog: one data row per CUDA component cudadiag knows how to find. Adding a component is
// a one-row change in catalog.cpp (and, when it is verified, a probe in the worker). Names follow
// cuda-pathfinder's, so `cudadiag find nvrtc` and `load_nvidia_dynamic_lib("nvrtc")` talk about the same
// thing.

#include <optional>
#include <string_view>
#include <vector>

namespace cudadiag::probes {

enum class ComponentKind { dynamic_lib, headers, binary, static_lib, bitcode_lib };
// Every kind, in the order the JSON schema's enum lists them (a unit test compares the two).
inline constexpr ComponentKind k_component_kinds[] = {ComponentKind::dynamic_lib, ComponentKind::headers,
                                                      ComponentKind::binary, ComponentKind::static_lib,
                                                      ComponentKind::bitcode_lib};
// "dynamic_lib", "headers", "binary", "static_lib", "bitcode_lib" (the JSON's spelling).
std::string_view to_string(ComponentKind kind);
// The kind named by `text`: the JSON spelling, or the short prefix `cudadiag find` accepts before a
// slash ("lib", "headers", "binary", "static", "bitcode"). nullopt for anything else.
std::optional<ComponentKind> kind_from_string(std::string_view text);

// A header set's version macros: <dir>/<header> with `#define MAJOR n`, `MINOR n` and (optional)
// `PATCH n`, read literally (nothing is compiled): {"cudnn_version.h", "CUDNN_MAJOR", ...}.
struct VersionMacros {
  std::string_view header = {};
  std::string_view major = {};
  std::string_view minor = {};
  std::string_view patch = {};
};

// Who ships a component; decides which search strategies apply.
enum class Packaging {
  toolkit, // CUDA Toolkit: wheels, conda, CUDA_PATH/CUDA_HOME, system toolkits, the loader
  driver,  // NVIDIA driver: only what the system loader resolves (cuda-pathfinder's rule)
  other,   // separately shipped NVIDIA libraries (cuDNN, NCCL): wheels, conda, the loader, product roots
};

// Which of a component's two answers verification loads; the other one when that found nothing.
enum class LoadFirst {
  python, // what CUDA Python (cuda-pathfinder) selects
  loader, // what the native loader resolves (the driver libraries: cuda-pathfinder finds them so too)
};

struct VerifyWith {
  std::string_view probe = {}; // the worker's probe kind: "driver", "nvml", "cudart", "nvrtc", "nvjitlink"
  LoadFirst first = LoadFirst::python;
};

// How much a component matters when two reports differ: core components rank first (in catalog
// order), the others after them.
enum class Importance { core, other };

struct ComponentSpec {
  std::string_view name = {}; // cuda-pathfinder's name ("nvrtc", "cccl", "nvcc")
  ComponentKind kind = ComponentKind::dynamic_lib;
  Packaging packaging = Packaging::toolkit;
  std::string_view description = {}; // what it is and who loads it
  // dynamic_lib: the declared SONAMEs, newest CUDA major first (cuda-pathfinder >= 1.8 accepts only these).
  // headers: the anchor file whose directory is the answer ("cuda/std/version").
  // binary: the executable's file name.
  // In catalog()'s table the older_sonames follow, so every search and the loader's answer take them.
  std::vector<std::string_view> file_names = {};
  // Libraries: SONAMEs of older releases that cuda-pathfinder 1.9.1 does not declare (CUDA 11's
  // libcudart.so.11.0, cuDNN 8's libcudnn.so.8, cuTENSOR 1's libcutensor.so.1), newest first. The
  // native loader and the frameworks bind them; CUDA Python never does (cuda_python_declares).
  std::vector<std::string_view> older_sonames = {};
  // Whether CUDA Python (cuda-pathfinder 1.9.1) knows this name. false: a library cudadiag adds
  // beyond its catalog (cuDNN's sub-libraries), answered by the loader and the frameworks only.
  bool cuda_python = true;
  // Wheel directories under a site-packages dir, in cuda-pathfinder's order: CUDA 13's
  // "nvidia/cu13/..." first, then the CUDA 12 per-component directory.
  std::vector<std::string_view> wheel_dirs = {};
  // Directories under a toolkit root (CUDA_PATH, conda prefix, /usr/local/cuda), in priority order;
  // "{triple}" stands for SystemLayout::target_triple.
  // The first ones are cuda-pathfinder's anchors; later ones are searched for candidates only.
  std::vector<std::string_view> toolkit_dirs = {};
  // How many leading entries of toolkit_dirs cuda-pathfinder itself searches.
  std::size_t pathfinder_toolkit_dirs = 0;
  // Where a static or bitcode library lives under $CONDA_PREFIX when that differs from toolkit_dirs'
  // anchors (cudadevrt: lib only); empty: the pathfinder anchors of toolkit_dirs.
  std::vector<std::string_view> conda_dirs = {};
  // Product-root variables cuda-pathfinder honours before CUDA_PATH (CUDNN_PATH, NCCL_HOME) and their
  // sub-dirs.
  std::vector<std::string_view> product_root_vars = {};
  std::vector<std::string_view> product_root_dirs = {};
  // Version sources that apply: wheel distributions (cu13 name first), conda package names and
  // toolkit version.json keys.
  std::vector<std::string_view> wheel_distributions = {};
  std::vector<std::string_view> conda_packages = {};
  std::vector<std::string_view> toolkit_json_keys = {};
  // cuda-pathfinder's last resort: derive a toolkit root from where the loader finds cudart.
  bool uses_ctk_root_canary = false;
  // Headers: cuda-pathfinder anchors a toolkit header set in conda at the single
  // $CONDA_PREFIX/targets/*/ directory; others (cuDNN, NCCL, ...) at $CONDA_PREFIX itself.
  bool conda_targets_layout = true;
  // Headers: the system include directories cuda-pathfinder searches last ("supported_install_dir"),
  // in order; "{multiarch}" stands for SystemLayout::multiarch, a trailing "*" is a glob whose
  // matches are taken newest version first (/usr/include/nvshmem_*).
  std::vector<std::string_view> system_include_dirs = {};
  // Libraries: what cuda-pathfinder loads first (a missing or failing one fails this library too)
  // and what it loads first when it can (a missing one is passed over).
  std::vector<std::string_view> dependencies = {};
  std::vector<std::string_view> optional_dependencies = {};
  // Libraries: the libraries that must come from one release share a group name here (cuBLAS and
  // cuBLASLt, cuFFT and cuFFTW, NPP's libraries, cuSOLVER and cuSOLVERMg, cuDNN 9 and its
  // sub-libraries, cuDNN 8 and its); "" for none. Two members of different versions bound in one
  // closure are one lib.release_mismatch.
  std::string_view release_group = {};
  // Headers: the version macros, when the header set has them.
  std::optional<VersionMacros> version_macros = std::nullopt;
  // Verification loads it in a worker with this probe; nullopt: it is found, never loaded.
  std::optional<VerifyWith> verify = std::nullopt;
  Importance importance = Importance::other;
};

// Every component, libraries first, then headers, binaries, static and bitcode libraries: the 101
// names cuda-pathfinder 1.9.1 knows on Linux (50 libraries, 31 header sets, 16 binaries, 1 static
// and 3 bitcode libraries), then the libraries it does not know (cuda_python false), which only the
// loader and the frameworks answer. Each library's file_names end with its older_sonames.
const std::vector<ComponentSpec>& catalog();

// Whether CUDA Python (cuda-pathfinder 1.9.1) looks for `file_name` as `spec`: a name it knows and
// one of the file names it declares (not an older SONAME). A file found under any other name is
// "not supported by CUDA Python": its `selected` answer never takes it.
bool cuda_python_declares(const ComponentSpec& spec, std::string_view file_name);

// The component named `name` of `kind`, or, with no kind, the one a bare name means: a library
// before a binary before a header set ("cudart" the library, "nvcc" the compiler, not its headers),
// then static and bitcode libraries. nullptr if unknown.
const ComponentSpec* find_component(std::string_view name, std::optional<ComponentKind> kind = std::nullopt);

// The components `text` names, in catalog order: "KIND/NAME" (KIND as kind_from_string reads it:
// "headers/cudart", "static/cudadevrt", "bitcode/device", "binary/nvcc") names one; a bare name
// names every component of that name. Empty when nothing matches.
std::vector<const ComponentSpec*> components_named(std::string_view text);

// The known name closest to `name` (case-insensitive edit distance, at most a third of the
// name's length; an exact match ignoring case first): "nvjitlink" -> "nvJitLink", "cudrt" ->
// "cudart". nullopt when nothing is that close.
std::optional<std::string_view> closest_name(std::string_view name);

} // namespace cudadiag::probes
